// The hosted payment page (docs/api-reference.md#hosted-payment-page): merchant, description, amount, QR image, live status without
// reload, a receipt once paid, clear pages for canceled and expired QRs, and in sandbox mode a
// "Simulate payment" form. Server-rendered; a tiny script long-polls the public status endpoint.
import { createHash } from 'node:crypto';
import { formatCentavos, type Centavos } from '../../money.ts';
import { formatWallClock } from '../../time.ts';
import { effectiveState } from '../state.ts';
import type { QrWithLastPayment } from '../store.ts';
import { escapeHtml, jsonForScript, pageShell } from '../../kernel/page-kit.ts';

/**
 * What anyone holding the pay link may read (docs/api-reference.md#public-payment-status): the state of the
 * QR and what the payer needs, never a payment id, another payer's amount or a multi-use QR's count.
 */
export interface PublicStatus {
  status: 'ACTIVE' | 'PAID' | 'CANCELED';
  cancel_reason: 'merchant' | 'expired' | null;
  /** What is asked (fixed or suggested amount), or what was paid once a single-use QR is PAID; null when the payer chooses. */
  amount: string | null;
  expires_at: string | null;
  /** Single-use QRs only: when it was paid (ISO 8601 UTC, and as the wall clock of the service time zone). */
  paid_at: string | null;
  paid_at_local: string | null;
}

export function toPublicStatus(found: QrWithLastPayment, now: Date, zone: string): PublicStatus {
  const { qr } = found;
  const state = effectiveState(qr, now);
  const paidOnce = !qr.is_multi_use && qr.paid_at !== null;
  const amountCentavos = paidOnce ? qr.amount_collected_centavos : qr.amount_centavos;
  return {
    status: state.status,
    cancel_reason: state.cancelReason,
    amount: amountCentavos === null ? null : formatCentavos(amountCentavos),
    expires_at: qr.expires_at?.toISOString() ?? null,
    paid_at: paidOnce ? qr.paid_at!.toISOString() : null,
    paid_at_local: paidOnce ? formatWallClock(qr.paid_at!, zone) : null,
  };
}

/** A strong ETag of exactly what the public status shows (a digest: its text holds quotes). */
export function publicStatusTag(status: PublicStatus): string {
  return `"${createHash('sha256').update(JSON.stringify(status)).digest('base64url').slice(0, 22)}"`;
}

export interface SimulateFormState {
  values: Record<string, string>;
  /** Field name → message; `_form` for a refusal of the whole payment. */
  errors: Record<string, string>;
}

export interface PayPageInput {
  found: QrWithLastPayment;
  merchant: { name: string; city: string };
  now: Date;
  zone: string;
  sandbox: boolean;
  nonce: string;
  form?: SimulateFormState;
}

const STATUS_TEXT = {
  ACTIVE: 'Waiting for payment',
  PAID: 'Paid — thank you',
  CANCELED_merchant: 'This payment request was canceled by the merchant',
  CANCELED_expired: 'This payment request has expired',
} as const;

function statusText(status: PublicStatus): string {
  if (status.status === 'CANCELED') return status.cancel_reason === 'expired' ? STATUS_TEXT.CANCELED_expired : STATUS_TEXT.CANCELED_merchant;
  return STATUS_TEXT[status.status];
}

export function renderPayPage(input: PayPageInput): string {
  const { found, merchant, now, zone, sandbox, nonce, form } = input;
  const { qr } = found;
  const status = toPublicStatus(found, now, zone);
  const amountText = qr.amount_centavos === null ? null : `Bs ${formatCentavos(qr.amount_centavos)}`;
  const payable = status.status === 'ACTIVE';
  const title = `${merchant.name} — ${payable ? 'Pay' : statusText(status)}`;

  const bounds = amountBoundsText(qr.min_amount_centavos, qr.max_amount_centavos);
  const amountBlock = qr.modify_amount
    ? `<p class="amount" data-field="qr-amount">${amountText ? `${escapeHtml(amountText)}` : 'You choose the amount'}</p>
       ${amountText ? '<p class="muted">Suggested amount; you may pay another.</p>' : ''}
       ${bounds ? `<p class="muted" data-field="qr-bounds">${escapeHtml(bounds)}</p>` : ''}`
    : `<p class="amount" data-field="qr-amount">${escapeHtml(amountText)}</p>`;

  const expiry = qr.expires_at
    ? `<p class="muted" id="expiry"${status.status === 'PAID' ? ' hidden' : ''}>${payable ? 'Pay before' : 'Valid until'} ${escapeHtml(formatWallClock(qr.expires_at, zone))} (${escapeHtml(zone)} time)</p>`
    : '';

  const receipt = renderReceipt(status, merchant.name);

  const qrBlock = `<section class="card" id="pay-section" aria-labelledby="scan-heading"${payable ? '' : ' hidden'}>
  <h2 id="scan-heading">Scan with your banking app</h2>
  <img class="qr" src="${escapeHtml(qr.qr_image)}" width="280" height="280"
       alt="QR code to pay ${escapeHtml(amountText ?? 'an amount you choose')} to ${escapeHtml(merchant.name)}">
  <p class="muted">Open your bank's app, choose "Pay with QR" and scan this code.</p>
</section>`;

  const simulate = sandbox ? renderSimulateForm(qr.modify_amount, qr.amount_centavos, payable, form) : '';

  const body = `<section class="card" aria-labelledby="merchant-heading">
  <h1 id="merchant-heading">${escapeHtml(merchant.name)}</h1>
  <p class="muted">${escapeHtml(merchant.city)}</p>
  ${qr.description ? `<p data-field="description">${escapeHtml(qr.description)}</p>` : ''}
  ${amountBlock}
  ${expiry}
  <p class="status" id="status" role="status" aria-live="polite" data-state="${status.status}">${escapeHtml(statusText(status))}</p>
</section>
${receipt}
${qrBlock}
${simulate}`;

  return pageShell({ title, nonce, body, script: liveScript(status) });
}

