// The owner's payments and refunds pages (docs/console.md#qrs-payments-and-refunds; contract §13 "payments and
// refunds (refund from a payment's page)"): every payment of the merchant with its fee and net (qr/service.ts
// listPaymentsOfMerchant), one payment with its refunds and the refund form, the confirmation step, and the
// merchant's refunds (refunds/service.ts listRefunds). A refund is the API's own create (console/refunds.ts),
// under the idempotency key minted into the form: a double submit of the confirmation makes one refund.
// Every read and write is the session's merchant's; another merchant's payment is not found (404).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../kernel/errors.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { App } from '../../kernel/routes.ts';
import { PositiveId, StringEnum } from '../../kernel/schemas.ts';
import * as qrs from '../../qr/service.ts';
import { REFUND_STATUSES } from '../../refunds/schemas.ts';
import * as refunds from '../../refunds/service.ts';
import { refundFromConsole } from '../refunds.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { foundOrNull, type ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { ConsolePageQuery, consolePageRequest } from './lists.ts';
import { renderPaymentPage, renderPaymentsPage, renderRefundConfirmPage, renderRefundsPage, type RefundForm, type Refundable } from './payments-view.ts';
import { freshRefundForm, leftToRefund, newRefundKey, readRefund } from './refund-form.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const PaymentParams = Type.Object({ id: PositiveId() });
const PaymentsQuery = Type.Object({ ...ConsolePageQuery });
/** The refunds list's filter as its GET form sends it: '' is "all". */
const RefundsQuery = Type.Object({ ...ConsolePageQuery, status: Type.Optional(Type.Union([StringEnum(REFUND_STATUSES), Type.Literal('')])) });
/** A payment's page lists this many of its refunds (a payment is seldom refunded more than a few times). */
const REFUNDS_SHOWN = 100;

/** The refusals of a refund the owner reads as the form's alert; REFUND_EXCEEDS_PAYMENT is the amount's error. */
const REFUND_ALERTS = {
  REFUND_WINDOW_CLOSED: 'console.refund.error.window',
  INSUFFICIENT_FUNDS: 'console.refund.error.funds',
  MERCHANT_SUSPENDED: 'console.refund.error.suspended',
  IDEMPOTENCY_KEY_REUSED: 'console.refund.error.key_reused',
  IDEMPOTENCY_KEY_IN_USE: 'console.refund.error.busy',
  RAIL_REFUSED: 'console.refund.error.rail',
  RAIL_UNAVAILABLE: 'console.refund.error.rail',
} as const;

