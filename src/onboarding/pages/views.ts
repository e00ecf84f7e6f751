// Templates of the hosted onboarding flow (docs/api-reference.md#hosted-onboarding-flow): registration form, activation payment, done page
// with the first API key, and the 404 / 410 pages. Mobile-first, a label on every input, every piece of
// data through escapeHtml; the shell, styles and CSP nonce are the hosted pages' kit (kernel/page-kit.ts).
import type { BankConfig } from '../../config.ts';
import { formatCentavos, type Centavos } from '../../money.ts';
import { escapeHtml, jsonForScript, pageShell } from '../../kernel/page-kit.ts';
import { formatWallClock } from '../../time.ts';
import type { IntentRow } from '../store.ts';
import type { FormErrors, FormField, FormValues } from './registration-form.ts';

const EXTRA_STYLES = `
select { width: 100%; font: inherit; padding: .6rem .7rem; border: 1px solid #8c959f; border-radius: 8px; background: #fff; }
select:focus { outline: 3px solid #0969da66; outline-offset: 1px; }
.hint { color: var(--muted); font-size: .9rem; margin: .2rem 0 0; }
.secondary { background: #fff; color: var(--bad); border: 1px solid var(--line); }
.steps { display: flex; gap: .5rem; list-style: none; padding: 0; margin: 0 0 1rem; font-size: .9rem; color: var(--muted); }
.steps li[aria-current="step"] { color: var(--accent); font-weight: 700; }
.key { font: 600 1rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; border: 1px solid var(--line);
  border-radius: 8px; padding: .75rem; overflow-wrap: anywhere; user-select: all; }
.button-link { display: block; text-align: center; margin-top: 1rem; padding: .75rem; border-radius: 8px; background: var(--accent);
  color: #fff; font-weight: 700; text-decoration: none; }
.section { margin-top: 1.25rem; }
.error-summary { border: 2px solid var(--bad); border-radius: 8px; padding: .75rem; margin-bottom: 1rem; }
`;

interface Shell {
  nonce: string;
  title: string;
  body: string;
  script?: string;
}

function shell({ nonce, title, body, script }: Shell): string {
  return pageShell({ title, nonce, body: `<style nonce="${nonce}">${EXTRA_STYLES}</style>\n${body}`, script });
}

function steps(current: 1 | 2 | 3, withPayment: boolean): string {
  const names = withPayment ? ['Your business', 'Activation payment', 'Your API key'] : ['Your business', 'Your API key'];
  const index = withPayment ? current : current === 1 ? 1 : 2;
  return `<ol class="steps" aria-label="Progress">${names.map((name, i) =>
    `<li${i + 1 === index ? ' aria-current="step"' : ''}>${i + 1}. ${escapeHtml(name)}</li>`).join('')}</ol>`;
}

function cancelForm(token: string, csrf: string): string {
  return `<form method="post" action="/onboarding/${escapeHtml(token)}/cancel">
  <input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">
  <button type="submit" class="secondary" id="cancel-button">Cancel registration</button>
</form>`;
}

const LABELS: Record<FormField, { label: string; attributes: string; hint?: string }> = {
  legal_name: { label: 'Legal name', attributes: 'autocomplete="organization" maxlength="200" required' },
  trade_name: { label: 'Trade name', attributes: 'maxlength="200" required', hint: 'The name your customers see when they pay.' },
  tax_id: { label: 'NIT (tax id)', attributes: 'inputmode="numeric" maxlength="15" required', hint: 'Digits only.' },
  email: { label: 'Contact email', attributes: 'type="email" autocomplete="email" maxlength="254" required' },
  phone: { label: 'Contact phone', attributes: 'type="tel" autocomplete="tel" maxlength="20" required' },
  city: { label: 'City', attributes: 'autocomplete="address-level2" maxlength="100" required' },
  mcc: { label: 'Category code (MCC, optional)', attributes: 'inputmode="numeric" maxlength="4"', hint: '4 digits, for example 5812 for restaurants. Leave empty if unsure.' },
  bank_code: { label: 'Bank', attributes: 'required' },
  account_number: { label: 'Account number', attributes: 'inputmode="numeric" autocomplete="off" maxlength="34" required', hint: 'Digits and hyphens.' },
  account_holder: { label: 'Account holder', attributes: 'autocomplete="off" maxlength="100" required' },
};

export interface FormPageInput {
  nonce: string;
  intent: IntentRow;
  token: string;
  csrf: string;
  values: FormValues;
  errors: FormErrors;
  banks: readonly BankConfig[];
  feeCentavos: Centavos;
  zone: string;
}

