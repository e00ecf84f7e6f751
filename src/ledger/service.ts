// The ledger core: every centavo that moves goes through credit, debit or settle, inside the caller's
// transaction, so a state change, its movement and its balance update commit together (docs/architecture.md, rule 2).
import type { Queryable, Transaction } from '../db/database.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import * as store from './store.ts';
import type { BalanceRow, InvariantRow, MovementFilter, MovementRow, MovementStatus } from './store.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import { centavos, type Centavos } from '../money.ts';

export type { BalanceRow, InvariantRow, MovementFilter, MovementRow, MovementStatus, MovementType } from './store.ts';

/** Thrown when a caller asks for a movement change the ledger does not allow (a bug in the caller, not bad input). */
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

/** What a payment movement shows: the payer as the payment recorded it, account number masked. */
export interface PaymentSnapshot {
  details: { source_bank: string | null; account_number: string | null; account_titular: string | null };
}

/** What a transfer movement shows: its destination, account number masked. */
export interface TransferSnapshot {
  destination: { type: 'bank_account'; bank_code: number; account_number: string; account_titular: string };
}

export interface CreditRequest {
  businessCode: number;
  amountCentavos: Centavos;
  reference: string | null;
  /** What the movement shows (masked payer details); stored with it. */
  snapshot: Record<string, unknown>;
  now: Date;
}

/** Records an incoming payment: a COMPLETED `payment` movement and the same amount added to `available`. */
export async function credit(tx: Transaction, request: CreditRequest): Promise<MovementRow> {
  assertPositiveCentavos(request.amountCentavos);
  const balance = await store.addToAvailable(tx, request.businessCode, { availableCentavos: request.amountCentavos, pendingOutCentavos: centavos(0) }, request.now);
  if (!balance) throw new LedgerError(`merchant ${request.businessCode} has no balance`);
  const movement = await store.insertMovement(tx, {
    businessCode: request.businessCode,
    type: 'payment',
    amountCentavos: request.amountCentavos,
    status: 'COMPLETED',
    reference: request.reference,
    snapshot: request.snapshot,
  }, request.now);
  // Counted in the same transaction, so a history page's `total` never needs a count(*).
  await store.incrementMovementCounter(tx, request.businessCode, 'payment');
  return movement;
}

export type DebitRequest = store.TransferDebit;

/**
 * Records an outgoing transfer: moves the amount from `available` to `pending_out` and writes a PENDING
 * `transfer` movement with a negative amount. Throws 400 INSUFFICIENT_FUNDS, having written nothing,
 * when `available` does not cover it.
 */
export async function debit(tx: Transaction, request: DebitRequest): Promise<MovementRow> {
  const [movement] = await debitEach(tx, [request]);
  if (!movement) throw new ApiError('INSUFFICIENT_FUNDS');
  return movement;
}

/**
 * `debit` for several merchants at once, in one statement (transfers created together, see
 * src/db/group-commit.ts): each result, in request order, is the movement, or null when that
 * merchant's `available` does not cover its amount — a refusal that wrote nothing and leaves the others
 * and the transaction intact. A single debit waits for its balance's lock; several do not: if another
 * transaction holds one of the balances, the call fails at once (lock_not_available) rather than hold
 * up every other merchant, and the caller retries each debit alone.
 */
export async function debitEach(tx: Transaction, requests: readonly DebitRequest[]): Promise<Array<MovementRow | null>> {
  const merchants = new Set<number>();
  for (const request of requests) {
    assertPositiveCentavos(request.amountCentavos);
    if (merchants.has(request.businessCode)) throw new LedgerError(`merchant ${request.businessCode} is debited twice in one call`);
    merchants.add(request.businessCode);
  }
  const rows = await store.debitAndRecordTransfers(tx, requests, { waitForLocks: requests.length === 1 });
  return rows.map((row, i) => {
    if (row.outcome === 'no_balance') throw new LedgerError(`merchant ${requests[i]!.businessCode} has no balance`);
    return row.outcome === 'debited' ? row.movement : null;
  });
}

