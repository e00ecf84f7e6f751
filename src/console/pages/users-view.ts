// The owner's users page (docs/console.md#users): the people with access to the business's console, the form
// to invite a cashier, a new password link for a cashier (docs/console.md#password-links), and — once — the
// link of a new invitation or password link.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
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
  // A cashier who has an account gets a new password link (forgotten, or disabled and coming back); one
  // still invited gets the invitation sent again from the form below.
  const link = user.role === 'cashier' && user.status !== 'invited'
    ? `<form method="post" action="${escapeHtml(locale.href(`/console/users/${user.id}/link`))}">
      ${csrfField(csrf)}
      <button type="submit" class="secondary" aria-label="${escapeHtml(locale.t('console.users.link_label', { email: user.email }))}">${locale.html('console.users.link')}</button>
      </form>`
    : '';
  return `<li class="row" data-user="${user.id}">
    <div class="what"><p><strong>${escapeHtml(user.email)}</strong>${you}</p>
    <p class="hint">${locale.html(`console.role.${user.role}`)} · <span data-field="status">${locale.html(`console.status.${user.status}`)}</span></p></div>
    ${link}
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
  /** A first invitation, a new password for an active cashier, or the way back for a disabled one. */
  kind: 'invitation' | 'new_password' | 'comeback';
}

const LINK_WORDS = {
  invitation: { title: 'console.users.invited.title', text: 'console.users.invited.text' },
  new_password: { title: 'console.users.link.title', text: 'console.users.link.text' },
  comeback: { title: 'console.users.link.title', text: 'console.users.link.text_disabled' },
} as const satisfies Record<InvitedPage['kind'], Record<string, MessageKey>>;

/** A new invitation's or password link's address, shown this once (the answer to the form; never stored in clear). */
export function renderInvitedPage({ locale, nonce, session, csrf, email, link, expiresAt, now, kind }: InvitedPage): string {
  const words = LINK_WORDS[kind];
  const body = `<section class="card" aria-labelledby="invited-heading">
  <h1 id="invited-heading">${locale.html(words.title)}</h1>
  <p>${locale.html(words.text, { email, deadline: locale.deadline(expiresAt, now) })}</p>
  <p class="link" id="invitation-link" data-field="invitation-link">${escapeHtml(link)}</p>
  <a class="button-link" href="${escapeHtml(locale.href('/console/users'))}">${locale.html('console.users.invited.back')}</a>
</section>`;
  return consolePage({ locale, nonce, title: locale.t(words.title), body, session: { session, csrf, current: '/console/users' } });
}