export function renderFormPage(input: FormPageInput): string {
  const { nonce, intent, token, csrf, values, errors, banks, feeCentavos, zone } = input;
  const field = (name: FormField) => {
    const { label, attributes, hint } = LABELS[name];
    const id = `f-${name}`;
    const error = errors[name];
    const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
    const aria = `${error ? ' aria-invalid="true"' : ''}${described ? ` aria-describedby="${described}"` : ''}`;
    const control = name === 'bank_code'
      ? `<select id="${id}" name="${name}" ${attributes}${aria}>
    <option value="">Choose your bank</option>
    ${banks.map((bank) => `<option value="${bank.bankCode}"${String(bank.bankCode) === values.bank_code ? ' selected' : ''}>${escapeHtml(bank.name)}</option>`).join('\n    ')}
  </select>`
      : `<input id="${id}" name="${name}" value="${escapeHtml(values[name])}" ${attributes}${aria}>`;
    return `<label for="${id}">${escapeHtml(label)}</label>
  ${control}
  ${hint ? `<p class="hint" id="${id}-hint">${escapeHtml(hint)}</p>` : ''}
  ${error ? `<p class="error" id="${id}-error">${escapeHtml(error)}</p>` : ''}`;
  };
  const errorCount = Object.keys(errors).length;
  const fee = feeCentavos > 0
    ? `<p class="muted">After this form you pay a one-time activation fee of <strong>Bs ${escapeHtml(formatCentavos(feeCentavos))}</strong> by QR.</p>`
    : '';
  const body = `<section class="card" aria-labelledby="form-heading">
  ${steps(1, feeCentavos > 0)}
  <h1 id="form-heading">Register your business</h1>
  <p class="muted">Complete before ${escapeHtml(formatWallClock(intent.expires_at, zone))} (${escapeHtml(zone)} time).</p>
  ${fee}
</section>
<section class="card">
  ${errorCount > 0 ? `<div class="error-summary" role="alert" id="error-summary"><p class="error">${errors._form ? escapeHtml(errors._form) : `Please correct ${errorCount === 1 ? 'the field' : `the ${errorCount} fields`} marked below.`}</p></div>` : ''}
  <form method="post" action="/onboarding/${escapeHtml(token)}" novalidate id="registration-form">
  <input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">
  <h2>Business</h2>
  ${field('legal_name')}
  ${field('trade_name')}
  ${field('tax_id')}
  ${field('city')}
  ${field('mcc')}
  <h2 class="section">Contact</h2>
  ${field('email')}
  ${field('phone')}
  <h2 class="section">Payout bank account</h2>
  ${field('bank_code')}
  ${field('account_number')}
  ${field('account_holder')}
  <button type="submit" id="submit-button">${feeCentavos > 0 ? 'Continue to activation payment' : 'Create my merchant account'}</button>
  </form>
</section>
<section class="card">
  ${cancelForm(token, csrf)}
</section>`;
  return shell({ nonce, title: 'Register your business', body });
}

export interface PaymentPageInput {
  nonce: string;
  intent: IntentRow;
  token: string;
  csrf: string;
  qrImage: string | null;
  feeCentavos: Centavos;
  bankName: string;
  sandbox: boolean;
  zone: string;
  error?: string;
}

export function renderPaymentPage(input: PaymentPageInput): string {
  const { nonce, intent, token, csrf, qrImage, feeCentavos, bankName, sandbox, zone, error } = input;
  const fee = `Bs ${formatCentavos(feeCentavos)}`;
  const body = `<section class="card" aria-labelledby="pay-heading">
  ${steps(2, true)}
  <h1 id="pay-heading">Activation payment</h1>
  <p class="muted">${escapeHtml(intent.trade_name ?? '')}</p>
  <p class="amount" data-field="fee">${escapeHtml(fee)}</p>
  <p class="muted">Pay before ${escapeHtml(formatWallClock(intent.expires_at, zone))} (${escapeHtml(zone)} time).</p>
  <p class="status" id="status" role="status" aria-live="polite" data-state="ACTIVE">Waiting for payment</p>
  ${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
</section>
<section class="card" aria-labelledby="scan-heading">
  <h2 id="scan-heading">Scan with your banking app</h2>
  ${qrImage ? `<img class="qr" src="${escapeHtml(qrImage)}" width="280" height="280" alt="QR code to pay the activation fee of ${escapeHtml(fee)}">` : ''}
  <p class="muted">Open your bank's app, choose "Pay with QR" and scan this code. This page moves on by itself once the payment arrives.</p>
</section>
${sandbox ? `<section class="card sandbox" aria-labelledby="simulate-heading">
  <h2 id="simulate-heading">Simulate payment (sandbox)</h2>
  <p class="muted">Sandbox mode: no real money moves. This button plays the payer's bank.</p>
  <form method="post" action="/onboarding/${escapeHtml(token)}/simulate-payment">
  <input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">
  <button type="submit" id="simulate-button">Simulate payment</button>
  </form>
</section>` : ''}
<section class="card" aria-labelledby="summary-heading">
  <h2 id="summary-heading">Your registration</h2>
  <dl>
    <dt>Legal name</dt><dd>${escapeHtml(intent.legal_name ?? '')}</dd>
    <dt>NIT</dt><dd>${escapeHtml(intent.tax_id ?? '')}</dd>
    <dt>City</dt><dd>${escapeHtml(intent.city ?? '')}</dd>
    <dt>Email</dt><dd>${escapeHtml(intent.email ?? '')}</dd>
    <dt>Payout to</dt><dd>${escapeHtml(bankName)}</dd>
    <dt>Account</dt><dd data-field="account">${escapeHtml(intent.payout_account_masked ?? '')}</dd>
    <dt>Holder</dt><dd>${escapeHtml(intent.payout_account_holder ?? '')}</dd>
  </dl>
  ${cancelForm(token, csrf)}
</section>`;
  return shell({ nonce, title: 'Activation payment', body, script: pollScript(token) });
}

