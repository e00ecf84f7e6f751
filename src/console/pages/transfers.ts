// The owner's transfer routes (docs/console.md#transfers; contract §13, §15): the list with the payout schedule,
// a transfer and its cancel, and a new transfer — form, confirmation, then the API's own create with the
// form's idempotency key, so a double submit of Confirm makes one transfer. Every transfer is the session's
// merchant's; another merchant's is not found (404), never forbidden. The guard has checked the session,
// the role and the CSRF field of every post before any handler here runs.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../kernel/routes.ts';
import { PositiveId } from '../../kernel/schemas.ts';
import { configuredBanks } from '../../transfers/banks.ts';
import { TRANSFER_STATUSES, type TransferStatus } from '../../transfers/schemas.ts';
import * as money from '../money.ts';
import type { FormErrors } from './forms.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { foundOrNull, type ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { consolePageRequest, ConsolePageQuery } from './lists.ts';
import { switchPathOf } from './movements.ts';
import { statusText } from './movements-view.ts';
import { newTransferForm, readTransfer, type TransferField, type TransferFormValues } from './transfers-form.ts';
import { renderConfirmPage, renderTransferForm, renderTransferPage, renderTransfersPage } from './transfers-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const TransfersQuery = Type.Object({ ...ConsolePageQuery, status: Type.Optional(Type.Union([Type.Literal(''), ...TRANSFER_STATUSES.map((status) => Type.Literal(status))])) });
const TransferParams = Type.Object({ id: PositiveId() });

/** The refusals of a confirmed transfer the owner can act on, as the form's alert. */
const TRANSFER_ALERTS = {
  INSUFFICIENT_FUNDS: { status: 400, text: 'console.transfers.error.insufficient_funds' },
  MERCHANT_SUSPENDED: { status: 403, text: 'console.transfers.error.suspended' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, text: 'console.transfers.error.key_reused' },
} as const;

