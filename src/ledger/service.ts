// The ledger core: every centavo that moves goes through this module, inside the caller's transaction, as
// one balanced journal entry posted by one statement (docs/journal.md): the state change that caused it,
// its entry, its movement and its event commit together (docs/architecture.md, rule 2).
import type { Database, Queryable, Transaction } from '../db/database.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import * as checks from './check-store.ts';
import { ENTRY_SHAPES, type EntryKind } from './entries.ts';
import * as history from './history-store.ts';
import type { MovementFilter, MovementRow } from './history-store.ts';
import * as store from './store.ts';
import type { BalanceRow, EntryRequest, NewMovement } from './store.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import { centavos, type Centavos } from '../money.ts';

export type { BalanceRow } from './store.ts';
export type { InvariantRow, LedgerProblem } from './check-store.ts';
export type { MovementFilter, MovementRow, MovementStatus, MovementType } from './history-store.ts';

/** Thrown when a caller asks for a change the ledger does not allow (a bug in the caller, not bad input). */
export class LedgerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerError';
  }
}

/** Creates the zero balance of a new merchant. */
export async function openBalance(tx: Transaction, businessCode: number, now: Date): Promise<void> {
  await store.insertBalance(tx, businessCode, now);
}

/** The merchant's balance; 404 when it has none (a merchant always has one, from its creation). */
export async function getBalance(db: Queryable, businessCode: number): Promise<BalanceRow> {
  const balance = await store.findBalance(db, businessCode);
  if (!balance) throw notFound('balance');
  return balance;
}

/**
 * The merchant's balance, locked until the caller's transaction ends: an amount decided from `available`
 * (a scheduled payout's) is still covered when the debit posts in the same transaction.
 */
export async function lockBalance(tx: Transaction, businessCode: number): Promise<BalanceRow> {
  const balance = await store.findBalanceForUpdate(tx, businessCode);
  if (!balance) throw notFound('balance');
  return balance;
}

/** What a payment movement shows: the payer as the payment recorded it, account number masked. */
export interface PaymentSnapshot {
  details: { source_bank: string | null; account_number: string | null; account_titular: string | null; payment_id?: number; refund_id?: string };
}

/** What a transfer movement shows: its destination, account number masked. */
export interface TransferSnapshot {
  destination: { type: 'bank_account'; bank_code: number; account_number: string; account_titular: string };
}

/** A change that opens a movement: who, how much, when, and what the movement shows. */
export interface OpeningRequest extends NewMovement {
  businessCode: number;
  amountCentavos: Centavos;
  /**
   * The fee charged on it (docs/fees.md): a `fee` movement and entry (available → revenue) posted in the
   * same statement, refused with it. A payment's fee never exceeds it; a transfer needs amount + fee.
   */
  feeCentavos?: Centavos;
  now: Date;
}

export interface CreditRequest extends OpeningRequest {
  /** `activation_fee` for the platform's own merchant account collecting onboarding fees; else `payment`. */
  kind?: 'payment' | 'activation_fee';
}

/** Records an incoming payment: a COMPLETED `payment` movement and the same amount added to `available` (less its fee, if any). */
export async function credit(tx: Transaction, request: CreditRequest): Promise<MovementRow> {
  const [posted] = await post(tx, [opening(request.kind ?? 'payment', request)], { waitForLocks: true });
  if (posted!.outcome !== 'posted') throw new LedgerError(`a payment to merchant ${request.businessCode} was refused: ${posted!.outcome}`);
  return posted!.movement!;
}

export type DebitRequest = OpeningRequest;

/**
 * Records an outgoing transfer: moves the amount from `available` to `pending_out` and writes a PENDING
 * `transfer` movement with a negative amount, and its fee's movement. Throws 400 INSUFFICIENT_FUNDS,
 * having written nothing, when `available` does not cover amount and fee.
 */
export async function debit(tx: Transaction, request: DebitRequest): Promise<MovementRow> {
  const [movement] = await debitEach(tx, [request]);
  if (!movement) throw new ApiError('INSUFFICIENT_FUNDS');
  return movement;
}

/**
 * `debit` for several requests at once, in one statement (transfers created together, see
 * src/db/group-commit.ts), several of one merchant included: each result, in request order, is the
 * movement, or null when that merchant's `available` does not cover its amount after the requests before
 * it — a refusal that wrote nothing and leaves the others and the transaction intact. Debits of one
 * merchant wait for its balance's lock; debits of several do not: if another transaction holds one of the
 * balances, the call fails at once (lock_not_available) rather than hold up every other merchant, and the
 * caller retries each merchant's debits on their own.
 */
export async function debitEach(tx: Transaction, requests: readonly DebitRequest[]): Promise<Array<MovementRow | null>> {
  const merchants = new Set(requests.map((request) => request.businessCode));
  const posted = await post(tx, requests.map((request) => opening('transfer', request)), { waitForLocks: merchants.size === 1 });
  return posted.map((entry) => (entry.outcome === 'posted' ? entry.movement : null));
}

/**
 * Records a refund: moves the amount from `available` back towards the payer through the QR rail and
 * writes a PENDING `refund` movement with a negative amount; null, having written nothing, when
 * `available` does not cover it.
 */
