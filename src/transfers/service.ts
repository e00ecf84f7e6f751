// The rules of transfers (docs/api-reference.md#transfers): creation with its debit, reads, the merchant's cancel, and the
// lifecycle a rail drives. Every status change, its ledger settle and its event commit in one transaction
// (docs/architecture.md, rule 2); money moves only through ledger, events only through events.emit.
import type { Database, Queryable, ReadDatabase, Transaction } from '../db/database.ts';
import * as events from '../events/service.ts';
import { ApiError, notFound, validationError } from '../kernel/errors.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import { GroupCommit } from '../db/group-commit.ts';
import {
  refusalOutcome, runIdempotentEach, scopeKey, type IdempotencyScope, type IdempotentRequest, type IdempotentResult, type Outcome,
} from '../idempotency/service.ts';
import * as ledger from '../ledger/service.ts';
import * as merchants from '../merchants/service.ts';
import { FREE_PLAN, transferFee, type PricePlan } from '../merchants/pricing.ts';
import { FullAccountNumber } from '../masking.ts';
import { validatedCentavos, type Centavos } from '../money.ts';
import { railKey } from '../rails/keys.ts';
import type { InstantPayOut, RailReport, RailStatus, RailTransferOrder } from '../rails/pay-out.ts';
import {
  MAX_TRANSFER_CENTAVOS, MIN_TRANSFER_CENTAVOS,
  type CreateTransferBody, type FailureCode, type TransferResource, type TransferStatus,
} from './schemas.ts';
import * as store from './store.ts';
import { toTransferResource } from './views.ts';
import type { TransferOrigin, TransferRow } from './store.ts';

/** The idempotency route name of POST /api/v2/transfers. */
export const CREATE_TRANSFER_ROUTE = 'POST /api/v2/transfers';

/** Failure code when a rail fails a transfer without saying why, and the advance helper's default. */
const DEFAULT_FAILURE_CODE: FailureCode = 'ACCOUNT_CLOSED';

/** The transfer status each rail status leads to: a closed table, no default (docs/architecture.md, habit 8). */
const TRANSFER_STATUS_OF_RAIL = {
  accepted: 'IN_TRANSIT',
  settled: 'COMPLETED',
  rejected: 'FAILED',
  returned: 'FAILED',
} as const satisfies Record<RailStatus, TransferStatus>;

/** The validated request in canonical form (amount in centavos): what the idempotency fingerprint hashes. */
export interface CreateTransferRequest {
  business_code: number;
  amount_centavos: Centavos;
  currency: 'BOB';
  reference: string | null;
  /**
   * The full account number stays text here: this is the canonical request the idempotency fingerprint
   * hashes, and two accounts with the same mask must not share a fingerprint. It becomes a
   * FullAccountNumber where it is stored (debitAndRecordTransfers).
   */
  destination: { type: 'bank_account'; bank_code: number; account_number: string; account_titular: string };
}

export function toCreateTransferRequest(body: CreateTransferBody): CreateTransferRequest {
  return {
    business_code: body.business_code,
    amount_centavos: validatedCentavos(body.amount, { min: MIN_TRANSFER_CENTAVOS, max: MAX_TRANSFER_CENTAVOS }),
    currency: 'BOB',
    reference: body.reference ?? null,
    destination: {
      type: 'bank_account',
      bank_code: body.destination.bank_code,
      account_number: body.destination.account_number,
      account_titular: body.destination.account_titular,
    },
  };
}

/** A transfer creation waiting for its batch: the caller's idempotency key and the canonical request. */
export interface TransferCreation extends IdempotentRequest {
  request: CreateTransferRequest;
  /** Not part of the request (nor of its idempotency fingerprint): who asked for it. */
  origin: TransferOrigin;
}

/** The creations of this process, written in batches by group commit (one queue per app). */
export type TransferCreationQueue = GroupCommit<TransferCreation, IdempotentResult>;

