// Pay-out through a rail (docs/rails.md): money leaves the platform's account for a merchant's bank
// account. A rail says what became of a transfer in the neutral terms below; the transfers module maps
// them onto its statuses with a closed table (transfers/service.ts).
import type { FullAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';
import type { RailFailureCode } from './failures.ts';

/** What a rail can say about a transfer. */
export type RailStatus =
  /** The bank network took the transfer; funds are on their way. */
  | 'accepted'
  /** The destination bank credited the account. */
  | 'settled'
  /** Refused on submission (closed or unknown account…). */
  | 'rejected'
  /** Accepted first, then sent back by the destination bank. */
  | 'returned';

export interface RailReport {
  status: RailStatus;
  /** The rail's id of the transfer, kept on our row. */
  railReference: string;
  /** Why, when `rejected` or `returned`. */
  failureCode: RailFailureCode | null;
}

/** What a rail needs to pay a transfer out. The account number is the full one: the rail alone opens it (revealAccountNumber). */
export interface RailTransferOrder {
  /** railKey('transfer', id): a retried submission never pays twice downstream. */
  idempotencyKey: string;
  amountCentavos: Centavos;
  currency: 'BOB';
  bankCode: number;
  accountNumber: FullAccountNumber;
  accountTitular: string;
  reference: string | null;
}

export interface PayOutRail {
  /** Sends a PENDING transfer to the network. Safe to call again with the same order (same idempotency key). */
  submit(order: RailTransferOrder): Promise<RailReport>;
  /** Asks what became of a submitted transfer. */
  track(order: RailTransferOrder, railReference: string): Promise<RailReport>;
}
