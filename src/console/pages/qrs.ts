// The owner's QR pages (docs/console.md#qrs-payments-and-refunds; contract §13 "Owner: QRs (list, filters, cancel)"): the merchant's
// QRs as the API's list gives them (qr/service.ts listQrsOfMerchant: newest first, by effective status and
// external reference), one QR with its payments, and its cancel — the API's own (terminal.ts cancelTerminalQr
// → qr/service.ts cancelQr: its event, the bank's cancel). Every read and write is the session's merchant's;
// another merchant's QR is not found (404).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { App } from '../../kernel/routes.ts';
import { StringEnum } from '../../kernel/schemas.ts';
import { ExternalReference, QR_STATUSES } from '../../qr/schemas.ts';
import * as qrs from '../../qr/service.ts';
import { qrUrlOf } from '../../qr/views.ts';
import { cancelTerminalQr } from '../terminal.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { foundOrNull, type ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { ConsolePageQuery, consolePageRequest } from './lists.ts';
import { renderQrPage, renderQrsPage } from './qrs-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const QrParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
/** The list's filters as its GET form sends them: '' is "all" (a select's first option, an empty box). */
const QrListQuery = Type.Object({
  ...ConsolePageQuery,
  status: Type.Optional(Type.Union([StringEnum(QR_STATUSES), Type.Literal('')])),
  external_reference: Type.Optional(Type.Union([ExternalReference, Type.Literal('')])),
});
const QrPageQuery = Type.Object({ ...ConsolePageQuery });

export function qrRoutes(app: App, kit: ConsoleKit): void {
  const { context } = kit;
  const { db, config, clock } = context;

  const notFoundPage = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.terminal.not_found.title', 'console.terminal.not_found.text', { href: '/console/qrs', label: 'console.qr.back' }, 'not-found'), null);

  const qrPage = async (request: FastifyRequest, reply: FastifyReply, id: string, page: number | undefined, status: number, alert?: (locale: Locale) => string) => {
    const session = sessionOf(request);
    const found = await foundOrNull(() => qrs.getQrOfMerchant(db, session.businessCode, id));
    if (!found) return notFoundPage(request, reply);
    const pageRequest = consolePageRequest({ page });
    const payments = await qrs.listPaymentsOfQr(db, session.businessCode, found.qr.id, pageRequest);
    const now = clock.now();
    return kit.send(request, reply, status, (locale, nonce) => renderQrPage({
      locale, nonce, session, csrf: csrfOf(request), found, payLink: qrUrlOf(config, found.qr.pay_token), payments, request: pageRequest, now, alert: alert?.(locale),
    }), status === 200 ? `/console/qrs/${found.qr.id}` : null);
  };

  app.get('/console/qrs', { schema: { ...hidden, querystring: QrListQuery, summary: 'Console: the merchant\'s QRs (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const filter = { status: request.query.status ?? '', externalReference: request.query.external_reference ?? '' };
    const pageRequest = consolePageRequest(request.query);
    const now = clock.now();
    const page = await qrs.listQrsOfMerchant(db, session.businessCode, { status: filter.status || null, externalReference: filter.externalReference || null }, now, pageRequest);
    return kit.send(request, reply, 200, (locale, nonce) => renderQrsPage({ locale, nonce, session, csrf: csrfOf(request), filter, request: pageRequest, page, now }));
  });

  app.get('/console/qrs/:id', { schema: { ...hidden, params: QrParams, querystring: QrPageQuery, summary: 'Console: a QR and its payments (HTML)' }, config: kit.route('owner') }, (request, reply) =>
    qrPage(request, reply, request.params.id, request.query.page, 200));

  app.post('/console/qrs/:id/cancel', { schema: { ...hidden, params: QrParams, summary: 'Console: cancel an ACTIVE QR' }, config: kit.route('owner') }, async (request, reply) => {
    const canceled = await foundOrNull(() => cancelTerminalQr(context, sessionOf(request).businessCode, request.params.id));
    if (canceled === null) return notFoundPage(request, reply);
    // Paid (or closed) before the cancel arrived: its page says so, and nothing changed.
    if (!canceled) return qrPage(request, reply, request.params.id, undefined, 409, (locale) => locale.t('console.qr.not_cancelable'));
    return kit.redirect(request, reply, `/console/qrs/${request.params.id.toLowerCase()}`);
  });
}
