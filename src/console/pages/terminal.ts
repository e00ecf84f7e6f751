// The POS terminal's routes (docs/console.md#pos-terminal; contract §13), for cashiers and owners: the keypad and
// its charge, the QR screen with its status long poll and its cancel, and today's QRs. Every QR is the
// session's merchant's; another merchant's is not found (404), never forbidden. The console guard has
// checked the session, the role and the CSRF field of every post before any handler here runs.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../kernel/errors.ts';
import type { App } from '../../kernel/routes.ts';
import { StrictObject } from '../../kernel/schemas.ts';
import * as terminal from '../terminal.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { foundOrNull, type ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { newChargeKey, readCharge, type ChargeField, type ChargeFormValues } from './terminal-form.ts';
import type { FormErrors } from './forms.ts';
import { renderKeypadPage } from './terminal-keypad-view.ts';
import { renderQrScreen } from './terminal-qr-view.ts';
import { renderTodayPage } from './terminal-today-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const QrParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const StatusQuery = StrictObject({ wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })) });
/** Headers of the status answers (JSON read by the QR screen's script only). */
const STATUS_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };

/** The refusals of a charge the cashier can act on, as the keypad's alert; any other error is the service's failure. */
const CHARGE_ALERTS = {
  IDEMPOTENCY_KEY_REUSED: 'console.terminal.error.key_reused',
  MERCHANT_SUSPENDED: 'console.terminal.error.suspended',
  RAIL_REFUSED: 'console.terminal.error.rail',
  RAIL_UNAVAILABLE: 'console.terminal.error.rail',
} as const;

export function terminalRoutes(app: App, kit: ConsoleKit): void {
  const context = kit.context;

  const keypad = (request: FastifyRequest, reply: FastifyReply, status: number, form: { values: ChargeFormValues; errors: FormErrors<ChargeField>; alert?: string }) =>
    kit.send(request, reply, status, (locale, nonce) => renderKeypadPage({ locale, nonce, session: sessionOf(request), csrf: csrfOf(request), ...form }), '/console/terminal');

  const notFoundPage = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.terminal.not_found.title', 'console.terminal.not_found.text', { href: '/console/terminal', label: 'console.terminal.new_charge' }, 'not-found'), null);

  /** `work`, with the 404 of a QR that is not the merchant's as the console's not-found page. */
  const orNotFound = async (request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>) =>
    (await foundOrNull(work)) ?? notFoundPage(request, reply);

  app.get('/console/terminal', { schema: { ...hidden, summary: 'Console: the terminal\'s keypad (HTML)' }, config: kit.route('cashier') }, (request, reply) =>
    keypad(request, reply, 200, { values: { amount: '', description: '', key: newChargeKey() }, errors: {} }));

  app.post('/console/terminal', { schema: { ...hidden, summary: 'Console: charge an amount (makes a single-use QR, +5m)' }, config: kit.route('cashier') }, async (request, reply) => {
    const session = sessionOf(request);
    const locale = kit.localeOf(request);
    const form = readCharge(request.body, locale, session.businessCode);
    // A refused form comes back with a new key: what is sent next is a new charge.
    if ('errors' in form) return keypad(request, reply, 422, { values: { ...form.values, key: newChargeKey() }, errors: form.errors });
    let qrId: string;
    try {
      qrId = await terminal.chargeAtTerminal(context, session.businessCode, form.charge);
    } catch (error) {
      const alert = error instanceof ApiError && error.code in CHARGE_ALERTS ? CHARGE_ALERTS[error.code as keyof typeof CHARGE_ALERTS] : null;
      if (!alert) throw error;
      return keypad(request, reply, (error as ApiError).status, { values: { ...form.values, key: newChargeKey() }, errors: {}, alert: locale.t(alert) });
    }
    return kit.redirect(request, reply, `/console/terminal/qrs/${qrId}`);
  });

  app.get('/console/terminal/today', { schema: { ...hidden, summary: 'Console: today\'s QRs (HTML)' }, config: kit.route('cashier') }, async (request, reply) => {
    const session = sessionOf(request);
    const { qrs, now, more } = await terminal.todaysQrs(context, session.businessCode);
    return kit.send(request, reply, 200, (locale, nonce) => renderTodayPage({ locale, nonce, session, csrf: csrfOf(request), qrs, now, more, limit: terminal.TODAY_LIMIT }));
  });

  app.get('/console/terminal/qrs/:id', { schema: { ...hidden, params: QrParams, summary: 'Console: a QR on the terminal\'s screen (HTML)' }, config: kit.route('cashier') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      const found = await terminal.terminalQrOf(context, sessionOf(request).businessCode, request.params.id);
      const now = context.clock.now();
      return kit.send(request, reply, 200, (locale, nonce) => renderQrScreen({ locale, nonce, csrf: csrfOf(request), found, merchantName: sessionOf(request).merchantName, status: terminal.terminalStatusOf(found, now), now }));
    }));

  app.get('/console/terminal/qrs/:id/status', {
    schema: { ...hidden, params: QrParams, querystring: StatusQuery, summary: 'Console: a QR\'s status for the terminal (JSON; ETag, ?wait=N long poll)' },
    // Not a hosted page: its errors (404 for another merchant's QR) are JSON, read by the screen's script.
    config: { consoleAccess: 'cashier' },
  }, async (request, reply) => {
    const ifNoneMatch = request.headers['if-none-match'];
    const status = await terminal.waitForTerminalStatus(context, sessionOf(request).businessCode, request.params.id, ifNoneMatch, request.query.wait);
    const etag = terminal.terminalStatusTag(status);
    reply.headers(STATUS_HEADERS).header('etag', etag);
    if (ifNoneMatch === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(status);
  });

  app.post('/console/terminal/qrs/:id/cancel', { schema: { ...hidden, params: QrParams, summary: 'Console: cancel a QR on the terminal' }, config: kit.route('cashier') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      const canceled = await terminal.cancelTerminalQr(context, sessionOf(request).businessCode, request.params.id);
      // Paid (or closed) before the cancel arrived: its screen says so, and the sale is not lost from sight.
      return kit.redirect(request, reply, canceled ? '/console/terminal' : `/console/terminal/qrs/${request.params.id.toLowerCase()}`);
    }));
}
