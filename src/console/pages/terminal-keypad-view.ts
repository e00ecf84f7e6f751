// The terminal's keypad (docs/console.md#pos-terminal): the amount in bolivianos, an optional description and
// "Cobrar". Without JavaScript it is a plain form with a number field; the script (terminal-scripts.ts)
// shows big keys that fill that field, as a till's keypad does: digits enter centavos from the right.
// Made for a 7-inch tablet and a phone held in one hand: keys of 64 px and more, nothing wider than 360 px.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { ConsoleSession } from '../../users/service.ts';
import type { FormErrors } from './forms.ts';
import { consolePage, csrfField, formAlert, inputField } from './layout.ts';
import type { ChargeField, ChargeFormValues } from './terminal-form.ts';
import { keypadScript } from './terminal-scripts.ts';
import { TERMINAL_STYLES } from './terminal-styles.ts';

export interface KeypadPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  values: ChargeFormValues;
  errors: FormErrors<ChargeField>;
  /** A refusal of the whole charge (the bank did not answer, a suspended business). */
  alert?: string;
}

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '00', '0'] as const;

export function renderKeypadPage({ locale, nonce, session, csrf, values, errors, alert }: KeypadPage): string {
  const keys = KEYS.map((key) => `<button type="button" data-key="${key}">${key}</button>`).join('\n    ');
  const body = `<section class="card" aria-labelledby="terminal-heading">
  <h1 id="terminal-heading">${locale.html('console.terminal.title')}</h1>
  ${formAlert(alert ?? errors._form)}
  <form method="post" action="${escapeHtml(locale.href('/console/terminal'))}" novalidate id="charge-form">
  ${csrfField(csrf)}
  <input type="hidden" name="idempotency_key" value="${escapeHtml(values.key)}">
  <div id="amount-display-block" hidden>
    <p class="hint" id="amount-display-label">${locale.html('console.terminal.amount')}</p>
    <output class="display" id="amount-display" for="f-amount" aria-labelledby="amount-display-label" aria-live="polite">${escapeHtml(locale.money(0))}</output>
    ${errors.amount ? `<p class="error" id="amount-display-error">${escapeHtml(errors.amount)}</p>` : ''}
    <div class="keys" role="group" aria-label="${escapeHtml(locale.t('console.terminal.keypad'))}">
    ${keys}
    <button type="button" data-key="back" aria-label="${escapeHtml(locale.t('console.terminal.backspace'))}">⌫</button>
    </div>
  </div>
  <div id="amount-field">
  ${inputField({ name: 'amount', label: locale.t('console.terminal.amount_field'), attributes: 'type="number" inputmode="decimal" step="0.01" min="0.10" max="100000" autocomplete="off" required', value: values.amount, hint: locale.t('console.terminal.amount_hint'), error: errors.amount, autofocus: errors.amount !== undefined })}
  </div>
  ${inputField({ name: 'description', label: locale.t('console.terminal.description'), attributes: 'type="text" maxlength="140" autocomplete="off"', value: values.description, error: errors.description, autofocus: errors.description !== undefined })}
  <button type="submit" class="charge" id="charge-button">${locale.html('console.terminal.charge')}</button>
  </form>
</section>`;
  return consolePage({
    locale, nonce, title: locale.t('console.terminal.title'), body, styles: TERMINAL_STYLES,
    script: keypadScript(locale), session: { session, csrf, current: '/console/terminal' },
  });
}
