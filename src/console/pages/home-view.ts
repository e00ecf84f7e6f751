// The console's home (docs/console.md#home): the business, who is signed in, and the sections that exist for
// their role — everyone's terminal and today's QRs; an owner's users and sessions too. The owner's other
// sections (payments, payouts, settings) are not built yet, and the page says so.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { ConsoleSession } from '../../users/service.ts';
import { consolePage } from './layout.ts';

export function renderHomePage(locale: Locale, nonce: string, session: ConsoleSession, csrf: string): string {
  const owner = session.role === 'owner';
  const terminal = `<li class="row"><div class="what"><p><a href="${escapeHtml(locale.href('/console/terminal'))}" id="terminal-link">${locale.html('console.home.terminal')}</a></p>
      <p class="hint">${locale.html('console.home.terminal.text')}</p></div></li>
    <li class="row"><div class="what"><p><a href="${escapeHtml(locale.href('/console/terminal/today'))}" id="today-link">${locale.html('console.home.today')}</a></p>
      <p class="hint">${locale.html('console.home.today.text')}</p></div></li>`;
  const sections = owner
    ? `<ul class="rows">
    ${terminal}
    <li class="row"><div class="what"><p><a href="${escapeHtml(locale.href('/console/users'))}" id="users-link">${locale.html('console.home.users')}</a></p>
      <p class="hint">${locale.html('console.home.users.text')}</p></div></li>
    <li class="row"><div class="what"><p><a href="${escapeHtml(locale.href('/console/sessions'))}" id="sessions-link">${locale.html('console.home.sessions')}</a></p>
      <p class="hint">${locale.html('console.home.sessions.text')}</p></div></li>
  </ul>
  <p class="hint">${locale.html('console.home.not_built')}</p>`
    : `<ul class="rows">
    ${terminal}
  </ul>`;
  const body = `<section class="card" aria-labelledby="home-heading">
  <h1 id="home-heading">${escapeHtml(session.merchantName)}</h1>
  <h2>${locale.html('console.home.sections')}</h2>
  ${sections}
</section>`;
  return consolePage({ locale, nonce, title: session.merchantName, body, session: { session, csrf, current: '/console' } });
}
