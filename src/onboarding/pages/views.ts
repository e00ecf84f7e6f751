// Templates of the hosted onboarding flow (docs/onboarding.md): registration form, activation payment, done page
// with the first API key, and the 404 / 410 pages, in the visitor's language (kernel/i18n). Mobile-first,
// a label on every input, every piece of data through escapeHtml; the shell, styles and CSP nonce are the
// hosted pages' kit (kernel/page-kit.ts).
import type { BankConfig } from '../../config.ts';
import type { Centavos } from '../../money.ts';
import { countdownMarkup, countdownScript } from '../../kernel/countdown.ts';
import { escapeHtml, jsonForScript } from '../../kernel/html.ts';
import { Markup, type Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
import { noticePage, pageShell } from '../../kernel/page-kit.ts';
import type { IntentRow } from '../store.ts';
import type { FormErrors, FormField, FormValues } from './registration-form.ts';

const FLOW_STYLES = `
select { width: 100%; font: inherit; padding: .6rem .7rem; border: 1px solid #8c959f; border-radius: 8px; background: #fff; }
.hint { color: var(--muted); font-size: .9rem; margin: .2rem 0 0; }
.secondary { background: #fff; color: var(--bad); border: 1px solid var(--line); }
.steps { display: flex; gap: .5rem; list-style: none; padding: 0; margin: 0 0 1rem; font-size: .9rem; color: var(--muted); }
.steps li[aria-current="step"] { color: var(--accent); font-weight: 700; }
.key { font: 600 1rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; border: 1px solid var(--line);
  border-radius: 8px; padding: .75rem; overflow-wrap: anywhere; user-select: all; }
.section { margin-top: 1.25rem; }
.error-summary { border: 2px solid var(--bad); border-radius: 8px; padding: .75rem; margin-bottom: 1rem; }
`;

interface Shell {
  locale: Locale;
  nonce: string;
  title: string;
  body: string;
  script?: string;
}

function shell({ locale, nonce, title, body, script }: Shell): string {
  return pageShell({ locale, title, nonce, body, styles: FLOW_STYLES, script });
}

function steps(locale: Locale, current: 1 | 2 | 3, withPayment: boolean): string {
  const keys: MessageKey[] = withPayment
    ? ['onboarding.step.business', 'onboarding.step.payment', 'onboarding.step.key']
    : ['onboarding.step.business', 'onboarding.step.key'];
  const index = withPayment ? current : current === 1 ? 1 : 2;
  return `<ol class="steps" aria-label="${escapeHtml(locale.t('onboarding.steps'))}">${keys.map((key, i) =>
    `<li${i + 1 === index ? ' aria-current="step"' : ''}>${locale.integer(i + 1)}. ${locale.html(key)}</li>`).join('')}</ol>`;
}

function cancelForm(locale: Locale, token: string, csrf: string): string {
  return `<form method="post" action="${escapeHtml(locale.href(`/onboarding/${token}/cancel`))}">
  <input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">
  <button type="submit" class="secondary" id="cancel-button">${locale.html('onboarding.cancel')}</button>
</form>`;
}

/** Each field's input attributes, and whether it has a hint (`onboarding.field.<name>.hint`). */
const FIELDS: Record<FormField, { attributes: string; hint?: true }> = {
  legal_name: { attributes: 'autocomplete="organization" maxlength="200" required' },
  trade_name: { attributes: 'maxlength="200" required', hint: true },
  tax_id: { attributes: 'inputmode="numeric" maxlength="15" required', hint: true },
  email: { attributes: 'type="email" autocomplete="email" maxlength="254" required' },
  phone: { attributes: 'type="tel" autocomplete="tel" maxlength="20" required' },
  city: { attributes: 'autocomplete="address-level2" maxlength="100" required' },
  mcc: { attributes: 'inputmode="numeric" maxlength="4"', hint: true },
  bank_code: { attributes: 'required' },
  account_number: { attributes: 'autocomplete="off" maxlength="34" required', hint: true }, // hyphens: no numeric keypad
  account_holder: { attributes: 'autocomplete="off" maxlength="100" required' },
};

/** The fields in the order the form shows them. */
const SHOWN_ORDER: readonly FormField[] = [
  'legal_name', 'trade_name', 'tax_id', 'city', 'mcc', 'email', 'phone', 'bank_code', 'account_number', 'account_holder',
];

export interface FormPageInput {
  locale: Locale;
  nonce: string;
  intent: IntentRow;
  token: string;
  csrf: string;
  values: FormValues;
  errors: FormErrors;
  banks: readonly BankConfig[];
  feeCentavos: Centavos;
  now: Date;
}

export function renderFormPage(input: FormPageInput): string {
  const { locale, nonce, intent, token, csrf, values, errors, banks, feeCentavos, now } = input;
  const field = (name: FormField) => {
    const { attributes } = FIELDS[name];
    const label = locale.t(`onboarding.field.${name}`);
    const hint = FIELDS[name].hint ? locale.t(`onboarding.field.${name}.hint` as MessageKey) : undefined;
    const id = `f-${name}`;
    const error = errors[name];
    const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
    // The first wrong field takes the focus, so the visitor lands on what to fix.
    const focus = name === SHOWN_ORDER.find((field) => errors[field] !== undefined) ? ' autofocus' : '';
    const aria = `${error ? ' aria-invalid="true"' : ''}${described ? ` aria-describedby="${described}"` : ''}${focus}`;
    const control = name === 'bank_code'
      ? `<select id="${id}" name="${name}" ${attributes}${aria}>
    <option value="">${locale.html('onboarding.form.choose_bank')}</option>
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
    ? `<p class="muted">${locale.html('onboarding.form.fee', { fee: new Markup(`<strong>${escapeHtml(locale.money(feeCentavos))}</strong>`) })}</p>`
    : '';
  const body = `<section class="card" aria-labelledby="form-heading">
  ${steps(locale, 1, feeCentavos > 0)}
  <h1 id="form-heading">${locale.html('onboarding.form.title')}</h1>
  <p class="muted">${locale.html('onboarding.form.complete_by', { deadline: locale.deadline(intent.expires_at, now) })}</p>
  ${fee}
</section>
<section class="card">
  ${errorCount > 0 ? `<div class="error-summary" role="alert" id="error-summary"><p class="error">${escapeHtml(errors._form ?? locale.plural('onboarding.form.errors', errorCount))}</p></div>` : ''}
  <form method="post" action="${escapeHtml(locale.href(`/onboarding/${token}`))}" novalidate id="registration-form">
  <input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">
  <h2>${locale.html('onboarding.form.section.business')}</h2>
  ${field('legal_name')}
  ${field('trade_name')}
  ${field('tax_id')}
  ${field('city')}
  ${field('mcc')}
  <h2 class="section">${locale.html('onboarding.form.section.contact')}</h2>
  ${field('email')}
  ${field('phone')}
  <h2 class="section">${locale.html('onboarding.form.section.payout')}</h2>
  ${field('bank_code')}
  ${field('account_number')}
  ${field('account_holder')}
  <button type="submit" id="submit-button">${locale.html(feeCentavos > 0 ? 'onboarding.form.submit_with_fee' : 'onboarding.form.submit')}</button>
  </form>
</section>
<section class="card">
  ${cancelForm(locale, token, csrf)}
</section>`;
  return shell({ locale, nonce, title: locale.t('onboarding.form.title'), body });
}

export interface PaymentPageInput {
  locale: Locale;
  nonce: string;
  intent: IntentRow;
  token: string;
  csrf: string;
  qrImage: string | null;
  feeCentavos: Centavos;
  bankName: string;
  sandbox: boolean;
  now: Date;
  error?: string;
  /** A bank's rail issued no activation QR (refused, or no answer): say so and offer to try again. */
  unprepared?: boolean;
}

export function renderPaymentPage(input: PaymentPageInput): string {
  const { locale, nonce, intent, token, csrf, qrImage, feeCentavos, bankName, sandbox, now, error, unprepared = false } = input;
  const fee = locale.money(feeCentavos);
  const body = `<section class="card" aria-labelledby="pay-heading">
  ${steps(locale, 2, true)}
  <h1 id="pay-heading">${locale.html('onboarding.payment.title')}</h1>
  <p class="muted">${escapeHtml(intent.trade_name ?? '')}</p>
  <p class="amount" data-field="fee">${escapeHtml(fee)}</p>
  <div id="expiry">
  <p class="muted">${locale.html('onboarding.payment.pay_by', { deadline: locale.deadline(intent.expires_at, now) })}</p>
  ${countdownMarkup(locale)}
  </div>
  <p class="status" id="status" role="status" aria-live="polite" data-state="ACTIVE">${locale.html('pay.status.ACTIVE')}</p>
  ${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
</section>
<section class="card" id="pay-section" aria-labelledby="scan-heading">
  <h2 id="scan-heading">${locale.html('pay.scan.heading')}</h2>
  ${qrImage ? `<img class="qr" src="${escapeHtml(qrImage)}" width="280" height="280" alt="${escapeHtml(locale.t('onboarding.payment.qr_alt', { fee }))}">` : ''}
  ${unprepared ? unpreparedNotice(locale, token) : `<p class="muted">${locale.html('onboarding.payment.help')}</p>`}
</section>
${sandbox ? `<section class="card sandbox" id="simulate" aria-labelledby="simulate-heading">
  <h2 id="simulate-heading">${locale.html('pay.simulate.heading')}</h2>
  <p class="muted">${locale.html('onboarding.payment.simulate_note')}</p>
  <form method="post" action="${escapeHtml(locale.href(`/onboarding/${token}/simulate-payment`))}">
  <input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">
  <button type="submit" id="simulate-button">${locale.html('pay.simulate.submit')}</button>
  </form>
</section>` : ''}
<section class="card" aria-labelledby="summary-heading">
  <h2 id="summary-heading">${locale.html('onboarding.summary.heading')}</h2>
  <dl>
    <dt>${locale.html('onboarding.field.legal_name')}</dt><dd>${escapeHtml(intent.legal_name ?? '')}</dd>
    <dt>${locale.html('onboarding.field.tax_id')}</dt><dd>${escapeHtml(intent.tax_id ?? '')}</dd>
    <dt>${locale.html('onboarding.field.city')}</dt><dd>${escapeHtml(intent.city ?? '')}</dd>
    <dt>${locale.html('onboarding.field.email')}</dt><dd>${escapeHtml(intent.email ?? '')}</dd>
    <dt>${locale.html('onboarding.summary.payout_to')}</dt><dd>${escapeHtml(bankName)}</dd>
    <dt>${locale.html('onboarding.summary.account')}</dt><dd data-field="account">${escapeHtml(intent.payout_account_masked ?? '')}</dd>
    <dt>${locale.html('onboarding.field.account_holder')}</dt><dd>${escapeHtml(intent.payout_account_holder ?? '')}</dd>
  </dl>
  ${cancelForm(locale, token, csrf)}
</section>`;
  return shell({ locale, nonce, title: locale.t('onboarding.payment.title'), body, script: pollScript(locale, token, intent.expires_at, now) });
}

/** No activation QR yet: the bank refused it or did not answer. Reloading the step (the link) issues it. */
function unpreparedNotice(locale: Locale, token: string): string {
  return `<p class="error" role="alert" id="payment-unprepared">${locale.html('onboarding.payment.unprepared')}</p>
  <a class="button-link" id="retry-link" href="${escapeHtml(locale.href(`/onboarding/${token}`))}">${locale.html('onboarding.payment.retry')}</a>`;
}

/**
 * Polls the flow's status every 2 s; the done page once completed, a reload (the 410 page) once closed
 * otherwise. The countdown to the link's expiry turns the page to its expired state at zero.
 */
function pollScript(locale: Locale, token: string, expiresAt: Date, now: Date): string {
  return `(function () {
  var base = ${jsonForScript(`/onboarding/${token}`)};
  var done = ${jsonForScript(locale.href(`/onboarding/${token}/done`))};
  var expiredText = ${jsonForScript(locale.t('onboarding.gone.expired.title'))};
  var live = true;
  ${countdownScript(locale, expiresAt, now)}
  countdown.start(function () {
    live = false;
    ['pay-section', 'simulate', 'expiry'].forEach(function (id) { var e = document.getElementById(id); if (e) e.hidden = true; });
    var status = document.getElementById('status');
    status.textContent = expiredText;
    status.setAttribute('data-state', 'CANCELED');
  }, function () { return live; });
  function later(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }
  async function poll() {
    for (;;) {
      await later(2000);
      try {
        var response = await fetch(base + '/status', { cache: 'no-store', headers: { accept: 'application/json' } });
        if (response.status === 200) continue;
        var body = await response.json();
        if (body.status === 'completed') { location.assign(done); return; }
        if (body.status === 'cancelled' || body.status === 'expired') { location.reload(); return; }
      } catch (e) { /* try again */ }
    }
  }
  poll();
})();`;
}

export interface DonePageInput {
  locale: Locale;
  nonce: string;
  merchantName: string;
  businessCode: number;
  apiKey: string;
  successLink: string | null;
  withPayment: boolean;
}

export function renderDonePage(input: DonePageInput): string {
  const { locale, nonce, merchantName, businessCode, apiKey, successLink, withPayment } = input;
  const body = `<section class="card" aria-labelledby="done-heading">
  ${steps(locale, 3, withPayment)}
  <h1 id="done-heading">${locale.html('onboarding.done.title')}</h1>
  <p class="status" role="status" data-state="PAID">${locale.html('onboarding.done.registered', { merchant: merchantName })}</p>
  <dl class="section">
    <dt>${locale.html('onboarding.done.business_code')}</dt><dd data-field="business-code">${escapeHtml(businessCode)}</dd>
  </dl>
</section>
<section class="card" aria-labelledby="key-heading">
  <h2 id="key-heading">${locale.html('onboarding.done.key_heading')}</h2>
  <p><strong>${locale.html('onboarding.done.key_once')}</strong> ${locale.html('onboarding.done.key_use')}</p>
  <p class="key" id="api-key" data-field="api-key">${escapeHtml(apiKey)}</p>
  <p class="hint">${locale.html('onboarding.done.key_lost')}</p>
  ${successLink ? `<a class="button-link" id="continue-link" href="${escapeHtml(successLink)}">${locale.html('onboarding.done.continue')}</a>` : ''}
</section>`;
  return shell({ locale, nonce, title: locale.t('onboarding.done.title'), body });
}

export type GoneReason = 'expired' | 'cancelled' | 'used';

export function renderGonePage(locale: Locale, nonce: string, reason: GoneReason): string {
  return noticePage({
    locale, nonce, title: locale.t(`onboarding.gone.${reason}.title`), text: locale.t(`onboarding.gone.${reason}.text`), state: 'CANCELED', reason,
  });
}

export function renderNotFoundPage(locale: Locale, nonce: string): string {
  return noticePage({ locale, nonce, title: locale.t('onboarding.not_found.title'), text: locale.t('onboarding.not_found.text'), state: 'NOT_FOUND' });
}

export function renderCancelledPage(locale: Locale, nonce: string): string {
  return noticePage({ locale, nonce, title: locale.t('onboarding.cancelled.title'), text: locale.t('onboarding.cancelled.text'), state: 'CANCELED' });
}

export function renderCookieProblemPage(locale: Locale, nonce: string, token: string): string {
  return shell({
    locale,
    nonce,
    title: locale.t('onboarding.cookie.title'),
    body: `<section class="card" aria-labelledby="cookie-heading">
  <h1 id="cookie-heading">${locale.html('onboarding.cookie.title')}</h1>
  <p class="error" role="alert">${locale.html('onboarding.cookie.text')}</p>
  <a class="button-link" href="${escapeHtml(locale.href(`/onboarding/${token}`))}">${locale.html('onboarding.cookie.reopen')}</a>
</section>`,
  });
}
