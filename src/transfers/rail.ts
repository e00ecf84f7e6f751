// The ACH rail seam (docs/api-reference.md#transfer-lifecycle, docs/architecture.md, habit 8): a TransferRail submits transfers to the bank network and
// reports what became of them; the same domain code (service.ts) applies its reports, whichever rail it is.
// Each rail file keeps its own wire types and maps them onto RailStatus; this file maps RailStatus onto
// our transfer statuses, exhaustively, with no default branch.
import type { FailureCode, TransferStatus } from './schemas.ts';
import type { FullAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';

/** What a rail can say about a transfer, in rail-neutral terms. */
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
  failureCode: FailureCode | null;
}

/** What a rail needs to pay a transfer out. The account number is the full one: the rail alone opens it (revealAccountNumber). */
export interface RailTransferOrder {
  /** Derived from our transfer id (railIdempotencyKey), so a retried submission never pays twice downstream. */
  idempotencyKey: string;
  amountCentavos: Centavos;
  currency: 'BOB';
  bankCode: number;
  accountNumber: FullAccountNumber;
  accountTitular: string;
  reference: string | null;
}

export interface TransferRail {
  readonly name: string;
  /** Sends a PENDING transfer to the network. Safe to call again with the same order (same idempotency key). */
  submit(order: RailTransferOrder): Promise<RailReport>;
  /** Asks what became of a submitted transfer. */
  track(order: RailTransferOrder, railReference: string): Promise<RailReport>;
}

/** The key a rail deduplicates on: one per transfer, forever, whatever process or retry sends it. */
export function railIdempotencyKey(transferId: number): string {
  return `mps-transfer-${transferId}`;
}

/** The transfer status a rail status leads to. */
export function transferStatusOf(status: RailStatus): TransferStatus {
  switch (status) {
    case 'accepted':
      return 'IN_TRANSIT';
    case 'settled':
      return 'COMPLETED';
    case 'rejected':
    case 'returned':
      return 'FAILED';
    default:
      return assertNever(status);
  }
}

function assertNever(value: never): never {
  throw new Error(`unmapped rail status ${String(value)}`);
}
