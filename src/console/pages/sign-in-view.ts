// The sign-in page (docs/console.md#sign-in): email and password, and why a try was refused.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { FormErrors, SignInField } from './forms.ts';
import { consolePage, csrfField, formAlert, inputField } from './layout.ts';

export interface SignInPage {
  locale: Locale;
  nonce: string;
  csrf: string;
  email: string;
  errors: FormErrors<SignInField>;
  /** Why the last try was refused as a whole: a wrong email or password, or the lock. */
  alert?: string;
}

export function renderSignInPage({ locale, nonce, csrf, email, errors, alert }: SignInPage): string {
  const firstWrong = errors.email ? 'email' : errors.password ? 'password' : null;
  const body = `<section class="card" aria-labelledby="sign-in-heading">
  <h1 id="sign-in-heading">${locale.html('console.sign_in.title')}</h1>
  ${formAlert(alert)}
  <form method="post" action="${escapeHtml(locale.href('/console/sign-in'))}" novalidate id="sign-in-form">
  ${csrfField(csrf)}
  ${inputField({ name: 'email', label: locale.t('console.field.email'), attributes: 'type="email" autocomplete="username" maxlength="254" required', value: email, error: errors.email, autofocus: firstWrong === 'email' })}
  ${inputField({ name: 'password', label: locale.t('console.field.password'), attributes: 'type="password" autocomplete="current-password" maxlength="200" required', error: errors.password, autofocus: firstWrong === 'password' || (alert !== undefined && firstWrong === null) })}
  <button type="submit" id="sign-in-button">${locale.html('console.sign_in.submit')}</button>
  </form>
  <p class="hint">${locale.html('console.sign_in.help')}</p>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.sign_in.title'), body });
}