export function transferCreationQueue(db: Database): TransferCreationQueue {
  return new GroupCommit<TransferCreation, IdempotentResult>({
    // A merchant's creations go in one batch at a time, together: the statement applies them in order under
    // the balance's lock (ledger.debitEach), so a hot merchant writes its waiting transfers in one transaction.
    keyOf: (creation) => creation.request.business_code,
    // The same key again while the first is queued or being written: 409 at once (docs/api-reference.md#idempotency), as the
    // advisory lock answers it between processes.
    exclusiveKeyOf: ({ scope }) => scopeKey(scope),
    duplicate: () => new ApiError('IDEMPOTENCY_KEY_IN_USE'),
    write: (creations) => writeTransferCreations(db, creations),
    maxBatch: 64,
    // Two: one batch commits while the next is written. More only makes batches smaller (bench/transfers.ts:
    // 4 in flight averaged 4.9 transfers per transaction and fewer transfers/s than 2 with 8.4), and
    // leaves less of the pool to other requests. On PGlite, which runs one transaction at a time, a second
    // batch would only wait for the first and take the requests the next batch should have.
    maxInFlight: db.connections >= 4 ? 2 : 1,
  });
}

/**
 * One batch of creations in one transaction, each at most once per idempotency key: the debits, transfer
 * rows, events and stored outcomes. The merchants' price plans are share-locked right behind the keys' claim,
 * in the same round trip.
 */
export function writeTransferCreations(db: Database, creations: readonly TransferCreation[]): Promise<Array<IdempotentResult | ApiError>> {
  return runIdempotentEach(db, creations, debitAndRecordTransfers, {
    prefetch: (tx, all) => merchants.lockPricePlans(tx, all.map((creation) => creation.request.business_code)),
  });
}

/**
 * POST /api/v2/transfers after validation: 403 when `business_code` is not the key's merchant, then the
 * idempotent creation. A 201 and a 400 INSUFFICIENT_FUNDS are stored and replayed; anything else is not.
 */
export async function createTransfer(
  creations: TransferCreationQueue,
  caller: { businessCode: number; idempotencyScope: IdempotencyScope },
  body: CreateTransferBody,
  now: Date,
): Promise<IdempotentResult> {
  if (body.business_code !== caller.businessCode) throw new ApiError('BUSINESS_CODE_MISMATCH');
  return creations.submit({ scope: caller.idempotencyScope, request: toCreateTransferRequest(body), origin: 'api', now });
}

/**
 * A transfer to create, whoever asked for it: the API's canonical request (debitAndRecordTransfers turns it
 * into this) or a payout schedule (createScheduledTransfer). The account number is a FullAccountNumber from
 * here on, so a schedule's stored destination reaches the transfers table without being opened.
 */
export interface TransferOrder {
  businessCode: number;
  amountCentavos: Centavos;
  reference: string | null;
  destination: { bankCode: number; accountNumber: FullAccountNumber; accountTitular: string };
  origin: TransferOrigin;
  now: Date;
}

function orderOf({ request, origin, now }: TransferCreation): TransferOrder {
  return {
    businessCode: request.business_code,
    amountCentavos: request.amount_centavos,
    reference: request.reference,
    destination: {
      bankCode: request.destination.bank_code,
      accountNumber: new FullAccountNumber(request.destination.account_number),
      accountTitular: request.destination.account_titular,
    },
    origin,
    now,
  };
}

/**
 * The debits, transfer rows and `transfer.created` events of several creations (a merchant's in arrival
 * order), in the caller's transaction: 201 with the transfer, or the stored 400 INSUFFICIENT_FUNDS for a
 * creation whose debit was refused (it wrote nothing). Outcomes in creation order.
 */
async function debitAndRecordTransfers(tx: Transaction, creations: TransferCreation[], plans: PlansInForce): Promise<Outcome[]> {
  const recorded = await debitAndRecord(tx, creations.map(orderOf), plans);
  const insufficientFunds = refusalOutcome(new ApiError('INSUFFICIENT_FUNDS'));
  return recorded.map((transfer) => (transfer ? { statusCode: 201, body: transfer.resource } : insufficientFunds));
}

/**
 * A payout schedule's transfer (origin `schedule`, docs/payouts.md), in the caller's transaction, with its
 * debit, fee and `transfer.created` event like any other; null, having written nothing, when `available`
 * does not cover amount and fee.
 */
export async function createScheduledTransfer(tx: Transaction, order: Omit<TransferOrder, 'origin'>): Promise<TransferRow | null> {
  const plans = await merchants.lockPricePlans(tx, [order.businessCode]);
  const [recorded] = await debitAndRecord(tx, [{ ...order, origin: 'schedule' }], plans);
  return recorded?.row ?? null;
}

