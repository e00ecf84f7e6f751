// Reconciliation of a bank rail's business day with the journal (contract §14.5; docs/rails.md,
// "Reconciliation"): what the bank says of the day — its list of paid QRs, and the platform account's
// history — against what the service recorded. The bank is asked first, outside any transaction; the
// service's side is then read in one REPEATABLE READ snapshot, so a payment committed meanwhile cannot
// appear half-read. Each disagreement is a break of one kind, in a fixed order.
import type { AppContext } from '../context.ts';
import type { Database, Transaction } from '../db/database.ts';
import { validationError } from '../kernel/errors.ts';
import type { Centavos } from '../money.ts';
import type { AccountRail, RailAccountEntry } from '../rails/account.ts';
import { railKey } from '../rails/keys.ts';
import type { RailName } from '../rails/names.ts';
import type { PayInRail, RailPayments } from '../rails/pay-in.ts';
import { formatWallClock, parseWallClock, shiftDay } from '../time.ts';
import * as store from './reconciliation-store.ts';

/** The kinds of break, in the order they are listed (the contract's). */
export const BREAK_KINDS = [
  /** The bank lists a payment for a QR of ours that the service has not recorded. */
  'missing_payment',
  /** The service holds a bank payment of the day that the bank does not list. */
  'unexpected_payment',
  /** The bank lists a payment for no QR of ours, or not in BOB: it credits no merchant. */
  'unmatched_credit',
  /** Both hold the payment, with different amounts. */
  'amount_mismatch',
  /** A transfer the bank accepted whose debit is not in the account's history. */
  'missing_debit',
  /** A debit in the account's history that is no transfer of ours. */
  'unexpected_debit',
  /** A batch whose upload's answer never came, not resolved, with transfers the bank has not answered for. */
  'unknown_batch',
  /** A status callback that contradicts an earlier one, or the bank's word at odds with its transfer's final status. */
  'conflicting_status',
] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];

export interface ReconciliationBreak {
  kind: BreakKind;
  /**
   * The bank's payment id (payment kinds), the history's entry id (unexpected_debit), the transfer's
   * batchDetailId (missing_debit, conflicting_status) or the batch's batchId (unknown_batch); null only for
   * a listed payment whose id the bank sent out of shape.
   */
  reference: string | null;
  oursCentavos: Centavos | null;
  bankCentavos: Centavos | null;
}

export interface Reconciliation {
  /** yyyy-MM-dd in SERVICE_TIMEZONE. */
  day: string;
  rail: RailName;
  status: 'balanced' | 'breaks';
  payments: { bank: number; ours: number };
  transfers: { bank: number; ours: number };
  breaks: ReconciliationBreak[];
}

export type ReconcileOutcome =
  | { outcome: 'reconciled'; reconciliation: Reconciliation }
  | { outcome: 'refused'; day: string; message: string }
  | { outcome: 'unknown'; day: string; problem: string };

/** What reconciliation needs: the app's parts and the rail's pay-in and account. */
export type ReconcileContext = Pick<AppContext, 'db' | 'clock' | 'config'> & { rail: RailName; payIn: PayInRail; account: AccountRail };

/** The reconciliation side, when the configured rail is a bank with a pay-in and an account; else null (the sandbox). */
export function reconcileContextOf(context: AppContext): ReconcileContext | null {
  const rail = context.rail;
  if (!rail?.payIn || !rail.account) return null;
  return { db: context.db, clock: context.clock, config: context.config, rail: rail.name, payIn: rail.payIn, account: rail.account };
}

/**
 * A business day asked for (yyyy-MM-dd, the schema checked the shape): a real date, not after today in
 * `zone`. Else one 422 naming `field`.
 */
export function checkedDay(day: string, zone: string, now: Date, field = 'date'): string {
  const start = parseWallClock(`${day} 00:00:00`, zone);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || start === null) {
    throw validationError([{ field, code: 'invalid_value', message: 'is not a date of the calendar' }]);
  }
  const today = formatWallClock(now, zone).slice(0, 10);
  if (day > today) throw validationError([{ field, code: 'invalid_value', message: `must not be after today (${today} in ${zone})` }]);
  return day;
}

