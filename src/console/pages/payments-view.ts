// The owner's payments and refunds pages (docs/console.md#qrs-payments-and-refunds): every payment with its fee, net
// and what was given back; one payment's facts, its refunds and the refund form; the confirmation a refund
// needs ("Refund Bs X to <payer>?"); and the merchant's refunds. The payer is shown as the API shows them:
// the name and bank, the account number masked (masking.ts).
import { escapeHtml } from '../../kernel/html.ts';
import type { FormErrors } from '../../kernel/forms.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { Page, PageRequest } from '../../kernel/pagination.ts';
import type { PaymentRow } from '../../qr/service.ts';
import { MIN_REFUND_CENTAVOS, type RefundStatus } from '../../refunds/schemas.ts';
import type { RefundRow } from '../../refunds/service.ts';
import type { ConsoleSession } from '../../users/service.ts';
import { consolePage, csrfField, formAlert, inputField } from './layout.ts';
import { facts, filterForm, moneyText, pager, selectField } from './lists.ts';
import { leftToRefund, REFUND_REASON_CHOICES, type RefundField, type RefundFormValues } from './refund-form.ts';

/** Who paid, as the API shows them: name · bank · account masked. */
export function payerText(payment: Pick<PaymentRow, 'account_titular' | 'source_bank' | 'account_number'>): string {
  return `${payment.account_titular} · ${payment.source_bank} · ${payment.account_number.masked}`;
}

/** Who gets a refund, short: the name and the masked account (the confirmation's question). */
function payerShort(payment: Pick<PaymentRow, 'account_titular' | 'account_number'>): string {
  return `${payment.account_titular} (${payment.account_number.masked})`;
}

function figures(locale: Locale, payment: PaymentRow): string {
  return locale.t('console.payments.figures', {
    fee: moneyText(locale, payment.fee_centavos),
    net: moneyText(locale, payment.amount_centavos - payment.fee_centavos),
    refunded: moneyText(locale, payment.amount_refunded_centavos),
  });
}

/** A payment in a list (the payments page, a QR's payments). */
export function paymentRow(locale: Locale, payment: PaymentRow, { qrLink }: { qrLink: boolean }): string {
  const amount = moneyText(locale, payment.amount_centavos);
  const when = locale.dateTime(payment.paid_at);
  const qr = qrLink
    ? `<a href="${escapeHtml(locale.href(`/console/qrs/${payment.qr_id}`))}" aria-label="${escapeHtml(locale.t('console.payments.qr_label', { amount, when }))}">${locale.html('console.payments.qr_link')}</a>`
    : '';
  return `<li class="row" data-payment="${payment.id}">
    <div class="what"><p><a href="${escapeHtml(locale.href(`/console/payments/${payment.id}`))}"><strong>${escapeHtml(amount)}</strong></a> · ${escapeHtml(when)}</p>
    <p class="hint" data-field="payer">${escapeHtml(payerText(payment))}</p>
    <p class="hint" data-field="figures">${escapeHtml(figures(locale, payment))}</p></div>
    ${qr}
  </li>`;
}

export interface PaymentsPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  request: PageRequest;
  page: Page<PaymentRow>;
}

