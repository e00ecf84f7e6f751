// The hosted payment page (docs/qr.md#4-the-hosted-payment-page): merchant, description, amount, QR image,
// live status without reload, a countdown to the expiry, the payment received with a link to its
// receipt, clear pages for canceled and expired QRs, and in sandbox mode a "Simulate payment" form.
// While the QR takes payments, "Guardar QR" saves its image for a payer who pays from the same phone's
// gallery: a link that downloads it, which the script turns into the share sheet where there is one (save-qr.ts,
// shared with the console terminal's QR screen). Inside the pay section, so hidden whenever the QR takes no payment.
// Server-rendered in the payer's language (kernel/i18n); a small script long-polls the public status.
import type { Centavos } from '../../money.ts';
import { countdownMarkup } from '../../kernel/countdown.ts';
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { SANDBOX_PAYER_DEFAULTS } from '../../rails/pay-in.ts';
import { noticePage, pageShell } from '../../kernel/page-kit.ts';
import type { PaymentRow, QrWithLastPayment } from '../store.ts';
import { payPageScript } from './pay-page-script.ts';
import { qrFileName } from './qr-file-name.ts';
import { SAVE_QR_STYLES, saveQrLink } from './save-qr.ts';
import { statusKey, toPublicStatus, type PublicStatus } from './public-status.ts';

export interface SimulateFormState {
  values: Record<string, string>;
  /** Field name → message; `_form` for a refusal of the whole payment. */
  errors: Record<string, string>;
}

export interface PayPageInput {
  found: QrWithLastPayment;
  merchant: { name: string; city: string };
  now: Date;
  locale: Locale;
  sandbox: boolean;
  nonce: string;
  /** The payment this browser made (a multi-use QR's receipt key), shown with its receipt link; null for none. */
  ownPayment: PaymentRow | null;
  form?: SimulateFormState;
}

export function renderPayPage(input: PayPageInput): string {
  const { found, merchant, now, locale, sandbox, nonce, form, ownPayment } = input;
  const { qr } = found;
  const status = toPublicStatus(found, now, locale.zone);
  const payable = status.status === 'ACTIVE';
  const statusText = locale.t(statusKey(status));
  const title = payable ? locale.t('pay.title.pay', { merchant: merchant.name }) : `${merchant.name} — ${statusText}`;
  const amountText = qr.amount_centavos === null ? null : locale.money(qr.amount_centavos);

  const bounds = amountBoundsText(locale, qr.min_amount_centavos, qr.max_amount_centavos);
  const amountBlock = qr.modify_amount
    ? `<p class="amount" data-field="qr-amount">${escapeHtml(amountText ?? locale.t('pay.amount.payer_chooses'))}</p>
  ${amountText ? `<p class="muted">${locale.html('pay.amount.suggested')}</p>` : ''}
  ${bounds ? `<p class="muted" data-field="qr-bounds">${escapeHtml(bounds)}</p>` : ''}`
    : `<p class="amount" data-field="qr-amount">${escapeHtml(amountText)}</p>`;

  const body = `<section class="card" aria-labelledby="merchant-heading">
  <h1 id="merchant-heading">${escapeHtml(merchant.name)}</h1>
  <p class="muted">${escapeHtml(merchant.city)}</p>
  ${qr.description ? `<p data-field="description">${escapeHtml(qr.description)}</p>` : ''}
  ${amountBlock}
  ${expiryBlock(locale, found, status, now)}
  <p class="status" id="status" role="status" aria-live="polite" data-state="${status.status}">${escapeHtml(statusText)}</p>
</section>
${paidBlock(locale, qr.pay_token, qr.is_multi_use ? ownPayment : qr.paid_at !== null ? found.lastPayment : null)}
<section class="card" id="pay-section" aria-labelledby="scan-heading"${payable ? '' : ' hidden'}>
  <h2 id="scan-heading">${locale.html('pay.scan.heading')}</h2>
  <img class="qr" src="${escapeHtml(qr.qr_image)}" width="280" height="280" alt="${escapeHtml(qr.modify_amount || amountText === null
    ? locale.t('pay.qr.alt_open', { merchant: merchant.name })
    : locale.t('pay.qr.alt', { amount: amountText, merchant: merchant.name }))}">
  <p class="muted">${locale.html('pay.scan.help')}</p>
  ${saveQrLink(locale, { payToken: qr.pay_token, fileName: qrFileName(merchant.name, qr), helpKey: 'pay.save.help' })}
</section>
${sandbox ? renderSimulateForm(locale, qr.modify_amount, qr.amount_centavos, payable, form) : ''}`;

  return pageShell({ locale, title, nonce, body, styles: SAVE_QR_STYLES, script: payPageScript(locale, status, now, {
    payTitle: locale.t('pay.title.pay', { merchant: merchant.name }), merchantName: merchant.name,
  }) });
}

/**
 * When the QR stops taking payments: "Paga antes de las 15:11" and a live countdown while it is payable,
 * "Venció el …" once expired — rendered hidden beside the countdown too, for the script to show at zero.
 */
