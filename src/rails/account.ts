// The platform's account at a bank, as the bank books it (docs/rails.md, "Reconciliation"): what came in (a
// QR payment's credit) and what went out (a transfer's debit), day by day. Reconciliation compares it with
// the journal; nothing else reads it. Every call ends in one RailOutcome (outcome.ts).
import type { Centavos } from '../money.ts';
import type { RailOutcome } from './outcome.ts';

/** One entry of the account's history, in neutral terms. */
export interface RailAccountEntry {
  /**
   * The bank's id of the entry: for a transfer's debit, the id its status callback named
   * (RailItemReport.debitReference); for a QR payment's credit, the bank's id of the payment where the
   * bank uses the same number (docs/rails.md, certification).
   */
  reference: string;
  direction: 'debit' | 'credit';
  /** Positive whichever the direction. */
  amountCentavos: Centavos;
  bookedAt: Date;
  /** The business day the bank booked it on, yyyy-MM-dd in SERVICE_TIMEZONE. */
  day: string;
}

export interface RailAccountHistory {
  /** In the bank's order (by time of booking). */
  entries: RailAccountEntry[];
}

export interface AccountRail {
  /** The platform account's entries booked from startDate to endDate (yyyy-MM-dd, SERVICE_TIMEZONE), both included. */
  readHistory(startDate: string, endDate: string): Promise<RailOutcome<RailAccountHistory>>;
}
