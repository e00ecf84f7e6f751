// Statements and the journal export (docs/api-reference.md#statements): what a merchant's `available`
// did day by day in SERVICE_TIMEZONE, and every entry that changed it, as CSV. Both read the journal
// only, so a day's statement never changes once the day is over.
import { Readable } from 'node:stream';
import type { Queryable } from '../db/database.ts';
import { validationError, type FieldError } from '../kernel/errors.ts';
import { centavos, type Centavos } from '../money.ts';
import { formatWallClock, parseWallClock } from '../time.ts';
import { csvStringifier, inertRecord } from './csv.ts';
import type { StatementColumn } from './entries.ts';
import * as store from './statement-store.ts';
import type { DayTotals, EntryLine } from './statement-store.ts';

export type { EntryLine } from './statement-store.ts';

/** The longest range a statement or export covers (docs/api-reference.md#statements). */
export const MAX_STATEMENT_DAYS = 366;

/** Lines one export query reads: enough to keep the database busy, few enough to keep memory flat. */
export const EXPORT_BATCH = 2_000;

const COLUMNS: readonly StatementColumn[] = ['payments', 'refunds', 'transfers', 'returns', 'fees'];

/** No money moved before the service existed; the statement buckets are counted from 2000-01-01. */
const EARLIEST_DAY = 10_957; // 2000-01-01, in days since 1970-01-01

/** A range of days in the service time zone, checked, with the instants that bound each day. */
export interface DayRange {
  from: string;
  to: string;
  days: string[];
  /** days.length + 1 instants: the start of each day, then the end of the last. */
  dayStarts: Date[];
  /** The time zone the days are in (SERVICE_TIMEZONE): an entry's business date is its day there. */
  zone: string;
}

/**
 * `from` and `to` (YYYY-MM-DD, the schema checked the shape) as a range of at most 366 real days, none
 * after today in `zone`; one 422 names every problem.
 */
export function dayRange(from: string, to: string, zone: string, now: Date): DayRange {
  const errors: FieldError[] = [];
  const start = dayNumber(from);
  const end = dayNumber(to);
  if (start === null) errors.push({ field: 'from', code: 'invalid_value', message: 'is not a date of the calendar' });
  if (end === null) errors.push({ field: 'to', code: 'invalid_value', message: 'is not a date of the calendar' });
  if (start !== null && start < EARLIEST_DAY) errors.push({ field: 'from', code: 'too_small', message: 'must be 2000-01-01 or later' });
  if (start !== null && end !== null) {
    const today = dayNumber(formatWallClock(now, zone).slice(0, 10))!;
    if (end < start) errors.push({ field: 'to', code: 'invalid_value', message: 'must not be before from' });
    else if (end - start + 1 > MAX_STATEMENT_DAYS) errors.push({ field: 'to', code: 'too_large', message: `must be at most ${MAX_STATEMENT_DAYS} days from from, both included` });
    if (end > today) errors.push({ field: 'to', code: 'invalid_value', message: `must not be after today (${formatDay(today)} in ${zone})` });
  }
  if (errors.length > 0) throw validationError(errors);
  const days: string[] = [];
  for (let day = start!; day <= end!; day++) days.push(formatDay(day));
  const dayStarts = [...days, formatDay(end! + 1)].map((day) => parseWallClock(`${day} 00:00:00`, zone)!);
  return { from, to, days, dayStarts, zone };
}

export interface StatementDay {
  date: string;
  openingCentavos: Centavos;
  totals: DayTotals;
  closingCentavos: Centavos;
}

export interface Statement {
  businessCode: number;
  range: DayRange;
  openingCentavos: Centavos;
  closingCentavos: Centavos;
  days: StatementDay[];
}

/**
 * The statement of `range`: `available` when the first day began, what each day added and took, and
 * `available` at each day's end — every day's closing is the next day's opening, and a past day's closing
 * is what `available` was when it ended (entries are dated when they happen, never edited).
 */
