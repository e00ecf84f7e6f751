// Today's QRs (docs/console.md#pos-terminal), for cashiers and owners: each QR made today in the service's time
// zone, newest first, with its time, amount, status and a link to its QR screen.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { QrWithLastPayment } from '../../qr/service.ts';
import { effectiveState } from '../../qr/state.ts';
import type { ConsoleSession } from '../../users/service.ts';
import { consolePage } from './layout.ts';
import { TERMINAL_STYLES } from './terminal-styles.ts';

export interface TodayPage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  qrs: readonly QrWithLastPayment[];
  now: Date;
  /** The day may hold more QRs than the list shows (it shows the newest ones). */
  more: boolean;
  limit: number;
}

function statusText(locale: Locale, { qr }: QrWithLastPayment, now: Date): { state: string; text: string } {
  const state = effectiveState(qr, now);
  if (state.status === 'CANCELED') return { state: 'CANCELED', text: locale.t(state.cancelReason === 'expired' ? 'console.today.status.expired' : 'console.today.status.canceled') };
  return { state: state.status, text: locale.t(state.status === 'PAID' ? 'console.today.status.paid' : 'console.today.status.active') };
}

function row(locale: Locale, found: QrWithLastPayment, now: Date): string {
  const { qr } = found;
  const amount = qr.amount_centavos === null ? locale.t('console.today.open_amount') : locale.money(qr.amount_centavos);
  const status = statusText(locale, found, now);
  return `<li class="row" data-qr="${escapeHtml(qr.id)}">
    <div class="what"><p><a href="${escapeHtml(locale.href(`/console/terminal/qrs/${qr.id}`))}"><strong>${escapeHtml(amount)}</strong></a> · ${escapeHtml(locale.time(qr.created_at))}</p>
    ${qr.description ? `<p class="hint">${escapeHtml(qr.description)}</p>` : ''}</div>
    <p class="status" data-state="${status.state}" data-field="status">${escapeHtml(status.text)}</p>
  </li>`;
}

export function renderTodayPage({ locale, nonce, session, csrf, qrs, now, more, limit }: TodayPage): string {
  const list = qrs.length === 0
    ? `<p class="muted" id="today-empty">${locale.html('console.today.empty')}</p>`
    : `<ul class="rows" id="today-qrs">
  ${qrs.map((found) => row(locale, found, now)).join('\n  ')}
  </ul>`;
  const body = `<section class="card" aria-labelledby="today-heading">
  <h1 id="today-heading">${locale.html('console.today.title')}</h1>
  <p class="hint">${escapeHtml(locale.date(now))}</p>
  ${list}
  ${more ? `<p class="hint" id="today-more">${locale.html('console.today.more', { count: limit })}</p>` : ''}
  <a class="button-link" href="${escapeHtml(locale.href('/console/terminal'))}">${locale.html('console.terminal.new_charge')}</a>
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.today.title'), body, styles: TERMINAL_STYLES, session: { session, csrf, current: '/console/terminal/today' } });
}
