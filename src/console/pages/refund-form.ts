// The refund form of a payment's page (docs/console.md#qrs-payments-and-refunds), checked on the server by the API's
// own schema of a refund (refunds/schemas.ts CreateRefundBody: 0.01 up to 100000.00, two decimals at most, a
// reason of the API's, a note of 140 characters) and against what is left to refund of the payment. The form
// only chooses the words an owner reads; the API's create decides (console/refunds.ts).
import { randomUUID } from 'node:crypto';
import { formErrorsOf, type FormErrors } from '../../kernel/forms.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { compileBodyCheck } from '../../kernel/validation.ts';
import { isUuidV4 } from '../../idempotency/service.ts';
import { parseAmount } from '../../money.ts';
import type { PaymentRow } from '../../qr/service.ts';
import { CreateRefundBody, MAX_REFUND_CENTAVOS, MIN_REFUND_CENTAVOS, REQUESTED_REASONS } from '../../refunds/schemas.ts';

export type RefundField = 'amount' | 'reason' | 'description';

const checkRefundBody = compileBodyCheck(CreateRefundBody);

/** A fresh idempotency key for a refund form: one per form, so a second submit of it makes no second refund. */
export function newRefundKey(): string {
  return randomUUID();
}

export interface RefundFormValues {
  amount: string;
  reason: string;
  description: string;
  key: string;
}

/** What is left to refund of a payment, in centavos. */
export function leftToRefund(payment: PaymentRow): number {
  return payment.amount_centavos - payment.amount_refunded_centavos;
}

/** The form as a payment's page first shows it: all that is left, the customer's request, no note, a new key. */
export function freshRefundForm(locale: Locale, payment: PaymentRow): RefundFormValues {
  return { amount: locale.amountInput(leftToRefund(payment)), reason: 'requested_by_customer', description: '', key: newRefundKey() };
}

/** A posted field as text ('' when missing). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

export interface CheckedRefund {
  body: CreateRefundBody;
  amountCentavos: number;
  key: string;
}

/**
 * The refund as typed: `12.5` as the API writes it, or `12,50` / `1.234,50` as people write it in the
 * page's language; checked as the API checks it, then (unless `againstLeft` is false) against what is left
 * of the payment.
 */
export function readRefund(body: unknown, locale: Locale, payment: PaymentRow, { againstLeft = true } = {}): { values: RefundFormValues } & ({ refund: CheckedRefund } | { errors: FormErrors<RefundField> }) {
  const values = {
    amount: field(body, 'amount').trim(),
    reason: field(body, 'reason').trim(),
    description: field(body, 'description').trim(),
    key: field(body, 'idempotency_key').trim().toLowerCase(),
  };
  const amount = /^\d+(\.\d+)?$/.test(values.amount) ? values.amount : locale.readAmount(values.amount);
  const request: CreateRefundBody = {
    payment_id: payment.id,
    amount,
    reason: values.reason as CreateRefundBody['reason'],
    ...(values.description === '' ? {} : { description: values.description }),
  };
  const bounds = { min: locale.money(MIN_REFUND_CENTAVOS), max: locale.money(Math.min(MAX_REFUND_CENTAVOS, Math.max(leftToRefund(payment), MIN_REFUND_CENTAVOS))) };
  const problems = checkRefundBody(request).filter((problem) => problem.field === 'amount' || problem.field === 'reason' || problem.field === 'description');
  const errors = formErrorsOf(problems, values as Record<RefundField, string>, locale, (name) => name === 'amount'
    ? locale.t('console.refund.error.amount', bounds)
    : name === 'reason' ? locale.t('console.refund.error.reason') : locale.t('console.refund.error.description', { max: 140 }));
  const parsed = parseAmount(amount, { min: MIN_REFUND_CENTAVOS, max: MAX_REFUND_CENTAVOS });
  if (againstLeft && !errors.amount && parsed.ok && parsed.centavos > leftToRefund(payment)) {
    errors.amount = locale.t('console.refund.error.exceeds', { left: locale.money(leftToRefund(payment)) });
  }
  // A form without its key (or with one altered) is not sent again blindly: the page comes back with a new key.
  if (!isUuidV4(values.key)) errors._form = locale.t('console.refund.error.form_key');
  if (Object.keys(errors).length > 0 || !parsed.ok) return { values, errors };
  return { values, refund: { body: request, amountCentavos: parsed.centavos, key: values.key } };
}

/** The reasons an owner may give, in the API's order (qr_not_payable is the service's own). */
export const REFUND_REASON_CHOICES = REQUESTED_REASONS;
