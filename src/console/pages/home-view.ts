// The console's home (docs/console.md#home): the business, who is signed in, and the sections that exist for
// their role — everyone's terminal and today's QRs; for an owner, the day at a glance (collected, fees, net,
// payouts, balance) first, then every section of the business.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
import type { ConsoleSession } from '../../users/service.ts';
import type { DayAtAGlance, Tally } from '../glance.ts';
import { consolePage, sectionsFor } from './layout.ts';
import { moneyText } from './lists.ts';

export interface HomePage {
  locale: Locale;
  nonce: string;
  session: ConsoleSession;
  csrf: string;
  /** The owner's day; null for a cashier (who sees no money of the business but their charges). */
  glance: DayAtAGlance | null;
}

function figure(locale: Locale, name: string, label: MessageKey, amount: number, tally?: Tally): string {
  const count = tally ? `<span class="hint">${locale.html('console.home.count', { count: tally.count })}</span>` : '';
  return `<div data-figure="${name}"><dt>${locale.html(label)}</dt><dd>${escapeHtml(moneyText(locale, amount))}${count}</dd></div>`;
}

function glanceCard(locale: Locale, glance: DayAtAGlance): string {
  return `<h2 id="glance-heading">${locale.html('console.home.glance')}</h2>
  <p class="hint">${escapeHtml(locale.date(glance.now))}</p>
  <dl class="figures" id="glance">
  ${figure(locale, 'collected', 'console.home.collected', glance.collected.centavos, glance.collected)}
  ${figure(locale, 'fees', 'console.home.fees', glance.fees.centavos, glance.fees)}
  ${glance.refunds.count > 0 ? figure(locale, 'refunds', 'console.home.refunds', glance.refunds.centavos, glance.refunds) : ''}
  ${figure(locale, 'net', 'console.home.net', glance.netCentavos)}
  ${figure(locale, 'payouts', 'console.home.payouts', glance.payouts.centavos, glance.payouts)}
  ${figure(locale, 'available', 'console.home.available', glance.availableCentavos)}
  ${glance.pendingOutCentavos > 0 ? figure(locale, 'pending-out', 'console.home.pending_out', glance.pendingOutCentavos) : ''}
  </dl>`;
}

export function renderHomePage({ locale, nonce, session, csrf, glance }: HomePage): string {
  const sections = sectionsFor(session.role).filter((section) => section.path !== '/console');
  const body = `<section class="card" aria-labelledby="home-heading">
  <h1 id="home-heading">${escapeHtml(session.merchantName)}</h1>
  ${glance ? glanceCard(locale, glance) : ''}
</section>
<section class="card" aria-labelledby="sections-heading">
  <h2 id="sections-heading">${locale.html('console.home.sections')}</h2>
  <ul class="rows" id="sections">
  ${sections.map((section) => `<li class="row"><div class="what"><p><a href="${escapeHtml(locale.href(section.path))}" data-section="${escapeHtml(section.path)}">${locale.html(section.label)}</a></p>
    <p class="hint">${locale.html(section.hint)}</p></div></li>`).join('\n  ')}
  </ul>
</section>`;
  return consolePage({ locale, nonce, title: session.merchantName, body, session: { session, csrf, current: '/console' } });
}