/**
 * Reconciles one business day: the bank's paid list of the day and the account's history of the day and
 * the one before (a debit booked just before midnight is answered by a callback after it), then the
 * service's side in one snapshot. A refusal or no answer from the bank is the outcome, nothing read.
 */
export async function reconcileDay(context: ReconcileContext, day: string): Promise<ReconcileOutcome> {
  const zone = context.config.serviceTimeZone;
  const [listed, history] = await Promise.all([context.payIn.paymentsOfDay(day), context.account.readHistory(shiftDay(day, -1), day)]);
  // A refusal is a definite answer: it is told before a call that got none.
  if (listed.outcome === 'refused') return { outcome: 'refused', day, message: listed.message };
  if (history.outcome === 'refused') return { outcome: 'refused', day, message: history.message };
  if (listed.outcome === 'unknown') return { outcome: 'unknown', day, problem: listed.problem };
  if (history.outcome === 'unknown') return { outcome: 'unknown', day, problem: history.problem };
  const bounds = { start: parseWallClock(`${day} 00:00:00`, zone)!, end: parseWallClock(`${shiftDay(day, 1)} 00:00:00`, zone)! };
  const reconciliation = await context.db.transaction(async (tx) => {
    await tx.query('set transaction isolation level repeatable read, read only');
    return compare(tx, context.rail, day, bounds, listed.value, history.value.entries);
  });
  return { outcome: 'reconciled', reconciliation };
}

async function compare(tx: Transaction, rail: RailName, day: string, bounds: store.DayBounds, listed: RailPayments,
  entries: readonly RailAccountEntry[]): Promise<Reconciliation> {
  const breaks: ReconciliationBreak[] = [];

  // Payments: the bank's list of the day against the bank payments the service holds paid that day.
  const named = [...listed.payments.map((payment) => payment.railReference), ...listed.unmatched.flatMap((entry) => entry.railReference ?? [])];
  const held = await store.heldPayments(tx, rail, bounds, named);
  const heldByReference = new Map(held.map((payment) => [payment.railReference, payment]));
  const ourQrs = await store.ownQrReferences(tx, rail, listed.payments.map((payment) => payment.qrReference));
  const seen = new Set<string>();
  for (const payment of listed.payments) {
    seen.add(payment.railReference);
    const ours = heldByReference.get(payment.railReference);
    if (ours) {
      if (ours.amountCentavos !== payment.amountCentavos) {
        breaks.push({ kind: 'amount_mismatch', reference: payment.railReference, oursCentavos: ours.amountCentavos, bankCentavos: payment.amountCentavos });
      }
    } else {
      const kind = ourQrs.has(payment.qrReference) ? 'missing_payment' : 'unmatched_credit';
      breaks.push({ kind, reference: payment.railReference, oursCentavos: null, bankCentavos: payment.amountCentavos });
    }
  }
  for (const entry of listed.unmatched) {
    // Another currency, or out of shape: no amount in BOB to show for the bank's side.
    if (entry.railReference !== null) seen.add(entry.railReference);
    const ours = entry.railReference === null ? undefined : heldByReference.get(entry.railReference);
    breaks.push({ kind: 'unmatched_credit', reference: entry.railReference, oursCentavos: ours?.amountCentavos ?? null, bankCentavos: null });
  }
  const ofDay = held.filter((payment) => payment.ofDay);
  for (const payment of ofDay) {
    if (!seen.has(payment.railReference)) {
      breaks.push({ kind: 'unexpected_payment', reference: payment.railReference, oursCentavos: payment.amountCentavos, bankCentavos: null });
    }
  }

  // Transfers: the debits of the account's history against the items the bank accepted that day.
  const debits = entries.filter((entry) => entry.direction === 'debit');
  const debitsOfDay = debits.filter((entry) => entry.day === day);
  const debitReferences = new Set(debits.map((entry) => entry.reference));
  const accepted = await store.itemsAcceptedWithin(tx, rail, bounds);
  for (const item of accepted) {
    if (item.debitReference === null || !debitReferences.has(item.debitReference)) {
      breaks.push({ kind: 'missing_debit', reference: railKey('transfer', item.transferId), oursCentavos: item.amountCentavos, bankCentavos: null });
    }
  }
  const known = await store.knownDebitReferences(tx, rail, debitsOfDay.map((entry) => entry.reference));
  for (const entry of debitsOfDay) {
    if (!known.has(entry.reference)) breaks.push({ kind: 'unexpected_debit', reference: entry.reference, oursCentavos: null, bankCentavos: entry.amountCentavos });
  }

  // Batches and callbacks (§14.4): what only the service's side shows.
  for (const batch of await store.unknownBatchesBy(tx, rail, bounds.end)) {
    breaks.push({ kind: 'unknown_batch', reference: railKey('batch', batch.batchId), oursCentavos: batch.amountCentavos, bankCentavos: null });
  }
  for (const item of await store.conflictingItemsWithin(tx, rail, bounds)) {
    // The bank's status callbacks carry no amount: its side is null.
    breaks.push({ kind: 'conflicting_status', reference: railKey('transfer', item.transferId), oursCentavos: item.amountCentavos, bankCentavos: null });
  }

  breaks.sort(byKindThenReference);
  return {
    day,
    rail,
    status: breaks.length === 0 ? 'balanced' : 'breaks',
    payments: { bank: listed.payments.length + listed.unmatched.length, ours: ofDay.length },
    transfers: { bank: debitsOfDay.length, ours: accepted.length },
    breaks,
  };
}