export function transferRoutes(app: App, kit: ConsoleKit): void {
  const context = kit.context;
  const banks = configuredBanks(context.config);

  const notFoundPage = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.transfers.not_found.title', 'console.transfers.not_found.text', { href: '/console/transfers', label: 'console.transfers.back' }, 'not-found'), null);

  /** The ACH module off, or the business suspended: the page says so (403) and offers nothing to submit. */
  const refusedPage = (request: FastifyRequest, reply: FastifyReply, why: 'MODULE_NOT_ENABLED' | 'MERCHANT_SUSPENDED') =>
    kit.send(request, reply, 403, (locale, nonce) => why === 'MODULE_NOT_ENABLED'
      ? consoleNotice(locale, nonce, 'console.transfers.no_module.title', 'console.transfers.no_module.text', { href: '/console/transfers', label: 'console.transfers.back' }, 'module-not-enabled')
      : consoleNotice(locale, nonce, 'console.transfers.suspended.title', 'console.transfers.error.suspended', { href: '/console/transfers', label: 'console.transfers.back' }, 'suspended'), '/console/transfers/new');

  const form = async (request: FastifyRequest, reply: FastifyReply, status: number, values: TransferFormValues, errors: FormErrors<TransferField>, alert?: string) => {
    const session = sessionOf(request);
    const feeCentavos = await money.transferFeeNow(context, session.businessCode);
    return kit.send(request, reply, status, (locale, nonce) => renderTransferForm({ locale, nonce, session, csrf: csrfOf(request), banks, values, errors, alert, feeCentavos }), '/console/transfers/new');
  };

  /** `work`, with the 404 of a transfer that is not the merchant's as the console's not-found page. */
  const orNotFound = async (request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>) =>
    (await foundOrNull(work)) ?? notFoundPage(request, reply);

  app.get('/console/transfers', { schema: { ...hidden, querystring: TransfersQuery, summary: 'Console: the business\'s transfers and payout schedule (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const status = request.query.status === undefined || request.query.status === '' ? null : request.query.status as TransferStatus;
    const pageRequest = consolePageRequest(request.query);
    const [page, payouts, standing] = await Promise.all([
      money.transfersOf(context, session.businessCode, status, pageRequest),
      money.payoutScheduleOf(context, session.businessCode),
      money.transferStanding(context, session.businessCode),
    ]);
    return kit.send(request, reply, 200, (locale, nonce) => renderTransfersPage({
      locale, nonce, session, csrf: csrfOf(request), banks, page, status: status ?? '', request: pageRequest, payouts, refusal: standing === 'ok' ? null : standing,
    }), switchPathOf('/console/transfers', { status: status ?? '', page: request.query.page }));
  });

  app.get('/console/transfers/new', { schema: { ...hidden, summary: 'Console: a new transfer\'s form (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const standing = await money.transferStanding(context, sessionOf(request).businessCode);
    if (standing !== 'ok') return refusedPage(request, reply, standing);
    return form(request, reply, 200, newTransferForm(), {});
  });

  // The form posted: checked by the API's schema; refused fields come back (422), else the confirmation.
  app.post('/console/transfers/new', { schema: { ...hidden, summary: 'Console: review a new transfer before confirming it' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const standing = await money.transferStanding(context, session.businessCode);
    if (standing !== 'ok') return refusedPage(request, reply, standing);
    const locale = kit.localeOf(request);
    const read = readTransfer(request.body, locale, banks, session.businessCode);
    if ('errors' in read) return form(request, reply, 422, { ...read.values, key: read.errors._form ? newTransferForm().key : read.values.key }, read.errors);
    if ((request.body as Record<string, unknown>).edit === '1') return form(request, reply, 200, read.values, {});
    const feeCentavos = await money.transferFeeNow(context, session.businessCode);
    return kit.send(request, reply, 200, (locale, nonce) => renderConfirmPage({
      locale, nonce, session, csrf: csrfOf(request), banks, values: read.values, amountCentavos: read.transfer.amountCentavos, feeCentavos,
    }), null);
  });

  // Confirm: the API's create, once per form key; then the transfer's page.
  app.post('/console/transfers', { schema: { ...hidden, summary: 'Console: make a confirmed transfer' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const locale = kit.localeOf(request);
    const read = readTransfer(request.body, locale, banks, session.businessCode);
    if ('errors' in read) return form(request, reply, 422, { ...read.values, key: newTransferForm().key }, read.errors);
    const outcome = await money.makeTransfer(context, session.businessCode, read.transfer.body, read.transfer.key);
    if ('made' in outcome) return kit.redirect(request, reply, `/console/transfers/${outcome.made.id}`);
    if (outcome.refused === 'MODULE_NOT_ENABLED') return refusedPage(request, reply, 'MODULE_NOT_ENABLED');
    const alert = TRANSFER_ALERTS[outcome.refused];
    // The form again with what was typed and a new key: what is sent next is a new transfer.
    return form(request, reply, alert.status, { ...read.values, key: newTransferForm().key }, {}, locale.t(alert.text));
  });

  app.get('/console/transfers/:id', { schema: { ...hidden, params: TransferParams, summary: 'Console: a transfer (HTML)' }, config: kit.route('owner') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      const session = sessionOf(request);
      const transfer = await money.transferOf(context, session.businessCode, request.params.id);
      return kit.send(request, reply, 200, (locale, nonce) => renderTransferPage({ locale, nonce, session, csrf: csrfOf(request), banks, transfer }));
    }));

  app.post('/console/transfers/:id/cancel', { schema: { ...hidden, params: TransferParams, summary: 'Console: cancel a PENDING transfer' }, config: kit.route('owner') }, (request, reply) =>
    orNotFound(request, reply, async () => {
      const session = sessionOf(request);
      if (await money.cancelConsoleTransfer(context, session.businessCode, request.params.id)) return kit.redirect(request, reply, `/console/transfers/${request.params.id}`);
      // No longer PENDING (the bank took it, or it ended): its page says why, with nothing changed.
      const transfer = await money.transferOf(context, session.businessCode, request.params.id);
      return kit.send(request, reply, 409, (locale, nonce) => renderTransferPage({
        locale, nonce, session, csrf: csrfOf(request), banks, transfer,
        alert: locale.t('console.transfers.error.not_cancelable', { status: statusText(locale, transfer.status) }),
      }), `/console/transfers/${transfer.id}`);
    }));
}