export async function statementOf(db: Queryable, businessCode: number, range: DayRange): Promise<Statement> {
  const opening = await store.availableBefore(db, businessCode, range.dayStarts[0]!);
  const totals = await store.totalsByDay(db, businessCode, range.dayStarts);
  let balance = opening;
  const days = range.days.map((date, i): StatementDay => {
    const dayTotals = totals.get(i) ?? emptyTotals();
    const openingCentavos = balance;
    balance = centavos(balance + COLUMNS.reduce((sum, column) => sum + dayTotals[column].centavos, 0));
    return { date, openingCentavos, totals: dayTotals, closingCentavos: balance };
  });
  return { businessCode, range, openingCentavos: opening, closingCentavos: balance, days };
}

/** The columns of the CSV export, in order (docs/api-reference.md#statements). */
export const CSV_COLUMNS = [
  'entry_id', 'posted_at', 'kind', 'amount', 'balance_after', 'currency', 'reference', 'external_reference',
  'counterparty_bank', 'counterparty_account', 'counterparty_name', 'qr_id', 'payment_id', 'transfer_id', 'refund_id',
  'business_date',
] as const;

/** The export's amount columns: written by the service from integer centavos, kept as signed numbers (docs/journal.md#the-csv-export). */
const AMOUNT_COLUMNS: ReadonlySet<string> = new Set(['amount', 'balance_after']);

/**
 * The merchant's entries of `range` that changed `available`, as RFC 4180 CSV with a header row, every
 * cell made inert for spreadsheets (csv.ts; the API's export and the CLI's both come from here), streamed:
 * lines are read in keyset batches of EXPORT_BATCH, and the next batch is read only when the client has
 * taken the last (the stream's backpressure), so memory stays flat however long the year. Entries posted
 * while the export runs are left for the next one.
 */
export function exportEntries(db: Queryable, businessCode: number, range: DayRange, toRow: (line: EntryLine, zone: string) => unknown[]): Readable {
  const inert = inertRecord(CSV_COLUMNS, AMOUNT_COLUMNS);
  const window = { from: range.dayStarts[0]!, to: range.dayStarts[range.dayStarts.length - 1]!, upToEntryId: 0 };
  let after: { postedAt: Date; entryId: number } | null = null;
  let started = false;
  let reading = false;
  const lines = new Readable({
    objectMode: true,
    highWaterMark: EXPORT_BATCH,
    read() {
      if (reading) return; // one query at a time; the batch in flight pushes when it lands
      reading = true;
      void (async () => {
        if (!started) {
          started = true;
          window.upToEntryId = await store.lastEntryId(db, businessCode);
        }
        const batch = await store.entryLinesAfter(db, businessCode, window, after, EXPORT_BATCH);
        const last = batch.at(-1);
        if (last) after = { postedAt: last.posted_at, entryId: last.entry_id };
        reading = false;
        for (const line of batch) this.push(inert(toRow(line, range.zone)));
        if (batch.length < EXPORT_BATCH) this.push(null);
      })().catch((error: unknown) => this.destroy(error as Error));
    },
  });
  const csv = csvStringifier(CSV_COLUMNS);
  lines.on('error', (error) => csv.destroy(error));
  return lines.pipe(csv);
}

function emptyTotals(): DayTotals {
  const zero = () => ({ count: 0, centavos: centavos(0) });
  return { payments: zero(), refunds: zero(), transfers: zero(), returns: zero(), fees: zero() };
}

/** Days since 1970-01-01 of a YYYY-MM-DD calendar date; null when it is not one (2026-02-30). */
function dayNumber(date: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) return null;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const back = new Date(0);
  back.setUTCFullYear(year, month - 1, day); // not Date.UTC: it reads years 0–99 as 1900–1999
  const utc = back.getTime();
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) return null;
  return utc / 86_400_000;
}

function formatDay(dayNumber: number): string {
  return new Date(dayNumber * 86_400_000).toISOString().slice(0, 10);
}
