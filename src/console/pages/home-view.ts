// The console's home (docs/console.md#home): the business, who is signed in, and the sections that exist for
// their role — an owner's users and sessions; a cashier's terminal is not built yet, and the page says so.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { ConsoleSession } from '../../users/service.ts';
import { consolePage } from './layout.ts';

export function renderHomePage(locale: Locale, nonce: string, session: ConsoleSession, csrf: string): string {
  const owner = session.role === 'owner';
  const sections = owner
    ? `<ul class="rows">
    <li class="row"><div class="what"><p><a href="${escapeHtml(locale.href('/console/users'))}" id="users-link">${locale.html('console.home.users')}</a></p>
      <p class="hint">${locale.html('console.home.users.text')}</p></div></li>
    <li class="row"><div class="what"><p><a href="${escapeHtml(locale.href('/console/sessions'))}" id="sessions-link">${locale.html('console.home.sessions')}</a></p>
      <p class="hint">${locale.html('console.home.sessions.text')}</p></div></li>
  </ul>
  <p class="hint">${locale.html('console.home.not_built')}</p>`
    : `<h3>${locale.html('console.home.terminal')}</h3>
  <p class="muted" id="terminal-soon">${locale.html('console.home.terminal.soon')}</p>`;
  const body = `<section class="card" aria-labelledby="home-heading">
  <h1 id="home-heading">${escapeHtml(session.merchantName)}</h1>
  <h2>${locale.html('console.home.sections')}</h2>
  ${sections}
</section>`;
  return consolePage({ locale, nonce, title: session.merchantName, body, session: { session, csrf, current: '/console' } });
}