function expiryBlock(locale: Locale, { qr }: QrWithLastPayment, status: PublicStatus, now: Date): string {
  if (qr.expires_at === null || status.status === 'PAID' || status.cancel_reason === 'merchant') return '';
  const expired = status.status === 'CANCELED';
  const expiredAt = `<p class="muted" id="expired-at"${expired ? '' : ' hidden'}>${escapeHtml(locale.t('pay.expiry.expired_at', { when: locale.dateTime(qr.expires_at) }))}</p>`;
  if (expired) return expiredAt;
  return `<div id="expiry">
  <p class="muted">${escapeHtml(locale.t('pay.expiry.pay_by', { deadline: locale.deadline(qr.expires_at, now) }))}</p>
  ${countdownMarkup(locale)}
</div>
  ${expiredAt}`;
}

/** What an editable amount may be, in words; null without bounds. */
function amountBoundsText(locale: Locale, min: Centavos | null, max: Centavos | null): string | null {
  if (min !== null && max !== null) return locale.t('pay.bounds.between', { min: locale.money(min), max: locale.money(max) });
  if (min !== null) return locale.t('pay.bounds.min', { min: locale.money(min) });
  if (max !== null) return locale.t('pay.bounds.max', { max: locale.money(max) });
  return null;
}

/**
 * The payment received, with the link to its receipt: a single-use QR's once paid (the script fills it
 * in when the payment arrives while the page is open), or on a multi-use QR the payment this browser made.
 */
function paidBlock(locale: Locale, payToken: string, payment: PaymentRow | null): string {
  return `<section class="card" id="paid" aria-labelledby="paid-heading"${payment ? '' : ' hidden'}>
  <h2 id="paid-heading">${locale.html('pay.paid.heading')}</h2>
  <dl>
    <dt>${locale.html('pay.paid.amount')}</dt><dd data-field="paid-amount">${payment ? escapeHtml(locale.money(payment.amount_centavos)) : ''}</dd>
    <dt>${locale.html('pay.paid.date')}</dt><dd data-field="paid-date">${payment ? escapeHtml(locale.dateTime(payment.paid_at)) : ''}</dd>
  </dl>
  <a class="button-link" id="receipt-link" href="${escapeHtml(locale.href(`/pay/${payToken}/receipt`))}">${locale.html('pay.paid.receipt_link')}</a>
</section>`;
}

function renderSimulateForm(locale: Locale, editable: boolean, suggestedCentavos: Centavos | null, payable: boolean, form: SimulateFormState | undefined): string {
  const values = form?.values ?? {};
  const errors = form?.errors ?? {};
  // The first wrong field takes the focus: the form sits below the QR, and the payer lands on what to fix.
  const firstWrong = ['source_bank', 'account_number', 'account_titular', 'amount'].find((name) => errors[name] !== undefined);
  const field = (name: string, label: string, attributes: string, fallback = '') => {
    const error = errors[name];
    const id = `sim-${name}`;
    return `<label for="${id}">${escapeHtml(label)}</label>
  <input id="${id}" name="${name}" value="${escapeHtml(values[name] ?? fallback)}" ${attributes}${error ? ` aria-invalid="true" aria-describedby="${id}-error"` : ''}${name === firstWrong ? ' autofocus' : ''}>
  ${error ? `<p class="error" id="${id}-error">${escapeHtml(error)}</p>` : ''}`;
  };
  return `<section class="card sandbox" id="simulate" aria-labelledby="simulate-heading"${payable ? '' : ' hidden'}>
  <h2 id="simulate-heading">${locale.html('pay.simulate.heading')}</h2>
  <p class="muted">${locale.html('pay.simulate.note')}</p>
  ${errors._form ? `<p class="error" role="alert">${escapeHtml(errors._form)}</p>` : ''}
  <form method="post" action="${escapeHtml(locale.href(''))}" novalidate>
  ${field('source_bank', locale.t('pay.simulate.source_bank'), 'autocomplete="off" maxlength="100" required', SANDBOX_PAYER_DEFAULTS.sourceBank)}
  ${field('account_number', locale.t('pay.simulate.account_number'), 'inputmode="numeric" autocomplete="off" maxlength="30" required', SANDBOX_PAYER_DEFAULTS.accountNumber)}
  ${field('account_titular', locale.t('pay.simulate.account_titular'), 'autocomplete="off" maxlength="140" required', SANDBOX_PAYER_DEFAULTS.accountTitular)}
  ${editable ? field('amount', locale.t('pay.simulate.amount'), 'inputmode="decimal" autocomplete="off" required', suggestedCentavos === null ? '' : locale.amountInput(suggestedCentavos)) : ''}
  <button type="submit">${locale.html('pay.simulate.submit')}</button>
  </form>
</section>`;
}

export function renderNotFoundPage(locale: Locale, nonce: string): string {
  return noticePage({
    locale,
    nonce,
    title: locale.t('pay.not_found.title'),
    text: locale.t('pay.not_found.text'),
    state: 'NOT_FOUND',
    more: `<p class="muted">${locale.html('pay.not_found.help')}</p>`,
  });
}
