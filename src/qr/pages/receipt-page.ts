// The printable receipt of a payment (docs/qr.md#receipts): merchant, amount, date and time, the
// payer's masked account (no name, no bank: a single-use QR's receipt is open to whoever holds its link),
// and a payment reference the payer can quote and the merchant finds in the API: the bank's transaction
// id, or without one the QR's id (and the payment's paid_at on a multi-use QR) — never the payment's
// sequential id (receipt-reference.ts). Its print
// stylesheet fits thermal paper: each label above its value in one narrow column, so a roll 58 mm or
// 80 mm wide prints it whole, and A4 or letter paper a short slip; the language switch, the buttons and
// the page's background stay on the screen.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { noticePage, pageShell } from '../../kernel/page-kit.ts';
import { receiptReference } from '../receipt-reference.ts';
import type { PaymentRow, QrRow } from '../store.ts';

const RECEIPT_STYLES = `
.receipt .amount { margin: .25rem 0 .75rem; }
.receipt-actions { display: flex; gap: .75rem; flex-wrap: wrap; }
.receipt-actions > * { flex: 1 1 10rem; }
.receipt-actions .button-link { margin-top: 1rem; background: #fff; color: var(--accent); border: 1px solid var(--line); }
@media print {
  @page { margin: 3mm; }
  body { font-size: 10pt; line-height: 1.3; color: #000; }
  main { max-width: 80mm; padding: 0; margin: 0; }
  .card { border: 0; border-radius: 0; padding: 0; margin: 0; }
  .receipt h1 { font-size: 12pt; }
  .receipt .amount { font-size: 16pt; }
  .receipt dt { color: #000; margin-top: 1.5mm; font-size: 8.5pt; }
  .receipt dd { font-size: 10pt; }
}
`;

export interface ReceiptPageInput {
  locale: Locale;
  nonce: string;
  qr: QrRow;
  payment: PaymentRow;
  merchant: { name: string; city: string };
}

export function renderReceiptPage({ locale, nonce, qr, payment, merchant }: ReceiptPageInput): string {
  const row = (label: string, value: string, field: string) =>
    `<dt>${escapeHtml(label)}</dt><dd data-field="${field}">${escapeHtml(value)}</dd>`;
  const refunded = payment.amount_refunded_centavos > 0
    ? row(locale.t('receipt.refunded'), locale.money(payment.amount_refunded_centavos), 'refunded')
    : '';
  const body = `<section class="card receipt" aria-labelledby="receipt-heading">
  <h1 id="receipt-heading">${locale.html('receipt.title')}</h1>
  <p class="amount" data-field="amount">${escapeHtml(locale.money(payment.amount_centavos))}</p>
  <dl>
    ${row(locale.t('receipt.merchant'), `${merchant.name}, ${merchant.city}`, 'merchant')}
    ${qr.description ? row(locale.t('receipt.description'), qr.description, 'description') : ''}
    ${row(locale.t('receipt.date'), locale.date(payment.paid_at), 'date')}
    ${row(locale.t('receipt.time'), locale.time(payment.paid_at), 'time')}
    ${row(locale.t('receipt.payer_account'), payment.account_number.masked, 'payer-account')}
    ${row(locale.t('receipt.reference'), receiptReference(qr, payment), 'reference')}
    ${refunded}
  </dl>
  <div class="receipt-actions no-print">
    <button type="button" id="print-button">${locale.html('receipt.print')}</button>
    <a class="button-link" href="${escapeHtml(locale.href(`/pay/${qr.pay_token}`))}">${locale.html('receipt.back')}</a>
  </div>
</section>`;
  return pageShell({
    locale, nonce, body, styles: RECEIPT_STYLES,
    title: `${locale.t('receipt.title')} — ${merchant.name}`,
    script: `document.getElementById('print-button').addEventListener('click', function () { window.print(); });`,
  });
}

/**
 * No receipt to show: a single-use QR not paid (yet, while `payable`), or a multi-use QR none of whose
 * payments this browser made.
 */
export function renderNoReceiptPage(locale: Locale, nonce: string, qr: QrRow, payable: boolean): string {
  return noticePage({
    locale,
    nonce,
    title: locale.t('receipt.none.title'),
    text: locale.t(qr.is_multi_use ? 'receipt.none.multi_use' : payable ? 'receipt.none.unpaid' : 'receipt.none.closed'),
    state: 'NOT_FOUND',
    more: `<a class="button-link" href="${escapeHtml(locale.href(`/pay/${qr.pay_token}`))}">${locale.html('receipt.back')}</a>`,
  });
}
