// The owner's users page (docs/console.md#users): the people with access to the business's console, the form
// to invite a cashier, and — once — the link of a new invitation.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { ConsoleSession, UserRow } from '../../users/service.ts';
import type { FormErrors } from './forms.ts';
import { consolePage, csrfField, formAlert, inputField } from './layout.ts';

export interface UsersPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  users: readonly UserRow[];
  /** The invite form as sent, when it was refused. */
  invite: { email: string; errors: FormErrors<'email'>; alert?: string };
}

function userRow(locale: Locale, user: UserRow, session: ConsoleSession, csrf: string): string {
  const you = user.id === session.userId ? ` ${locale.html('console.users.you')}` : '';
  // Only a cashier who is not disabled yet can be disabled; owners are the operator's to change.
  const disable = user.role === 'cashier' && user.status !== 'disabled'
    ? `<form method="post" action="${escapeHtml(locale.href(`/console/users/${user.id}/disable`))}">
      ${csrfField(csrf)}
      <button type="submit" class="danger" aria-label="${escapeHtml(locale.t('console.users.disable_label', { email: user.email }))}">${locale.html('console.users.disable')}</button>
      </form>`
    : '';
  return `<li class="row" data-user="${user.id}">
    <div class="what"><p><strong>${escapeHtml(user.email)}</strong>${you}</p>
    <p class="hint">${locale.html(`console.role.${user.role}`)} · <span data-field="status">${locale.html(`console.status.${user.status}`)}</span></p></div>
    ${disable}
  </li>`;
}

export function renderUsersPage({ locale, nonce, session, csrf, users, invite }: UsersPage): string {
  const body = `<section class="card" aria-labelledby="users-heading">
  <h1 id="users-heading">${locale.html('console.users.title')}</h1>
  <h2>${locale.html('console.users.list')}</h2>
  <ul class="rows" id="users">
  ${users.map((user) => userRow(locale, user, session, csrf)).join('\n  ')}
  </ul>
</section>
<section class="card" aria-labelledby="invite-heading">
  <h2 id="invite-heading">${locale.html('console.users.invite.heading')}</h2>
  <p class="hint">${locale.html('console.users.invite.text')}</p>
  ${formAlert(invite.alert)}
  <form method="post" action="${escapeHtml(locale.href('/console/users'))}" novalidate id="invite-form">
  ${csrfField(csrf)}
  ${inputField({ name: 'email', label: locale.t('console.field.cashier_email'), attributes: 'type="email" autocomplete="off" maxlength="254" required', value: invite.email, error: invite.errors.email, autofocus: invite.errors.email !== undefined })}
  <button type="submit" id="invite-button">${locale.html('console.users.invite.submit')}</button>
  </form>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.users.title'), body, session: { session, csrf, current: '/console/users' } });
}

export interface InvitedPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  email: string;
  link: string;
  expiresAt: Date;
  now: Date;
}

/** The new invitation's link, shown this once (the answer to the invite form; never stored in clear). */
export function renderInvitedPage({ locale, nonce, session, csrf, email, link, expiresAt, now }: InvitedPage): string {
  const body = `<section class="card" aria-labelledby="invited-heading">
  <h1 id="invited-heading">${locale.html('console.users.invited.title')}</h1>
  <p>${locale.html('console.users.invited.text', { email, deadline: locale.deadline(expiresAt, now) })}</p>
  <p class="link" id="invitation-link" data-field="invitation-link">${escapeHtml(link)}</p>
  <a class="button-link" href="${escapeHtml(locale.href('/console/users'))}">${locale.html('console.users.invited.back')}</a>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.users.invited.title'), body, session: { session, csrf, current: '/console/users' } });
}