/** Polls the flow's status every 2 s; the done page once completed, a reload (the 410 page) once closed otherwise. */
function pollScript(token: string): string {
  return `(function () {
  var base = ${jsonForScript(`/onboarding/${token}`)};
  function later(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }
  async function poll() {
    for (;;) {
      await later(2000);
      try {
        var response = await fetch(base + '/status', { cache: 'no-store', headers: { accept: 'application/json' } });
        if (response.status === 200) continue;
        var body = await response.json();
        if (body.status === 'completed') { location.assign(base + '/done'); return; }
        if (body.status === 'cancelled' || body.status === 'expired') { location.reload(); return; }
      } catch (e) { /* try again */ }
    }
  }
  poll();
})();`;
}

export interface DonePageInput {
  nonce: string;
  merchantName: string;
  businessCode: number;
  apiKey: string;
  successLink: string | null;
  withPayment: boolean;
}

export function renderDonePage(input: DonePageInput): string {
  const { nonce, merchantName, businessCode, apiKey, successLink, withPayment } = input;
  const body = `<section class="card" aria-labelledby="done-heading">
  ${steps(3, withPayment)}
  <h1 id="done-heading">Your merchant account is ready</h1>
  <p class="status" role="status" data-state="PAID">${escapeHtml(merchantName)} is registered.</p>
  <dl class="section">
    <dt>Business code</dt><dd data-field="business-code">${escapeHtml(businessCode)}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="key-heading">
  <h2 id="key-heading">Your API key</h2>
  <p><strong>Copy it now: it is shown only once.</strong> Keep it secret; send it in the <code>X-API-KEY</code> header.</p>
  <p class="key" id="api-key" data-field="api-key">${escapeHtml(apiKey)}</p>
  <p class="hint">Lost it? Your platform operator can issue a new key.</p>
  ${successLink ? `<a class="button-link" id="continue-link" href="${escapeHtml(successLink)}">Continue</a>` : ''}
</section>`;
  return shell({ nonce, title: 'Your merchant account is ready', body });
}

export type GoneReason = 'expired' | 'cancelled' | 'used';

const GONE_TEXT: Record<GoneReason, { title: string; text: string }> = {
  expired: { title: 'This registration link has expired', text: 'The time to complete this registration is over. Ask the service that sent you here for a new link.' },
  cancelled: { title: 'This registration was cancelled', text: 'This link no longer works. Ask the service that sent you here for a new link if you want to start again.' },
  used: { title: 'This registration link was already used', text: 'The registration is complete and this link no longer works. If you did not receive your API key, ask your platform operator for one.' },
};

export function renderGonePage(nonce: string, reason: GoneReason): string {
  const { title, text } = GONE_TEXT[reason];
  return shell({
    nonce,
    title,
    body: `<section class="card" aria-labelledby="gone-heading">
  <h1 id="gone-heading">${escapeHtml(title)}</h1>
  <p class="status" role="status" data-state="CANCELED" data-reason="${reason}">${escapeHtml(text)}</p>
</section>`,
  });
}

export function renderNotFoundPage(nonce: string): string {
  return shell({
    nonce,
    title: 'Registration link not found',
    body: `<section class="card" aria-labelledby="nf-heading">
  <h1 id="nf-heading">Registration link not found</h1>
  <p class="status" role="status" data-state="NOT_FOUND">This link does not match any registration. Check that you opened the whole link.</p>
</section>`,
  });
}

export function renderCancelledPage(nonce: string): string {
  return shell({
    nonce,
    title: 'Registration cancelled',
    body: `<section class="card" aria-labelledby="cancelled-heading">
  <h1 id="cancelled-heading">Registration cancelled</h1>
  <p class="status" role="status" data-state="CANCELED">Nothing was registered. You can close this page.</p>
</section>`,
  });
}

export function renderCookieProblemPage(nonce: string, token: string): string {
  return shell({
    nonce,
    title: 'Please reload the form',
    body: `<section class="card" aria-labelledby="cookie-heading">
  <h1 id="cookie-heading">Please reload the form</h1>
  <p class="error" role="alert">Your browser did not send this form's security check. Make sure cookies are allowed for this site, then open the form again.</p>
  <a class="button-link" href="/onboarding/${escapeHtml(token)}">Open the form again</a>
</section>`,
  });
}
