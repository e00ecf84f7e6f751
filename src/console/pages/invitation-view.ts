// The invitation page (docs/console.md#invitation): whom the link invites, and the form to set a password —
// the first one, or a new one through a password link (docs/console.md#password-links).
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
import { MIN_PASSWORD_LENGTH } from '../../users/passwords.ts';
import type { UserRole } from '../../users/service.ts';
import type { FormErrors, NewPasswordField } from './forms.ts';
import { consoleNotice, consolePage, csrfField, inputField } from './layout.ts';

export interface InvitationPage {
  locale: Locale;
  nonce: string;
  csrf: string;
  token: string;
  invitation: { email: string; role: UserRole; merchantName: string; expiresAt: Date; purpose: 'invitation' | 'new_password' };
  now: Date;
  errors: FormErrors<NewPasswordField>;
}

/** The words of a first invitation, and of a link that replaces a password (users/service.ts issuePasswordLink). */
const WORDS = {
  invitation: { title: 'console.invitation.title', intro: 'console.invitation.intro', submit: 'console.invitation.submit' },
  new_password: { title: 'console.password_link.title', intro: 'console.password_link.intro', submit: 'console.password_link.submit' },
} as const satisfies Record<string, Record<string, MessageKey>>;

export function renderInvitationPage({ locale, nonce, csrf, token, invitation, now, errors }: InvitationPage): string {
  const words = WORDS[invitation.purpose];
  const body = `<section class="card" aria-labelledby="invitation-heading">
  <h1 id="invitation-heading">${locale.html(words.title)}</h1>
  <p>${locale.html(words.intro, { merchant: invitation.merchantName, role: locale.t(`console.role.${invitation.role}`) })}</p>
  <p class="muted">${locale.html('console.invitation.valid', { deadline: locale.deadline(invitation.expiresAt, now) })}</p>
</section>
<section class="card">
  <form method="post" action="${escapeHtml(locale.href(`/console/invitations/${token}`))}" novalidate id="invitation-form">
  ${csrfField(csrf)}
  <label for="f-username">${locale.html('console.invitation.account')}</label>
  <input id="f-username" name="username" value="${escapeHtml(invitation.email)}" autocomplete="username" readonly>
  ${inputField({
    name: 'password', label: locale.t('console.field.new_password'), attributes: 'type="password" autocomplete="new-password" maxlength="200" required',
    hint: locale.t('console.field.new_password.hint', { min: MIN_PASSWORD_LENGTH }), error: errors.password, autofocus: errors.password !== undefined,
  })}
  ${inputField({
    name: 'password_confirmation', label: locale.t('console.field.password_confirmation'), attributes: 'type="password" autocomplete="new-password" maxlength="200" required',
    error: errors.password_confirmation, autofocus: errors.password === undefined && errors.password_confirmation !== undefined,
  })}
  <button type="submit" id="invitation-button">${locale.html(words.submit)}</button>
  </form>
</section>`;
  return consolePage({ locale, nonce, title: locale.t(words.title), body });
}

export type InvitationGone = 'used' | 'expired' | 'not_found';

export function renderInvitationGonePage(locale: Locale, nonce: string, why: InvitationGone): string {
  return consoleNotice(locale, nonce, `console.invitation.${why}.title` as MessageKey, `console.invitation.${why}.text` as MessageKey,
    { href: '/console/sign-in', label: 'console.go_to_sign_in' }, why);
}