/** How many breaks of each kind (kinds with none left out). */
export function breakCounts(breaks: readonly ReconciliationBreak[]): Partial<Record<BreakKind, number>> {
  const counts: Partial<Record<BreakKind, number>> = {};
  for (const entry of breaks) counts[entry.kind] = (counts[entry.kind] ?? 0) + 1;
  return counts;
}

/**
 * Stores a run (rail_reconciliations) and, for the daily job, marks its day done, in one transaction;
 * returns the run's id. Only runs that got the bank's answers are stored.
 */
export async function recordRun(db: Database, reconciliation: Reconciliation, origin: 'daily' | 'operator', now: Date): Promise<number> {
  return db.transaction(async (tx) => {
    const id = await store.insertRun(tx, {
      rail: reconciliation.rail,
      businessDate: reconciliation.day,
      origin,
      status: reconciliation.status,
      payments: reconciliation.payments,
      transfers: reconciliation.transfers,
      breakCounts: breakCounts(reconciliation.breaks),
      breaks: reconciliation.breaks.map((entry) => ({ kind: entry.kind, reference: entry.reference, ours: entry.oursCentavos, bank: entry.bankCentavos })),
    }, now);
    if (origin === 'daily') await store.markDayDone(tx, reconciliation.rail, reconciliation.day, id);
    return id;
  });
}

/** A reconciliation asked by an operator (the API, the CLI): the day checked, reconciled, and the run stored. */
export async function reconcileOnDemand(context: ReconcileContext, day: string): Promise<ReconcileOutcome> {
  const outcome = await reconcileDay(context, checkedDay(day, context.config.serviceTimeZone, context.clock.now()));
  if (outcome.outcome === 'reconciled') await recordRun(context.db, outcome.reconciliation, 'operator', context.clock.now());
  return outcome;
}

const KIND_ORDER = Object.fromEntries(BREAK_KINDS.map((kind, index) => [kind, index])) as Record<BreakKind, number>;
/** Numbers within references in numeric order (mps-transfer-9 before mps-transfer-10), whatever the locale. */
const REFERENCES = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' });

function byKindThenReference(a: ReconciliationBreak, b: ReconciliationBreak): number {
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  if (a.reference === b.reference) return 0;
  if (a.reference === null) return 1;
  if (b.reference === null) return -1;
  return REFERENCES.compare(a.reference, b.reference) || (a.reference < b.reference ? -1 : 1);
}

/** The calendar day `delta` days from `day` (time.ts's, for the bank's callers). */
export { shiftDay };