/** What an editable amount may be, in words; null without bounds. */
function amountBoundsText(min: Centavos | null, max: Centavos | null): string | null {
  if (min !== null && max !== null) return `Between Bs ${formatCentavos(min)} and Bs ${formatCentavos(max)}.`;
  if (min !== null) return `At least Bs ${formatCentavos(min)}.`;
  if (max !== null) return `At most Bs ${formatCentavos(max)}.`;
  return null;
}

/** The receipt of a single-use QR once paid (a multi-use QR shows no payment to the public). */
function renderReceipt(status: PublicStatus, merchantName: string): string {
  const show = status.paid_at !== null;
  return `<section class="card" id="receipt" aria-labelledby="receipt-heading"${show ? '' : ' hidden'}>
  <h2 id="receipt-heading">Receipt</h2>
  <dl>
    <dt>Paid to</dt><dd>${escapeHtml(merchantName)}</dd>
    <dt>Amount</dt><dd data-field="receipt-amount">${show && status.amount ? `Bs ${escapeHtml(status.amount)}` : ''}</dd>
    <dt>Date</dt><dd data-field="receipt-date">${show ? escapeHtml(status.paid_at_local) : ''}</dd>
  </dl>
</section>`;
}

function renderSimulateForm(editable: boolean, suggestedCentavos: Centavos | null, payable: boolean, form: SimulateFormState | undefined): string {
  const values = form?.values ?? {};
  const errors = form?.errors ?? {};
  const field = (name: string, label: string, attributes: string, fallback = '') => {
    const error = errors[name];
    const id = `sim-${name}`;
    return `<label for="${id}">${escapeHtml(label)}</label>
  <input id="${id}" name="${name}" value="${escapeHtml(values[name] ?? fallback)}" ${attributes}${error ? ` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
  ${error ? `<p class="error" id="${id}-error">${escapeHtml(error)}</p>` : ''}`;
  };
  return `<section class="card sandbox" id="simulate" aria-labelledby="simulate-heading"${payable ? '' : ' hidden'}>
  <h2 id="simulate-heading">Simulate payment (sandbox)</h2>
  <p class="muted">Sandbox mode: no real money moves. This form plays the payer's bank.</p>
  ${errors._form ? `<p class="error" role="alert">${escapeHtml(errors._form)}</p>` : ''}
  <form method="post" action="" novalidate>
  ${field('source_bank', 'Payer bank', 'autocomplete="off" maxlength="100" required', 'Banco Sandbox')}
  ${field('account_number', 'Account number', 'inputmode="numeric" autocomplete="off" maxlength="30" required', '10000123454321')}
  ${field('account_titular', 'Account holder', 'autocomplete="off" maxlength="140" required', 'Sandbox Payer')}
  ${editable ? field('amount', 'Amount (Bs)', 'inputmode="decimal" autocomplete="off" required', suggestedCentavos === null ? '' : formatCentavos(suggestedCentavos)) : ''}
  <button type="submit">Simulate payment</button>
  </form>
</section>`;
}

/** Long-polls the public status and updates the page in place; stops once the QR is final. */
function liveScript(initial: PublicStatus): string {
  return `(function () {
  var state = ${jsonForScript(initial)};
  var statusUrl = location.pathname.replace(/\\/$/, '') + '/status';
  var etag = null;
  var texts = ${jsonForScript(STATUS_TEXT)};
  function $(id) { return document.getElementById(id); }
  function field(name) { return document.querySelector('[data-field="' + name + '"]'); }
  function render(s) {
    var status = $('status');
    var text = s.status === 'CANCELED' ? texts['CANCELED_' + s.cancel_reason] : texts[s.status];
    status.textContent = text;
    status.setAttribute('data-state', s.status);
    if (s.paid_at) {
      field('receipt-amount').textContent = s.amount ? 'Bs ' + s.amount : '';
      field('receipt-date').textContent = s.paid_at_local;
      $('receipt').hidden = false;
    }
    var payable = s.status === 'ACTIVE';
    $('pay-section').hidden = !payable;
    if ($('expiry') && s.status === 'PAID') $('expiry').hidden = true;
    if ($('simulate')) $('simulate').hidden = !payable;
    document.title = document.title.replace(/ — .*$/, ' — ' + (payable ? 'Pay' : text));
  }
  function later(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }
  async function poll() {
    while (state.status === 'ACTIVE') {
      try {
        var headers = etag ? { 'If-None-Match': etag } : {};
        var response = await fetch(statusUrl + '?wait=25', { headers: headers, cache: 'no-store' });
        if (response.status === 200) {
          etag = response.headers.get('ETag');
          state = await response.json();
          render(state);
        } else if (response.status !== 304) {
          await later(3000);
        }
      } catch (e) {
        await later(3000);
      }
    }
  }
  poll();
})();`;
}

export function renderNotFoundPage(nonce: string): string {
  return pageShell({
    title: 'Payment request not found',
    nonce,
    body: `<section class="card" aria-labelledby="nf-heading">
  <h1 id="nf-heading">Payment request not found</h1>
  <p class="status" role="status" data-state="NOT_FOUND">This link does not match any payment request.</p>
  <p class="muted">Check that you opened the whole link, or ask the merchant for a new QR code.</p>
</section>`,
  });
}
