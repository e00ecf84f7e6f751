// The hosted payment page (docs/api-reference.md#hosted-payment-page): merchant, description, amount, QR image, live status without
// reload, a receipt once paid, clear pages for canceled and expired QRs, and in sandbox mode a
// "Simulate payment" form. Server-rendered; a tiny script long-polls the public status endpoint.
import { formatCentavos } from '../../money.ts';
import { formatWallClock } from '../../time.ts';
import { effectiveState, type QrWithLastPayment } from '../service.ts';
import { escapeHtml, jsonForScript, pageShell } from './html.ts';

export interface PublicStatus {
  status: 'ACTIVE' | 'PAID' | 'CANCELED';
  cancel_reason: 'merchant' | 'expired' | null;
  is_multi_use: boolean;
  payments_count: number;
  last_payment: { id: number; amount: string; paid_at: string; paid_at_local: string } | null;
}

/** What the public status endpoint shows: no payer details, no merchant totals. */
export function toPublicStatus(found: QrWithLastPayment, now: Date, zone: string): PublicStatus {
  const state = effectiveState(found.qr, now);
  const last = found.lastPayment;
  return {
    status: state.status,
    cancel_reason: state.cancelReason,
    is_multi_use: found.qr.is_multi_use,
    payments_count: found.qr.payments_count,
    last_payment: last
      ? { id: last.id, amount: formatCentavos(last.amount_centavos), paid_at: last.paid_at.toISOString(), paid_at_local: formatWallClock(last.paid_at, zone) }
      : null,
  };
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
  if (status.status === 'ACTIVE' && status.is_multi_use && status.payments_count > 0) return `${STATUS_TEXT.ACTIVE} — ${status.payments_count} received so far`;
  return STATUS_TEXT[status.status];
}

export function renderPayPage(input: PayPageInput): string {
  const { found, merchant, now, zone, sandbox, nonce, form } = input;
  const { qr } = found;
  const status = toPublicStatus(found, now, zone);
  const amountText = qr.amount_centavos === null ? null : `Bs ${formatCentavos(qr.amount_centavos)}`;
  const payable = status.status === 'ACTIVE';
  const title = `${merchant.name} — ${payable ? 'Pay' : statusText(status)}`;

  const amountBlock = qr.modify_amount
    ? `<p class="amount" data-field="qr-amount">${amountText ? `${escapeHtml(amountText)}` : 'You choose the amount'}</p>
       ${amountText ? '<p class="muted">Suggested amount; you may pay another.</p>' : ''}`
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

function renderReceipt(status: PublicStatus, merchantName: string): string {
  const last = status.last_payment;
  const show = last !== null && (status.status === 'PAID' || status.is_multi_use);
  return `<section class="card" id="receipt" aria-labelledby="receipt-heading"${show ? '' : ' hidden'}>
  <h2 id="receipt-heading">${status.is_multi_use ? 'Latest payment received' : 'Receipt'}</h2>
  <dl>
    <dt>Paid to</dt><dd>${escapeHtml(merchantName)}</dd>
    <dt>Amount</dt><dd data-field="receipt-amount">${last ? `Bs ${escapeHtml(last.amount)}` : ''}</dd>
    <dt>Date</dt><dd data-field="receipt-date">${last ? escapeHtml(last.paid_at_local) : ''}</dd>
    <dt>Payment</dt><dd data-field="receipt-id">${last ? `#${escapeHtml(last.id)}` : ''}</dd>
  </dl>
</section>`;
}

function renderSimulateForm(editable: boolean, suggestedCentavos: number | null, payable: boolean, form: SimulateFormState | undefined): string {
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
    if (s.status === 'ACTIVE' && s.is_multi_use && s.payments_count > 0) text += ' — ' + s.payments_count + ' received so far';
    status.textContent = text;
    status.setAttribute('data-state', s.status);
    var last = s.last_payment;
    if (last && (s.status === 'PAID' || s.is_multi_use)) {
      field('receipt-amount').textContent = 'Bs ' + last.amount;
      field('receipt-date').textContent = last.paid_at_local;
      field('receipt-id').textContent = '#' + last.id;
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