export async function debitForRefund(tx: Transaction, request: OpeningRequest): Promise<MovementRow | null> {
  const [posted] = await post(tx, [opening('refund', request)], { waitForLocks: true });
  return posted!.outcome === 'posted' ? posted!.movement : null;
}

/** How a transfer or refund ended, as far as money goes. */
export type Closing = 'transfer_settlement' | 'transfer_return' | 'refund_return';

/**
 * Closes the movement `movementId` opened: a transfer the bank settled leaves `pending_out` for ACH; one
 * that failed or was canceled returns to `available` with its fee, in the same entry; a refund the rail
 * could not pay returns to `available`. Dated `now`, never an edit of the day the movement was opened. The
 * database takes at most one closing entry per movement, so funds can never come back twice.
 */
export async function close(tx: Transaction, request: { businessCode: number; movementId: number; kind: Closing; now: Date }): Promise<void> {
  const movement = await history.findOpenedMovement(tx, request.businessCode, request.movementId);
  if (!movement) throw new LedgerError(`movement ${request.movementId} of merchant ${request.businessCode} does not exist`);
  const expectedType = request.kind === 'refund_return' ? 'refund' : 'transfer';
  if (movement.type !== expectedType) throw new LedgerError(`a ${request.kind} cannot close ${movement.type} movement ${movement.id}`);
  const [posted] = await post(tx, [{
    businessCode: request.businessCode,
    kind: request.kind,
    amountCentavos: centavos(-movement.amount_centavos),
    feeCentavos: ENTRY_SHAPES[request.kind].feeLegs ? movement.fee_centavos : undefined,
    movement: { id: movement.id },
    now: request.now,
  }], { waitForLocks: true });
  if (posted!.outcome !== 'posted') throw new LedgerError(`closing movement ${movement.id} was refused: ${posted!.outcome}`);
}

function opening(kind: EntryKind, request: OpeningRequest): EntryRequest {
  return {
    businessCode: request.businessCode,
    kind,
    amountCentavos: request.amountCentavos,
    feeCentavos: request.feeCentavos,
    movement: { reference: request.reference, snapshot: request.snapshot },
    now: request.now,
  };
}

/** Posts entries in request order, each merchant's applied one after another (store.postEntries). */
async function post(tx: Transaction, entries: EntryRequest[], options: { waitForLocks: boolean }): Promise<store.PostedEntry[]> {
  for (const entry of entries) {
    if (!Number.isSafeInteger(entry.amountCentavos) || entry.amountCentavos <= 0) {
      throw new LedgerError(`amount must be a positive whole number of centavos, got ${entry.amountCentavos}`);
    }
  }
  const posted = await store.postEntries(tx, entries, options);
  posted.forEach((entry, i) => {
    if (entry.outcome === 'no_balance') throw new LedgerError(`merchant ${entries[i]!.businessCode} has no balance`);
  });
  return posted;
}

/**
 * One page of a merchant's history, newest first, and its total, in one statement. `total` is the sum of
 * the merchant's per-day movement counts, not a count; page 1 is read straight down the history index,
 * and a deeper page from the nearer end of the days it starts and ends in (found from the same counts),
 * so no OFFSET is longer than half a day of one merchant's movements, however deep the page
 * (history-store.ts, findMovementsPage).
 */
export async function listMovements(db: Queryable, filter: MovementFilter, page: PageRequest): Promise<Page<MovementRow>> {
  const { offset: skip, limit } = pageWindow(page);
  const { rows, total } = await history.findMovementsPage(db, filter, { skip, limit });
  return { items: rows, total };
}

export interface LedgerReport {
  balancesChecked: number;
  entriesChecked: number;
  /** Balances that break the invariant of docs/api-reference.md#balance-invariant. */
  violations: checks.InvariantRow[];
  /** Everything else the journal and the movements disagree on (docs/journal.md#the-ledger-check). */
  problems: checks.LedgerProblem[];
}

/**
 * The ledger check: every entry balanced; every account's postings sum to its head and each posting's
 * balance_after is its running sum; the invariant of docs/api-reference.md#balance-invariant; every
 * movement agrees with its journal entries; every statement bucket with its postings; every per-day
 * movement count with the movements of its day; every transfer and refund movement has its state, of its
 * kind. Empty lists mean the books close. Every query reads one
 * REPEATABLE READ snapshot, so a payment committed while the check runs can never look like a
 * disagreement.
 */
export async function checkLedger(db: Database): Promise<LedgerReport> {
  return db.transaction(async (tx) => {
    await tx.query('set transaction isolation level repeatable read, read only');
    return checkInSnapshot(tx);
  });
}

async function checkInSnapshot(tx: Transaction): Promise<LedgerReport> {
  const balancesChecked = await checks.countBalances(tx);
  const entriesChecked = await checks.countEntries(tx);
  const violations = await checks.findInvariantViolations(tx);
  const problems = [
    ...await checks.findUnbalancedEntries(tx),
    ...await checks.findAccountMismatches(tx),
    ...await checks.findRunningBalanceBreaks(tx),
    ...await checks.findMovementJournalMismatches(tx),
    ...await checks.findBucketMismatches(tx),
    ...await checks.findMovementDayMismatches(tx),
    ...await checks.findMovementStateMismatches(tx),
  ];
  return { balancesChecked, entriesChecked, violations, problems };
}
