// The owner's sessions page (docs/console.md#sessions): every browser signed in to the business's console —
// who, which device (its User-Agent), since when, last used — each with a button that ends it.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { ConsoleSession, SessionListingRow } from '../../users/service.ts';
import { consolePage, csrfField } from './layout.ts';

export interface SessionsPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  sessions: readonly SessionListingRow[];
}

function sessionRow(locale: Locale, listed: SessionListingRow, session: ConsoleSession, csrf: string): string {
  const device = listed.user_agent === '' ? locale.t('console.sessions.unknown_device') : listed.user_agent;
  const current = listed.id === session.sessionId ? ` <strong>(${locale.html('console.sessions.this')})</strong>` : '';
  return `<li class="row" data-session="${listed.id}">
    <div class="what">
    <p><strong>${escapeHtml(listed.email)}</strong> · ${locale.html(`console.role.${listed.role}`)}${current}</p>
    <p class="hint">${locale.html('console.sessions.device')}: ${escapeHtml(device)}</p>
    <p class="hint">${locale.html('console.sessions.created')}: ${escapeHtml(locale.dateTime(listed.created_at))} · ${locale.html('console.sessions.last_seen')}: ${escapeHtml(locale.dateTime(listed.last_seen_at))}</p>
    </div>
    <form method="post" action="${escapeHtml(locale.href(`/console/sessions/${listed.id}/end`))}">
    ${csrfField(csrf)}
    <button type="submit" class="danger" aria-label="${escapeHtml(locale.t('console.sessions.end_label', { email: listed.email, device }))}">${locale.html('console.sessions.end')}</button>
    </form>
  </li>`;
}

export function renderSessionsPage({ locale, nonce, session, csrf, sessions }: SessionsPage): string {
  const body = `<section class="card" aria-labelledby="sessions-heading">
  <h1 id="sessions-heading">${locale.html('console.sessions.title')}</h1>
  <p class="hint">${locale.html('console.sessions.intro')}</p>
  <ul class="rows" id="sessions">
  ${sessions.map((listed) => sessionRow(locale, listed, session, csrf)).join('\n  ')}
  </ul>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.sessions.title'), body, session: { session, csrf, current: '/console/sessions' } });
}