/**
 * The price plans in force for the orders' merchants, read under a share lock held until commit
 * (merchants.lockPricePlans), so a plan change applies to the transfers created after it.
 */
type PlansInForce = ReadonlyMap<number, PricePlan>;

/** The orders' debits (each with its plan's transfer fee), rows and events; null for an order whose debit was refused. */
async function debitAndRecord(tx: Transaction, orders: TransferOrder[], plans: PlansInForce): Promise<Array<{ row: TransferRow; resource: TransferResource } | null>> {
  const fees = orders.map((order) => transferFee(plans.get(order.businessCode) ?? FREE_PLAN));
  const movements = await ledger.debitEach(tx, orders.map((order, i) => ({
    businessCode: order.businessCode,
    amountCentavos: order.amountCentavos,
    feeCentavos: fees[i],
    reference: order.reference,
    snapshot: { destination: maskedDestination(order.destination) } satisfies ledger.TransferSnapshot,
    now: order.now,
  })));
  const debited = orders.flatMap((order, i) => (movements[i] ? [{ order, movementId: movements[i].id, fee: fees[i]! }] : []));
  const rows = debited.length === 0 ? [] : await store.insertTransfers(tx, debited.map(({ order, movementId, fee }) => ({
    businessCode: order.businessCode,
    movementId,
    amountCentavos: order.amountCentavos,
    feeCentavos: fee,
    origin: order.origin,
    reference: order.reference,
    bankCode: order.destination.bankCode,
    accountNumber: order.destination.accountNumber,
    accountTitular: order.destination.accountTitular,
    now: order.now,
  })));
  const rowOfMovement = new Map(rows.map((row) => [row.movement_id, row]));
  const recorded = debited.map(({ movementId }) => {
    const row = rowOfMovement.get(movementId)!;
    return { row, resource: toTransferResource(row) };
  });
  // Nothing needs the events back: they travel with whatever the transaction sends next (runIdempotentEach
  // stores the outcomes, a schedule its run), and it waits for them before it commits: one round trip less per batch.
  tx.awaitBeforeCommit(events.emitEach(tx, recorded.map(({ resource }, n) => ({
    owner: { kind: 'merchant', businessCode: resource.business_code },
    type: 'transfer.created',
    data: resource,
    now: debited[n]!.order.now,
  }))));
  let next = 0;
  return movements.map((movement) => (movement ? recorded[next++]! : null));
}

export async function getTransfer(db: Queryable, businessCode: number, id: number): Promise<TransferRow> {
  const row = await store.findTransfer(db, businessCode, id);
  if (!row) throw notFound('transfer');
  return row;
}

export async function listTransfers(db: ReadDatabase, businessCode: number, status: TransferStatus | null, page: PageRequest): Promise<Page<TransferRow>> {
  // One snapshot for the page and its total, so `meta` agrees with `data`.
  return db.transaction(async (tx) => {
    const total = await store.countTransfersOfMerchant(tx, businessCode, status);
    const items = await store.listTransfersOfMerchant(tx, businessCode, { status, ...pageWindow(page) });
    return { items, total };
  });
}

/**
 * The transfers behind a page of the merchant's movements (a transfer movement's `id` is the transfer's
 * `movement_id`): movement id → transfer id, so a history can link each transfer movement to its transfer.
 */
export async function transferIdsOfMovements(db: Queryable, businessCode: number, movementIds: readonly number[]): Promise<Map<number, number>> {
  return movementIds.length === 0 ? new Map() : store.findTransferIdsByMovement(db, businessCode, movementIds);
}

/** The merchant cancels a PENDING transfer: CANCELED, funds back to `available`, `transfer.canceled`. */
export async function cancelTransfer(db: Database, businessCode: number, id: number, now: Date): Promise<TransferRow> {
  return db.transaction(async (tx) => {
    const row = await store.cancelPendingTransfer(tx, businessCode, id, now);
    if (!row) {
      const current = await store.findTransfer(tx, businessCode, id);
      if (!current) throw notFound('transfer');
      throw new ApiError('TRANSFER_NOT_CANCELABLE', { message: `Transfer ${id} is ${current.status}; only a PENDING transfer can be canceled.` });
    }
    return settleAndAnnounce(tx, row, now);
  });
}