/**
 * The transfer lifecycle of docs/api-reference.md#transfer-lifecycle, as the statuses a movement may be settled from: PENDING →
 * IN_TRANSIT → COMPLETED; PENDING or IN_TRANSIT → FAILED; only PENDING → CANCELED (a transfer the bank
 * already has cannot be taken back). COMPLETED, FAILED and CANCELED are final.
 */
const SETTLE_FROM = {
  IN_TRANSIT: ['PENDING'],
  COMPLETED: ['IN_TRANSIT'],
  FAILED: ['PENDING', 'IN_TRANSIT'],
  CANCELED: ['PENDING'],
} as const satisfies Record<Exclude<MovementStatus, 'PENDING'>, readonly MovementStatus[]>;

export interface SettleRequest {
  businessCode: number;
  movementId: number;
  /** IN_TRANSIT keeps the funds pending; COMPLETED releases them from `pending_out`; FAILED and CANCELED return them to `available`. */
  status: Exclude<MovementStatus, 'PENDING'>;
  now: Date;
}

/**
 * Moves an open (PENDING or IN_TRANSIT) movement to its next status, in place: no second row, so the
 * invariant of docs/api-reference.md#balance-invariant stays a plain sum. Funds return exactly once, because only an open movement
 * can be settled and the status update is guarded.
 */
export async function settle(tx: Transaction, request: SettleRequest): Promise<MovementRow> {
  const movement = await store.updateMovementStatus(tx, request.businessCode, request.movementId, SETTLE_FROM[request.status], request.status, request.now);
  if (!movement) {
    const current = await store.findMovement(tx, request.businessCode, request.movementId);
    throw new LedgerError(
      current
        ? `movement ${request.movementId} is ${current.status} and cannot become ${request.status}`
        : `movement ${request.movementId} of merchant ${request.businessCode} does not exist`,
    );
  }
  const pendingAmount = centavos(-movement.amount_centavos); // transfers carry negative amounts
  if (request.status === 'COMPLETED') {
    await store.addToAvailable(tx, request.businessCode, { availableCentavos: centavos(0), pendingOutCentavos: centavos(-pendingAmount) }, request.now);
  } else if (request.status === 'FAILED' || request.status === 'CANCELED') {
    await store.addToAvailable(tx, request.businessCode, { availableCentavos: pendingAmount, pendingOutCentavos: centavos(-pendingAmount) }, request.now);
  }
  return movement;
}

/**
 * One page of a merchant's history, newest first. `total` comes from the movement counters, not a
 * count; a page in the older half of the history is read from the oldest end, so no OFFSET is ever
 * longer than half the history (one merchant with a million movements still answers its last page
 * through a short index walk).
 */
export async function listMovements(db: Queryable, filter: MovementFilter, page: PageRequest): Promise<Page<MovementRow>> {
  const total = await store.countMovements(db, filter);
  const skip = pageWindow(page).offset;
  if (skip >= total) return { items: [], total };
  const limit = Math.min(page.perPage, total - skip);
  const skipFromOldest = total - skip - limit;
  const movements = skipFromOldest < skip
    ? await store.findMovementsPage(db, filter, { skip: skipFromOldest, limit, fromOldest: true })
    : await store.findMovementsPage(db, filter, { skip, limit, fromOldest: false });
  return { items: movements, total };
}

export interface InvariantReport {
  balancesChecked: number;
  violations: InvariantRow[];
}

/** Recomputes the invariant of docs/api-reference.md#balance-invariant for every merchant; `violations` is empty when the ledger is right. */
export async function checkInvariant(tx: Transaction): Promise<InvariantReport> {
  const balancesChecked = await store.countBalances(tx);
  const violations = await store.findInvariantViolations(tx);
  return { balancesChecked, violations };
}

function assertPositiveCentavos(amountCentavos: number): void {
  if (!Number.isSafeInteger(amountCentavos) || amountCentavos <= 0) {
    throw new LedgerError(`amount must be a positive whole number of centavos, got ${amountCentavos}`);
  }
}
