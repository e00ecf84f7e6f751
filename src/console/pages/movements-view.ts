// The owner's movements and statement pages (docs/console.md#movements-statement-and-transfers): the balance
// and the history of movements, newest first; a month's statement, day by day, as rows that fit a phone,
// with the month's CSV export.
import { escapeHtml } from '../../kernel/html.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import type { MessageKey } from '../../kernel/i18n/messages-en.ts';
import type { BalanceRow, MovementRow } from '../../ledger/service.ts';
import type { Statement, StatementDay } from '../../ledger/statements.ts';
import type { PageRequest } from '../../kernel/pagination.ts';
import { centavos } from '../../money.ts';
import type { MonthRefusal, MovementsPage, StatementMonths } from '../money.ts';
import { consolePage, formAlert, type Framed } from './layout.ts';
import { filterForm, hrefWith, moneyText, pager } from './lists.ts';

export const MOVEMENT_TYPES = ['payment', 'fee', 'transfer', 'refund'] as const;

const figure = (locale: Locale, name: string, label: MessageKey, amount: number) =>
  `<div data-figure="${name}"><dt>${locale.html(label)}</dt><dd>${escapeHtml(moneyText(locale, amount))}</dd></div>`;

/** The balance: available now, and what transfers are still taking to the bank. */
export function balanceFigures(locale: Locale, balance: BalanceRow): string {
  return `<dl class="figures" id="balance">
  ${figure(locale, 'available', 'console.home.available', balance.available_centavos)}
  ${figure(locale, 'pending-out', 'console.home.pending_out', balance.pending_out_centavos)}
  </dl>`;
}

/** A status in words (transfers, refunds, movements share them). */
export function statusText(locale: Locale, status: string): string {
  return locale.t(`console.money.status.${status.toLowerCase()}` as MessageKey);
}

/** The console page of what a movement is about: its transfer, or its payment (a fee's too); '' when there is none. */
function recordLink(locale: Locale, movement: MovementRow, transferId: number | undefined, paymentId: number | undefined): string {
  const target = transferId !== undefined ? { kind: 'transfer', id: transferId }
    : movement.type === 'fee' && movement.charged_on !== null && movement.charged_on_id !== null ? { kind: movement.charged_on, id: movement.charged_on_id }
    : paymentId !== undefined ? { kind: 'payment', id: paymentId }
    : null;
  if (!target) return '';
  const [path, label] = target.kind === 'transfer'
    ? [`/console/transfers/${target.id}`, 'console.movements.open_transfer'] as const
    : [`/console/payments/${target.id}`, 'console.movements.open_payment'] as const;
  return `<a href="${escapeHtml(locale.href(path))}" aria-label="${escapeHtml(locale.t(label, { id: target.id }))}">${locale.html('console.movements.open')}</a>`;
}

function movementRow(locale: Locale, movement: MovementRow, transferId: number | undefined, paymentId: number | undefined): string {
  const amount = moneyText(locale, movement.amount_centavos);
  const signed = movement.amount_centavos > 0 ? `+${amount}` : amount;
  const type = locale.t(`console.movements.type.${movement.type}` as MessageKey);
  const feeLine = movement.type === 'payment' && movement.fee_centavos > 0
    ? `<p class="hint" data-field="fee-net">${locale.html('console.movements.fee_net', { fee: moneyText(locale, movement.fee_centavos), net: moneyText(locale, centavos(movement.amount_centavos - movement.fee_centavos)) })}</p>`
    : '';
  const chargedOn = movement.type === 'fee' && movement.charged_on
    ? `<p class="hint">${locale.html(movement.charged_on === 'transfer' ? 'console.movements.fee_of_transfer' : 'console.movements.fee_of_payment', { id: movement.charged_on_id ?? '' })}</p>`
    : '';
  const reference = movement.reference ? `<p class="hint">${escapeHtml(movement.reference)}</p>` : '';
  const link = recordLink(locale, movement, transferId, paymentId);
  return `<li class="row" data-movement="${movement.id}" data-type="${movement.type}">
    <div class="what"><p><strong>${escapeHtml(type)}</strong> · <span data-field="status">${escapeHtml(statusText(locale, movement.status))}</span></p>
    <p class="hint">${escapeHtml(locale.dateTime(movement.created_at))}</p>
    ${reference}${feeLine}${chargedOn}</div>
    <p class="${movement.amount_centavos > 0 ? 'amount-in' : 'amount-out'}" data-field="amount"><strong>${escapeHtml(signed)}</strong></p>
    ${link}
  </li>`;
}