/**
 * The sandbox helper: moves a transfer to `to` as the rail would. IN_TRANSIT submits it to the rail (an
 * account ending in -0000 then FAILS with ACCOUNT_CLOSED); COMPLETED from PENDING passes through
 * IN_TRANSIT first (each step with its event); FAILED needs an open transfer.
 */
export async function advanceTransfer(
  db: Database,
  rail: InstantPayOut,
  businessCode: number,
  id: number,
  target: { to: 'IN_TRANSIT' | 'COMPLETED' | 'FAILED'; failureCode?: FailureCode },
  now: Date,
): Promise<TransferRow> {
  if (target.failureCode !== undefined && target.to !== 'FAILED') {
    throw validationError([{ field: 'failure_code', code: 'invalid_value', message: 'is only allowed with to: FAILED' }]);
  }
  return db.transaction(async (tx) => {
    let row = await store.findTransferForUpdate(tx, businessCode, id);
    if (!row) throw notFound('transfer');
    const refuse = () => validationError([{
      field: 'to',
      code: 'invalid_value',
      message: `transfer ${id} is ${row!.status} and cannot become ${target.to}`,
    }]);
    switch (target.to) {
      case 'IN_TRANSIT':
        if (row.status !== 'PENDING') throw refuse();
        row = await applyRailReport(tx, row, await rail.submit(railOrderOf(row)), now);
        break;
      case 'COMPLETED':
        if (row.status !== 'PENDING' && row.status !== 'IN_TRANSIT') throw refuse();
        if (row.status === 'PENDING') row = await applyRailReport(tx, row, await rail.submit(railOrderOf(row)), now);
        if (row.status === 'IN_TRANSIT') row = await moveToCompleted(tx, row, null, now);
        break;
      case 'FAILED':
        if (row.status !== 'PENDING' && row.status !== 'IN_TRANSIT') throw refuse();
        row = await moveToFailed(tx, row, { failureCode: target.failureCode ?? DEFAULT_FAILURE_CODE, failureMessage: null, railReference: null }, now);
        break;
    }
    return row;
  });
}

export interface SettlementDelays {
  /** PENDING → IN_TRANSIT (submission). */
  pendingMs: number;
  /** IN_TRANSIT → COMPLETED (settlement). */
  inTransitMs: number;
}

/**
 * One step of the rail worker: claims one transfer whose current step is due (SKIP LOCKED, so any number
 * of processes can run it), asks the rail, and applies its answer in the same transaction. False when
 * nothing is due.
 */
export async function advanceOneDueTransfer(db: Database, rail: InstantPayOut, delays: SettlementDelays, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const row = await store.claimDueTransfer(tx, {
      pendingBefore: new Date(now.getTime() - delays.pendingMs),
      inTransitBefore: new Date(now.getTime() - delays.inTransitMs),
    });
    if (!row) return false;
    // The rail call happens under the row lock. That is fine for the in-process sandbox rail; a networked
    // rail may be called again after a crash, which its idempotency key (derived from our id) makes harmless.
    const report = row.status === 'PENDING'
      ? await rail.submit(railOrderOf(row))
      : await rail.track(railOrderOf(row), row.rail_reference ?? '');
    await applyRailReport(tx, row, report, now);
    return true;
  });
}

/** Applies what the rail said about a transfer whose row `tx` holds locked. */
async function applyRailReport(tx: Transaction, row: TransferRow, report: RailReport, now: Date): Promise<TransferRow> {
  const target = TRANSFER_STATUS_OF_RAIL[report.status];
  switch (target) {
    case 'IN_TRANSIT':
      return row.status === 'PENDING' ? moveToInTransit(tx, row, report.railReference, now) : row;
    case 'COMPLETED': {
      const inTransit = row.status === 'PENDING' ? await moveToInTransit(tx, row, report.railReference, now) : row;
      return inTransit.status === 'IN_TRANSIT' ? moveToCompleted(tx, inTransit, null, now) : inTransit;
    }
    case 'FAILED':
      return moveToFailed(tx, row, { failureCode: report.failureCode ?? 'REJECTED_BY_BANK', failureMessage: null, railReference: report.railReference }, now);
    default:
      return assertNever(target);
  }
}

// The transitions a rail drives, each with its ledger side and event (the batches of a bank rail, batches.ts, use them too).