export function paymentRoutes(app: App, kit: ConsoleKit): void {
  const { context } = kit;
  const { db, config, clock } = context;

  const notFoundPage = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.payment.not_found.title', 'console.payment.not_found.text', { href: '/console/payments', label: 'console.payment.back' }, 'not-found'), null);

  /** The merchant's payment, or null (its 404 page sent) for an unknown or another merchant's one. */
  const paymentOf = (request: FastifyRequest, id: number): Promise<qrs.PaymentRow | null> =>
    foundOrNull(() => qrs.getPaymentOfMerchant(db, sessionOf(request).businessCode, id));

  const refundableOf = (payment: qrs.PaymentRow): Refundable => {
    if (leftToRefund(payment) <= 0) return 'nothing_left';
    return payment.paid_at.getTime() + config.refundWindowMs <= clock.now().getTime() ? 'window_closed' : 'open';
  };

  /** A payment's page: its facts, its refunds and the refund form (`form` as sent when it was refused). */
  const paymentPage = async (request: FastifyRequest, reply: FastifyReply, payment: qrs.PaymentRow, status: number, form?: (locale: Locale) => RefundForm) => {
    const session = sessionOf(request);
    const list = await refunds.listRefunds(db, { businessCode: session.businessCode, paymentId: payment.id, status: null }, { page: 1, perPage: REFUNDS_SHOWN });
    return kit.send(request, reply, status, (locale, nonce) => renderPaymentPage({
      locale, nonce, session, csrf: csrfOf(request), payment, refunds: list.items, refundable: refundableOf(payment),
      form: form?.(locale) ?? { values: freshRefundForm(locale, payment), errors: {} },
    }), status === 200 ? `/console/payments/${payment.id}` : null);
  };

  app.get('/console/payments', { schema: { ...hidden, querystring: PaymentsQuery, summary: 'Console: the merchant\'s payments (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const pageRequest = consolePageRequest(request.query);
    const page = await qrs.listPaymentsOfMerchant(db, session.businessCode, pageRequest);
    return kit.send(request, reply, 200, (locale, nonce) => renderPaymentsPage({ locale, nonce, session, csrf: csrfOf(request), request: pageRequest, page }));
  });

  app.get('/console/payments/:id', { schema: { ...hidden, params: PaymentParams, summary: 'Console: a payment, its refunds and the refund form (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const payment = await paymentOf(request, request.params.id);
    return payment ? paymentPage(request, reply, payment, 200) : notFoundPage(request, reply);
  });

  // The refund form's first step: checked, then the question "Refund Bs X to <payer>?" — nothing is made yet.
  app.post('/console/payments/:id/refund', { schema: { ...hidden, params: PaymentParams, summary: 'Console: review a refund before it is made' }, config: kit.route('owner') }, async (request, reply) => {
    const payment = await paymentOf(request, request.params.id);
    if (!payment) return notFoundPage(request, reply);
    const locale = kit.localeOf(request);
    const form = readRefund(request.body, locale, payment);
    if ('errors' in form) return paymentPage(request, reply, payment, 422, () => ({ values: { ...form.values, key: newRefundKey() }, errors: form.errors }));
    return kit.send(request, reply, 200, (locale, nonce) => renderRefundConfirmPage({
      locale, nonce, session: sessionOf(request), csrf: csrfOf(request), payment, values: form.values, amountCentavos: form.refund.amountCentavos,
    }), null);
  });

  // The confirmation: Back returns to the form as typed (nothing made); Confirm makes the refund, once per form.
  app.post('/console/payments/:id/refund/confirm', { schema: { ...hidden, params: PaymentParams, summary: 'Console: refund a payment (all or part of what is left)' }, config: kit.route('owner') }, async (request, reply) => {
    const payment = await paymentOf(request, request.params.id);
    if (!payment) return notFoundPage(request, reply);
    const locale = kit.localeOf(request);
    // Not checked against what is left here: the API's create decides, after it replays a refund this form
    // made already (a second submit of the same confirmation finds less left, yet it is the same refund).
    const form = readRefund(request.body, locale, payment, { againstLeft: false });
    const step = (request.body as Record<string, unknown> | null | undefined)?.step;
    if (step === 'back') return paymentPage(request, reply, payment, 200, () => ({ values: form.values, errors: {} }));
    // A refused form comes back with a new key: what is sent next is a new refund.
    if ('errors' in form) return paymentPage(request, reply, payment, 422, () => ({ values: { ...form.values, key: newRefundKey() }, errors: form.errors }));
    try {
      await refundFromConsole(context, sessionOf(request).businessCode, form.refund.body, form.refund.key);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const now = await paymentOf(request, payment.id);
      if (!now) return notFoundPage(request, reply);
      const values = { ...form.values, key: newRefundKey() };
      if (error.code === 'REFUND_EXCEEDS_PAYMENT') {
        return paymentPage(request, reply, now, 409, (locale) => ({ values, errors: { amount: locale.t('console.refund.error.exceeds', { left: locale.money(leftToRefund(now)) }) } }));
      }
      const alert = error.code in REFUND_ALERTS ? REFUND_ALERTS[error.code as keyof typeof REFUND_ALERTS] : null;
      if (!alert) throw error;
      return paymentPage(request, reply, now, error.status, (locale) => ({ values, errors: {}, alert: locale.t(alert) }));
    }
    return kit.redirect(request, reply, `/console/payments/${payment.id}`);
  });

  app.get('/console/refunds', { schema: { ...hidden, querystring: RefundsQuery, summary: 'Console: the merchant\'s refunds (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const status = request.query.status ?? '';
    const pageRequest = consolePageRequest(request.query);
    const page = await refunds.listRefunds(db, { businessCode: session.businessCode, paymentId: null, status: status || null }, pageRequest);
    return kit.send(request, reply, 200, (locale, nonce) => renderRefundsPage({ locale, nonce, session, csrf: csrfOf(request), status, request: pageRequest, page }));
  });
}
