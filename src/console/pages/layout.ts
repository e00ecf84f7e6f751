// The frame of every console page (docs/console.md): the hosted pages' kit (kernel/page-kit.ts: one
// stylesheet, CSP nonce, language switch), a header naming the business and who is signed in, the
// sections this person may open, and the sign-out form. Every piece of data through escapeHtml.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
import { noticePage, pageShell } from '../../kernel/page-kit.ts';
import type { ConsoleSession } from '../../users/service.ts';
import { mayOpen, type ConsoleAccess } from './guard.ts';
import { LIST_STYLES } from './lists.ts';

const CONSOLE_STYLES = `
main { max-width: 48rem; }
.hint { color: var(--muted); font-size: .9rem; margin: .2rem 0 0; }
.who { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: center; justify-content: space-between; }
.who p { margin: 0; overflow-wrap: anywhere; }
.who form button, .row form button { width: auto; margin-top: 0; padding: .5rem .9rem; }
.secondary { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
.danger { background: #fff; color: var(--bad); border: 1px solid var(--bad); }
nav.sections ul { list-style: none; display: flex; flex-wrap: wrap; gap: .5rem 1rem; padding: 0; margin: .75rem 0 0; }
nav.sections a { display: inline-block; padding: .35rem 0; }
nav.sections a[aria-current="page"] { font-weight: 700; color: var(--ink); }
.rows { list-style: none; padding: 0; margin: 0; }
.row { border-top: 1px solid var(--line); padding: .75rem 0; display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; }
.row:first-child { border-top: 0; }
.row .what { min-width: 0; flex: 1 1 14rem; }
.row .what p { margin: 0; overflow-wrap: anywhere; }
.link { font: 600 .95rem/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa; border: 1px solid var(--line);
  border-radius: 8px; padding: .75rem; overflow-wrap: anywhere; user-select: all; }
select { font: inherit; padding: .6rem .7rem; border: 1px solid #8c959f; border-radius: 8px; background: #fff; color: var(--ink); }
.error-summary { border: 2px solid var(--bad); border-radius: 8px; padding: .75rem; margin-bottom: 1rem; }
`;

/**
 * The console's sections, each with who may open it and the line the home page says of it: the nav and the
 * home show a person only what the guard lets them open. A section is listed here once its pages exist.
 */
export interface ConsoleSection {
  path: string;
  label: MessageKey;
  hint: MessageKey;
  access: ConsoleAccess;
}

const SECTIONS: readonly ConsoleSection[] = [
  { path: '/console', label: 'console.nav.home', hint: 'console.nav.home', access: 'cashier' },
  { path: '/console/terminal', label: 'console.nav.terminal', hint: 'console.home.terminal.text', access: 'cashier' },
  { path: '/console/terminal/today', label: 'console.nav.today', hint: 'console.home.today.text', access: 'cashier' },
  { path: '/console/qrs', label: 'console.nav.qrs', hint: 'console.home.qrs.text', access: 'owner' },
  { path: '/console/payments', label: 'console.nav.payments', hint: 'console.home.payments.text', access: 'owner' },
  { path: '/console/refunds', label: 'console.nav.refunds', hint: 'console.home.refunds.text', access: 'owner' },
  { path: '/console/movements', label: 'console.nav.movements', hint: 'console.home.movements.text', access: 'owner' },
  { path: '/console/statement', label: 'console.nav.statement', hint: 'console.home.statement.text', access: 'owner' },
  { path: '/console/transfers', label: 'console.nav.transfers', hint: 'console.home.transfers.text', access: 'owner' },
  { path: '/console/keys', label: 'console.nav.keys', hint: 'console.home.keys.text', access: 'owner' },
  { path: '/console/webhooks', label: 'console.nav.webhooks', hint: 'console.home.webhooks.text', access: 'owner' },
  { path: '/console/events', label: 'console.nav.events', hint: 'console.home.events.text', access: 'owner' },
  { path: '/console/users', label: 'console.nav.users', hint: 'console.home.users.text', access: 'owner' },
  { path: '/console/sessions', label: 'console.nav.sessions', hint: 'console.home.sessions.text', access: 'owner' },
];

/** The sections `role` may open, in the nav's order. */
export function sectionsFor(role: ConsoleSession['role']): ConsoleSection[] {
  return SECTIONS.filter((section) => mayOpen(role, section.access));
}

export interface ConsolePage {
  locale: Locale;
  nonce: string;
  title: string;
  body: string;
  /** The signed-in person: the header, the sections and the sign-out form. Absent on the sign-in and invitation pages. */
  session?: { session: ConsoleSession; csrf: string; current: string };
  /** Styles of this page only (the terminal's big keys), after the console's. */
  styles?: string;
  /** The page's script, run under the response's CSP nonce. */
  script?: string;
  /** More for <head> (the QR screen's no-script refresh); escaped by the caller. */
  head?: string;
}