export function renderPaymentsPage({ locale, nonce, session, csrf, request, page }: PaymentsPage): string {
  const list = page.items.length === 0
    ? `<p class="muted" id="payments-empty">${locale.html('console.payments.empty')}</p>`
    : `<ul class="rows" id="payments">
  ${page.items.map((payment) => paymentRow(locale, payment, { qrLink: true })).join('\n  ')}
  </ul>`;
  const body = `<section class="card" aria-labelledby="payments-heading">
  <h1 id="payments-heading">${locale.html('console.payments.title')}</h1>
  <p class="hint">${locale.html('console.payments.text')}</p>
  ${list}
  ${pager(locale, '/console/payments', {}, request, page)}
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.payments.title'), body, session: { session, csrf, current: '/console/payments' } });
}

/** Whether a payment's page offers its refund form, and why not. */
export type Refundable = 'open' | 'nothing_left' | 'window_closed';

export interface RefundForm {
  values: RefundFormValues;
  errors: FormErrors<RefundField>;
  alert?: string;
}

export interface PaymentPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  payment: PaymentRow;
  refunds: readonly RefundRow[];
  refundable: Refundable;
  form: RefundForm;
}

function refundStatusText(locale: Locale, status: RefundStatus): string {
  return locale.t(`console.refunds.status.${status}`);
}

function refundRow(locale: Locale, refund: RefundRow, { paymentLink }: { paymentLink: boolean }): string {
  const amount = moneyText(locale, refund.amount_centavos);
  const link = paymentLink
    ? `<a href="${escapeHtml(locale.href(`/console/payments/${refund.payment_id}`))}" aria-label="${escapeHtml(locale.t('console.refunds.payment_label', { amount, when: locale.dateTime(refund.created_at) }))}">${locale.html('console.refunds.payment_link')}</a>`
    : '';
  return `<li class="row" data-refund="${escapeHtml(refund.id)}">
    <div class="what"><p><strong>${escapeHtml(amount)}</strong> · ${escapeHtml(locale.dateTime(refund.created_at))}</p>
    <p class="hint">${escapeHtml(locale.t('console.refunds.to', { payer: payerShort(refund) }))} · ${escapeHtml(locale.t(`console.refund.reason.${refund.reason}`))}${refund.description ? ` · ${escapeHtml(refund.description)}` : ''}</p></div>
    <p class="status" data-field="status" data-state="${refund.status}">${escapeHtml(refundStatusText(locale, refund.status))}</p>
    ${link}
  </li>`;
}

/** The refund form (its refusal of the whole form is the alert at the top of the page, seen on arrival). */
function refundFormSection(locale: Locale, payment: PaymentRow, csrf: string, refundable: Refundable, form: RefundForm): string {
  const left = leftToRefund(payment);
  if (refundable !== 'open') {
    return `<section class="card" aria-labelledby="refund-heading">
  <h2 id="refund-heading">${locale.html('console.refund.heading')}</h2>
  <p class="muted" id="refund-closed">${locale.html(refundable === 'nothing_left' ? 'console.refund.nothing_left' : 'console.refund.window_closed')}</p>
</section>`;
  }
  const { values, errors } = form;
  return `<section class="card" aria-labelledby="refund-heading">
  <h2 id="refund-heading">${locale.html('console.refund.heading')}</h2>
  <p class="hint">${locale.html('console.refund.text')}</p>
  ${formAlert(errors._form)}
  <form method="post" action="${escapeHtml(locale.href(`/console/payments/${payment.id}/refund`))}" novalidate id="refund-form">
  ${csrfField(csrf)}
  <input type="hidden" name="idempotency_key" value="${escapeHtml(values.key)}">
  ${inputField({
    name: 'amount', label: locale.t('console.refund.amount'), value: values.amount, error: errors.amount, autofocus: errors.amount !== undefined,
    attributes: 'type="text" inputmode="decimal" autocomplete="off" maxlength="16" required',
    hint: locale.t('console.refund.amount_hint', { min: locale.money(MIN_REFUND_CENTAVOS), max: locale.money(left) }),
  })}
  ${selectField({
    name: 'reason', label: locale.t('console.refund.reason'), value: values.reason,
    options: REFUND_REASON_CHOICES.map((reason) => ({ value: reason, label: locale.t(`console.refund.reason.${reason}`) })),
  })}
  ${errors.reason ? `<p class="error" id="f-reason-error">${escapeHtml(errors.reason)}</p>` : ''}
  ${inputField({
    name: 'description', label: locale.t('console.refund.description'), value: values.description, error: errors.description,
    attributes: 'type="text" autocomplete="off" maxlength="140"', hint: locale.t('console.refund.description_hint'),
  })}
  <button type="submit" id="refund-button">${locale.html('console.refund.submit')}</button>
  </form>
</section>`;
}

export function renderPaymentPage({ locale, nonce, session, csrf, payment, refunds, refundable, form }: PaymentPage): string {
  const amount = moneyText(locale, payment.amount_centavos);
  const list = refunds.length === 0
    ? `<p class="muted" id="payment-refunds-empty">${locale.html('console.payment.no_refunds')}</p>`
    : `<ul class="rows" id="payment-refunds">
  ${refunds.map((refund) => refundRow(locale, refund, { paymentLink: false })).join('\n  ')}
  </ul>`;
  const body = `<section class="card" aria-labelledby="payment-heading">
  <h1 id="payment-heading">${locale.html('console.payment.title', { amount })}</h1>
  ${formAlert(form.alert)}
  ${facts([
    [locale.t('console.payments.amount'), amount],
    [locale.t('console.payments.fee'), moneyText(locale, payment.fee_centavos)],
    [locale.t('console.payments.net'), moneyText(locale, payment.amount_centavos - payment.fee_centavos)],
    [locale.t('console.payments.refunded'), { html: `<span data-field="refunded">${escapeHtml(moneyText(locale, payment.amount_refunded_centavos))}</span>` }],
    [locale.t('console.payments.left'), { html: `<span data-field="left">${escapeHtml(moneyText(locale, leftToRefund(payment)))}</span>` }],
    [locale.t('console.payments.payer'), { html: `<span data-field="payer">${escapeHtml(payerText(payment))}</span>` }],
    [locale.t('console.payments.bank_reference'), payment.rail_reference],
    [locale.t('console.payments.paid_at'), locale.dateTime(payment.paid_at)],
    [locale.t('console.payments.qr'), { html: `<a href="${escapeHtml(locale.href(`/console/qrs/${payment.qr_id}`))}" data-field="qr">${locale.html('console.payments.qr_link')}</a>` }],
    [locale.t('console.payments.late'), payment.late ? locale.t('console.payments.late_text') : null],
  ], 'payment-facts')}
</section>
<section class="card" aria-labelledby="payment-refunds-heading">
  <h2 id="payment-refunds-heading">${locale.html('console.payment.refunds')}</h2>
  ${list}
</section>
${refundFormSection(locale, payment, csrf, refundable, form)}
<p><a class="button-link secondary" href="${escapeHtml(locale.href('/console/payments'))}">${locale.html('console.payment.back')}</a></p>`;
  return consolePage({ locale, nonce, title: locale.t('console.payment.title', { amount }), body, session: { session, csrf, current: '/console/payments' } });
}

export interface RefundConfirmPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  payment: PaymentRow;
  values: RefundFormValues;
  amountCentavos: number;
}

/** "Refund Bs X to <payer>?": the form's values carried on, with Confirm (makes it) and Back (changes nothing). */
export function renderRefundConfirmPage({ locale, nonce, session, csrf, payment, values, amountCentavos }: RefundConfirmPage): string {
  const amount = moneyText(locale, amountCentavos);
  const question = locale.t('console.refund.confirm.title', { amount, payer: payerShort(payment) });
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  const body = `<section class="card" aria-labelledby="confirm-heading">
  <h1 id="confirm-heading">${escapeHtml(question)}</h1>
  <p>${locale.html('console.refund.confirm.text', { amount })}</p>
  ${facts([
    [locale.t('console.refund.confirm.payment'), locale.t('console.refund.confirm.payment_value', { amount: moneyText(locale, payment.amount_centavos), when: locale.dateTime(payment.paid_at) })],
    [locale.t('console.refund.reason'), locale.t(`console.refund.reason.${values.reason as (typeof REFUND_REASON_CHOICES)[number]}`)],
    [locale.t('console.refund.confirm.note'), values.description === '' ? null : values.description],
  ])}
  <form method="post" action="${escapeHtml(locale.href(`/console/payments/${payment.id}/refund/confirm`))}" id="confirm-form">
  ${csrfField(csrf)}
  ${hidden('idempotency_key', values.key)}
  ${hidden('amount', values.amount)}
  ${hidden('reason', values.reason)}
  ${hidden('description', values.description)}
  <button type="submit" name="step" value="confirm" id="confirm-button">${escapeHtml(locale.t('console.refund.confirm', { amount }))}</button>
  <button type="submit" name="step" value="back" class="secondary" id="back-button">${locale.html('console.refund.back')}</button>
  </form>
</section>`;
  // The question's page has no language switch: its values live in the form, not in an address.
  return consolePage({ locale, nonce, title: question, body, session: { session, csrf, current: '/console/payments' } });
}

export interface RefundsPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  status: RefundStatus | '';
  request: PageRequest;
  page: Page<RefundRow>;
}

export function renderRefundsPage({ locale, nonce, session, csrf, status, request, page }: RefundsPage): string {
  const list = page.items.length === 0
    ? `<p class="muted" id="refunds-empty">${locale.html('console.refunds.empty')}</p>`
    : `<ul class="rows" id="refunds">
  ${page.items.map((refund) => refundRow(locale, refund, { paymentLink: true })).join('\n  ')}
  </ul>`;
  const body = `<section class="card" aria-labelledby="refunds-heading">
  <h1 id="refunds-heading">${locale.html('console.refunds.title')}</h1>
  <p class="hint">${locale.html('console.refunds.text')}</p>
  ${filterForm(locale, '/console/refunds', [{
    name: 'status', label: locale.t('console.qrs.filter.status'), value: status, options: [
      { value: '', label: locale.t('console.refunds.filter.all') },
      ...(['PENDING', 'COMPLETED', 'FAILED'] as const).map((value) => ({ value, label: refundStatusText(locale, value) })),
    ],
  }])}
  ${list}
  ${pager(locale, '/console/refunds', { status }, request, page)}
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.refunds.title'), body, session: { session, csrf, current: '/console/refunds' } });
}