/** PENDING → IN_TRANSIT. */
export async function moveToInTransit(tx: Transaction, row: TransferRow, railReference: string | null, now: Date): Promise<TransferRow> {
  const moved = await store.markTransferInTransit(tx, row.business_code, row.id, railReference, now);
  if (!moved) throw lostTransition(row, 'IN_TRANSIT');
  await settleAndAnnounce(tx, moved, now);
  return moved;
}

/**
 * PENDING → IN_TRANSIT for the transfers a bank batch holds, claimed and locked by the caller: one UPDATE
 * and one insert of their events, whatever their number (no journal entry on the way).
 */
export async function moveAllToInTransit(tx: Transaction, rows: readonly TransferRow[], now: Date): Promise<TransferRow[]> {
  const moved = await store.markTransfersInTransit(tx, rows.map((row) => row.id), now);
  if (moved.length !== rows.length) throw new Error(`${rows.length - moved.length} claimed transfers left PENDING before their batch was written`);
  await events.emitEach(tx, moved.map((row) => ({
    owner: { kind: 'merchant', businessCode: row.business_code } as const,
    type: EVENT_OF_STATUS.IN_TRANSIT,
    data: toTransferResource(row),
    now,
  })));
  return moved;
}

/** IN_TRANSIT → COMPLETED: the settlement entry. */
export async function moveToCompleted(tx: Transaction, row: TransferRow, railReference: string | null, now: Date): Promise<TransferRow> {
  const moved = await store.markTransferCompleted(tx, row.business_code, row.id, railReference, now);
  if (!moved) throw lostTransition(row, 'COMPLETED');
  await settleAndAnnounce(tx, moved, now);
  return moved;
}

/** PENDING or IN_TRANSIT → FAILED: the funds return. */
export async function moveToFailed(
  tx: Transaction,
  row: TransferRow,
  failure: { failureCode: FailureCode; failureMessage: string | null; railReference: string | null },
  now: Date,
): Promise<TransferRow> {
  const moved = await store.markTransferFailed(tx, row.business_code, row.id, failure, now);
  if (!moved) throw lostTransition(row, 'FAILED');
  await settleAndAnnounce(tx, moved, now);
  return moved;
}

/** The ledger side and the event of a status change just written to `row` (same transaction). */
async function settleAndAnnounce(tx: Transaction, row: TransferRow, now: Date): Promise<TransferRow> {
  const status = row.status;
  if (status === 'PENDING') throw new Error(`transfer ${row.id} cannot be settled back to PENDING`);
  const closing = CLOSING_OF_STATUS[status];
  if (closing !== null) await ledger.close(tx, { businessCode: row.business_code, movementId: row.movement_id, kind: closing, now });
  await events.emit(tx, { kind: 'merchant', businessCode: row.business_code }, EVENT_OF_STATUS[status], toTransferResource(row), now);
  return row;
}

/** The journal entry each change posts: none on the way, the settlement, or the funds' return. */
const CLOSING_OF_STATUS = {
  IN_TRANSIT: null,
  COMPLETED: 'transfer_settlement',
  FAILED: 'transfer_return',
  CANCELED: 'transfer_return',
} as const satisfies Record<Exclude<TransferStatus, 'PENDING'>, ledger.Closing | null>;

const EVENT_OF_STATUS = {
  IN_TRANSIT: 'transfer.in_transit',
  COMPLETED: 'transfer.completed',
  FAILED: 'transfer.failed',
  CANCELED: 'transfer.canceled',
} as const satisfies Record<Exclude<TransferStatus, 'PENDING'>, events.EventType>;

/** A transition the caller's row lock should have made certain did not apply: a bug, never user input. */
function lostTransition(row: TransferRow, to: TransferStatus): Error {
  return new Error(`transfer ${row.id} left ${row.status} before it could become ${to}`);
}

/** What a rail needs to pay a transfer out (the full account number travels only to the rail). */
export function railOrderOf(row: TransferRow): RailTransferOrder {
  return {
    idempotencyKey: railKey('transfer', row.id),
    amountCentavos: row.amount_centavos,
    currency: 'BOB',
    bankCode: row.bank_code,
    accountNumber: row.account_number,
    accountTitular: row.account_titular,
    reference: row.reference,
  };
}

function maskedDestination(destination: TransferOrder['destination']): TransferResource['destination'] {
  return { type: 'bank_account', bank_code: destination.bankCode, account_number: destination.accountNumber.masked, account_titular: destination.accountTitular };
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${String(value)}`);
}