/** What every signed-in page's view is given: the language, the CSP nonce, the person and their CSRF field. */
export interface Framed {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
}

/** A signed-in page of the section at `current` (the nav marks it), titled `title`. */
export function framedPage({ locale, nonce, session, csrf }: Framed, current: string, title: string, body: string): string {
  return consolePage({ locale, nonce, title, body, session: { session, csrf, current } });
}

/** The colour of the installed app's title bar: the pages' accent (kernel/page-kit.ts --accent). */
export const THEME_COLOUR = '#0b5cad';

/**
 * Every console page names the web app manifest (manifest.ts), so a tablet or phone can install the terminal,
 * and its icon as the tab's: without one the browser asks for /favicon.ico, a 404 logged as an error in the
 * console of every page (Lighthouse's best practices, test/console/lighthouse.browser.test.ts).
 */
const appHead = (locale: Locale) => `<link rel="manifest" href="${escapeHtml(locale.pathOf('/console/manifest.webmanifest'))}">
<link rel="icon" type="image/png" href="${escapeHtml(locale.pathOf('/console/icons/icon-192.png'))}">
<meta name="theme-color" content="${THEME_COLOUR}">`;

export function consolePage({ locale, nonce, title, body, session, styles = '', script, head = '' }: ConsolePage): string {
  return pageShell({
    locale, nonce, title, script,
    head: `${appHead(locale)}${head ? `\n${head}` : ''}`,
    body: `${session ? header(locale, session.session, session.csrf, session.current) : ''}${body}`,
    styles: CONSOLE_STYLES + LIST_STYLES + styles,
  });
}

function header(locale: Locale, session: ConsoleSession, csrf: string, current: string): string {
  const sections = sectionsFor(session.role);
  return `<header class="card">
  <div class="who">
  <p><strong>${escapeHtml(session.merchantName)}</strong></p>
  <form method="post" action="${escapeHtml(locale.href('/console/sign-out'))}">
  ${csrfField(csrf)}
  <button type="submit" class="secondary" id="sign-out-button">${locale.html('console.sign_out')}</button>
  </form>
  </div>
  <p class="muted" id="signed-in-as">${locale.html('console.signed_in_as', { email: session.email, role: locale.t(`console.role.${session.role}`) })}</p>
  <nav class="sections" aria-label="${escapeHtml(locale.t('console.nav.label'))}"><ul>
  ${sections.map((section) => `<li><a href="${escapeHtml(locale.href(section.path))}"${section.path === current ? ' aria-current="page"' : ''}>${locale.html(section.label)}</a></li>`).join('\n  ')}
  </ul></nav>
</header>`;
}

/** The hidden field every console form carries (guard.ts checks it). */
export function csrfField(csrf: string): string {
  return `<input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">`;
}

/** A one-card page: a refusal, a link that no longer works; with a link onwards. */
export function consoleNotice(locale: Locale, nonce: string, title: MessageKey, text: MessageKey, next: { href: string; label: MessageKey }, reason?: string): string {
  return noticePage({
    locale, nonce, title: locale.t(title), text: locale.t(text), state: 'NOT_FOUND', reason,
    more: `<a class="button-link" href="${escapeHtml(locale.href(next.href))}">${locale.html(next.label)}</a>`,
  });
}

export interface InputField {
  name: string;
  label: string;
  attributes: string;
  value?: string;
  hint?: string;
  error?: string;
  autofocus?: boolean;
}

/** A labelled input with its hint and error, tied together for screen readers. */
export function inputField({ name, label, attributes, value = '', hint, error, autofocus = false }: InputField): string {
  const id = `f-${name}`;
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const aria = `${error ? ' aria-invalid="true"' : ''}${described ? ` aria-describedby="${described}"` : ''}${autofocus ? ' autofocus' : ''}`;
  return `<label for="${id}">${escapeHtml(label)}</label>
  <input id="${id}" name="${name}" value="${escapeHtml(value)}" ${attributes}${aria}>
  ${hint ? `<p class="hint" id="${id}-hint">${escapeHtml(hint)}</p>` : ''}
  ${error ? `<p class="error" id="${id}-error">${escapeHtml(error)}</p>` : ''}`;
}

/** The alert above a form that was refused as a whole (a wrong password, a lock, an email taken). */
export function formAlert(text: string | undefined): string {
  return text ? `<div class="error-summary" role="alert" id="form-alert"><p class="error">${escapeHtml(text)}</p></div>` : '';
}