export interface MovementsView extends Framed {
  balance: BalanceRow;
  movements: MovementsPage;
  type: string;
  request: PageRequest;
}

export function renderMovementsPage({ locale, nonce, session, csrf, balance, movements, type, request }: MovementsView): string {
  const { page, transferIds, paymentIds } = movements;
  const body = `<section class="card" aria-labelledby="movements-heading">
  <h1 id="movements-heading">${locale.html('console.movements.title')}</h1>
  ${balanceFigures(locale, balance)}
  <p class="hint"><a href="${escapeHtml(locale.href('/console/statement'))}">${locale.html('console.movements.to_statement')}</a></p>
</section>
<section class="card" aria-labelledby="history-heading">
  <h2 id="history-heading">${locale.html('console.movements.history')}</h2>
  ${filterForm(locale, '/console/movements', [{
    name: 'type', label: locale.t('console.movements.filter.type'), value: type,
    options: [{ value: '', label: locale.t('console.movements.filter.all') }, ...MOVEMENT_TYPES.map((value) => ({ value, label: locale.t(`console.movements.type.${value}`) }))],
  }])}
  ${page.items.length === 0 ? `<p id="movements-empty">${locale.html('console.movements.empty')}</p>` : ''}
  <ul class="rows" id="movements">
  ${page.items.map((movement) => movementRow(locale, movement, transferIds.get(movement.id), paymentIds.get(movement.id))).join('\n  ')}
  </ul>
  ${pager(locale, '/console/movements', { type }, request, page)}
</section>`;
  return consolePage({ locale, nonce, title: locale.t('console.movements.title'), body, session: { session, csrf, current: '/console/movements' }, styles: MOVEMENTS_STYLES });
}

/** The balance's two figures side by side only where an amount fits on one line (one above the other on a phone). */
const MOVEMENTS_STYLES = `
#balance { grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); }
#balance dd { overflow-wrap: normal; white-space: nowrap; }
.row [data-field="amount"] { margin: 0; white-space: nowrap; }
`;

// ---------------------------------------------------------------------------------------------------
// The statement

const COLUMNS = ['payments', 'refunds', 'transfers', 'returns', 'fees'] as const;

/** A month (YYYY-MM) in words: `noviembre de 2026`, `November 2026`. */
export function monthName(locale: Locale, month: string): string {
  const [year, number] = month.split('-').map(Number) as [number, number];
  return new Intl.DateTimeFormat(locale.tag, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(Date.UTC(year, number - 1, 15)));
}

