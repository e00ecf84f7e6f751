// The bank's side of pay-out (docs/rails.md, "Pay-out through a bank"): the batch job that hands PENDING
// transfers to a bank rail, and the bank's status callback on each item. The batches themselves — what is
// written, uploaded and settled — are the transfers module's (transfers/batches.ts).
import type { AppContext } from '../context.ts';
import type { RailName } from '../rails/names.ts';
import type { PayInRail } from '../rails/pay-in.ts';
import type { BatchPayOut } from '../rails/pay-out.ts';
import { applyItemReport, payOutNextBatch, type ItemReportResult } from '../transfers/batches.ts';

/** What the pay-out side needs: the app's parts, the rail's batches, and its callback secret (pay-in's). */
export type BankPayOutContext = Pick<AppContext, 'db' | 'clock'> & { rail: RailName; payOut: BatchPayOut; payIn: PayInRail };

/** The pay-out side, when the configured rail is a bank taking batches; else null. */
export function bankPayOutOf(context: AppContext): BankPayOutContext | null {
  const rail = context.rail;
  if (rail.payOut.kind !== 'batches' || !rail.payIn) return null;
  return { db: context.db, clock: context.clock, rail: rail.name, payOut: rail.payOut, payIn: rail.payIn };
}

/** One run of the batch job: the next batch cut and uploaded; true when more transfers may be waiting. */
export function payOutPendingTransfers(context: BankPayOutContext): Promise<boolean> {
  return payOutNextBatch(context.db, context.rail, context.payOut, () => context.clock.now());
}

/** What the status callback's body came to. */
export type StatusCallbackResult = { kind: 'unreadable'; problem: string } | { kind: ItemReportResult };

/** The bank's status callback on one batch item, applied (throws when the database does). */
export async function receiveItemStatus(context: BankPayOutContext, body: unknown): Promise<StatusCallbackResult> {
  const reading = context.payOut.readItemReport(body);
  if (reading.kind === 'unreadable') return reading;
  return { kind: await applyItemReport(context.db, context.rail, reading.report, context.clock.now()) };
}
