// Pay-out through a rail (docs/rails.md): money leaves the platform's account for a merchant's bank
// account. A rail says what became of a transfer in the neutral terms below; the transfers module maps
// them onto its statuses with a closed table (transfers/service.ts).
import type { FullAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';
import type { RailFailureCode } from './failures.ts';
import type { RailOutcome } from './outcome.ts';

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

/** A rail that answers each transfer at once, in process: the sandbox's pretend bank. */
export interface InstantPayOut {
  readonly kind: 'instant';
  /** Sends a PENDING transfer to the network. Safe to call again with the same order (same idempotency key). */
  submit(order: RailTransferOrder): Promise<RailReport>;
  /** Asks what became of a submitted transfer. */
  track(order: RailTransferOrder, railReference: string): Promise<RailReport>;
}

/** A batch of transfers for a bank (§14.4): written before it is uploaded, never uploaded twice. */
export interface RailBatchOrder {
  /** railKey('batch', id). */
  batchId: string;
  items: RailTransferOrder[];
}

/** What the bank said of one item of a batch (its status callback), in neutral terms. */
export interface RailItemReport {
  batchId: string;
  /**
   * The bank's own id of the batch, where its report names one: an item's report naming another bank batch
   * than the one the upload's answer gave is not about this item.
   */
  bankBatchId: string | null;
  /** railKey('transfer', id) of the item. */
  itemKey: string;
  /** accepted: the destination account was credited; rejected: refused, with the bank's reason. */
  outcome: 'accepted' | 'rejected';
  /** The bank's reason (cleaned: no control characters, no secret, no full account number). */
  reason: string | null;
  /** The bank's ids of the debit (in the account history) and the credit. */
  debitReference: string | null;
  creditReference: string | null;
}

/** A status callback's body, read; never throws. */
export type RailItemReading = { kind: 'item'; report: RailItemReport } | { kind: 'unreadable'; problem: string };

/**
 * A bank that takes transfers in batches and answers each item later, by callback (Banco Económico's
 * planillas). The service writes a batch before uploading it and never uploads it again after a lost answer.
 */
export interface BatchPayOut {
  readonly kind: 'batches';
  /** Most transfers per batch. */
  readonly maxBatchItems: number;
  /** How often the PENDING transfers become a batch. */
  readonly batchIntervalMs: number;
  /** The longest an upload can wait for its answer: a batch still uploading after it (its process died) is unknown. */
  readonly uploadTimeoutMs: number;
  /** Uploads a batch; `unknown` means the bank may hold it. Called outside any transaction. */
  uploadBatch(batch: RailBatchOrder): Promise<RailOutcome<{ bankBatchId: string }>>;
  /** The status callback's JSON body, read. */
  readItemReport(body: unknown): RailItemReading;
}

export type PayOutRail = InstantPayOut | BatchPayOut;