/** A calendar day (YYYY-MM-DD) in words. */
function dayName(locale: Locale, day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Intl.DateTimeFormat(locale.tag, { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(Date.UTC(year, month - 1, date, 12)));
}

function activeDay(day: StatementDay): boolean {
  return COLUMNS.some((column) => day.totals[column].count > 0);
}

function totalsList(locale: Locale, totals: Record<(typeof COLUMNS)[number], { count: number; centavos: number }>, opening: number, closing: number, id?: string): string {
  const line = (name: string, label: MessageKey, amount: number, count?: number) => `<div data-total="${name}"><dt>${locale.html(label)}${count === undefined ? '' : ` <span class="hint">(${escapeHtml(locale.integer(count))})</span>`}</dt><dd>${escapeHtml(moneyText(locale, amount))}</dd></div>`;
  return `<dl class="facts statement-day"${id ? ` id="${id}"` : ''}>
    ${line('opening', 'console.statement.opening', opening)}
    ${COLUMNS.filter((column) => totals[column].count > 0).map((column) => line(column, `console.statement.${column}`, totals[column].centavos, totals[column].count)).join('\n    ')}
    ${line('closing', 'console.statement.closing', closing)}
  </dl>`;
}

export interface StatementView extends Framed {
  months: StatementMonths;
  month: string;
  statement: Statement | null;
  refusal?: MonthRefusal;
}

function monthPicker(locale: Locale, months: StatementMonths, month: string): string {
  return filterForm(locale, '/console/statement', [{
    name: 'month', label: locale.t('console.statement.month'), value: month,
    options: months.months.map((value) => ({ value, label: monthName(locale, value) })),
  }], 'month-form');
}

export function renderStatementPage({ locale, nonce, session, csrf, months, month, statement, refusal }: StatementView): string {
  const shown = statement && refusal === undefined;
  const title = shown ? locale.t('console.statement.title_of', { month: monthName(locale, month) }) : locale.t('console.statement.title');
  let content = '';
  if (statement && shown) {
    const sum = Object.fromEntries(COLUMNS.map((column) => [column, statement.days.reduce(
      (total, day) => ({ count: total.count + day.totals[column].count, centavos: total.centavos + day.totals[column].centavos }), { count: 0, centavos: 0 })])) as Record<(typeof COLUMNS)[number], { count: number; centavos: number }>;
    const active = statement.days.filter(activeDay);
    const folded = statement.days.length - active.length;
    content = `<p class="hint">${locale.html('console.statement.range', { from: dayName(locale, statement.range.from), to: dayName(locale, statement.range.to) })}</p>
  <h2 id="month-heading">${locale.html('console.statement.month_totals')}</h2>
  ${totalsList(locale, sum, statement.openingCentavos, statement.closingCentavos, 'statement-month')}
  <a class="button-link" id="csv-link" download href="${escapeHtml(hrefWith(locale, '/console/statement.csv', { month }))}">${locale.html('console.statement.csv')}</a>
  <p class="hint">${locale.html('console.statement.csv_hint')}</p>
</section>
<section class="card" aria-labelledby="days-heading">
  <h2 id="days-heading">${locale.html('console.statement.days')}</h2>
  ${folded > 0 ? `<p class="hint" id="folded">${escapeHtml(locale.t('console.statement.folded', { count: folded }))}</p>` : ''}
  ${active.length === 0 ? `<p id="statement-empty">${locale.html('console.statement.empty')}</p>` : ''}
  <ul class="rows" id="statement-days">
  ${active.map((day) => `<li class="row" data-day="${day.date}"><div class="what"><h3>${escapeHtml(dayName(locale, day.date))}</h3>
    ${totalsList(locale, day.totals, day.openingCentavos, day.closingCentavos)}</div></li>`).join('\n  ')}
  </ul>`;
  } else {
    content = formAlert(locale.t(`console.statement.refused.${refusal ?? 'invalid'}` as MessageKey, { first: monthName(locale, months.first), current: monthName(locale, months.current) }));
  }
  const body = `<section class="card" aria-labelledby="statement-heading">
  <h1 id="statement-heading">${escapeHtml(title)}</h1>
  ${monthPicker(locale, months, shown ? month : months.current)}
  ${content}
</section>`;
  return consolePage({ locale, nonce, title, body, session: { session, csrf, current: '/console/statement' }, styles: STATEMENT_STYLES });
}

const STATEMENT_STYLES = `
.statement-day { margin-top: .25rem; }
.statement-day dt { flex: 1 1 9rem; }
.statement-day dd { flex: 0 1 auto; text-align: right; font-variant-numeric: tabular-nums; }
.row h3 { margin: 0; font-size: 1rem; }
#csv-link { margin-top: 1rem; }
`;
