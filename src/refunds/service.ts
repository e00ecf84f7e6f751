// The rules of refunds (docs/api-reference.md#refunds): creation with its debit, reads, the lifecycle the
// payment rail drives, and late payments, which are refunded in full the moment they are recorded. Every
// change, its journal entry and its event commit in one transaction (docs/architecture.md, rule 2).
//
// Lock order, the same on every path so two refunds can never deadlock: the refund row (lifecycle steps),
// then the payment row, then the merchant's balance.
import type { AppContext } from '../context.ts';
import type { Database, Queryable, ReadDatabase, Transaction } from '../db/database.ts';
import * as events from '../events/service.ts';
import { runIdempotent, type IdempotencyScope, type IdempotentResult } from '../idempotency/service.ts';
import { randomBase62 } from '../ids.ts';
import { ApiError, notFound, validationError } from '../kernel/errors.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import * as ledger from '../ledger/service.ts';
import { centavos, formatCentavos, validatedCentavos, type Centavos } from '../money.ts';
import type { PaymentNotice, RefundRail, RefundReport } from '../rails/pay-in.ts';
import type { RailFailureCode } from '../rails/failures.ts';
import { railKey } from '../rails/keys.ts';
import * as qrs from '../qr/service.ts';
import type { PaymentRow } from '../qr/store.ts';
import { toPaymentView } from '../qr/views.ts';
import { MAX_REFUND_CENTAVOS, MIN_REFUND_CENTAVOS, type CreateRefundBody, type RefundReason, type RefundStatus } from './schemas.ts';
import * as store from './store.ts';
import type { RefundRow } from './store.ts';
import { toRefundResource } from './views.ts';

export type { RefundRow } from './store.ts';

/** The idempotency route name of POST /api/v2/refunds. */
export const CREATE_REFUND_ROUTE = 'POST /api/v2/refunds';

/** Failure code when the advance helper fails a refund without saying why. */
const DEFAULT_FAILURE_CODE: RailFailureCode = 'ACCOUNT_CLOSED';

/** The validated request in canonical form (amount in centavos): what the idempotency fingerprint hashes. */
export interface CreateRefundRequest {
  payment_id: number;
  amount_centavos: Centavos | null;
  reason: RefundReason;
  description: string | null;
}

export function toCreateRefundRequest(body: CreateRefundBody): CreateRefundRequest {
  return {
    payment_id: body.payment_id,
    amount_centavos: body.amount === undefined ? null : validatedCentavos(body.amount, { min: MIN_REFUND_CENTAVOS, max: MAX_REFUND_CENTAVOS }),
    reason: body.reason ?? 'requested_by_customer',
    description: body.description ?? null,
  };
}

/**
 * POST /api/v2/refunds after validation: the idempotent creation. A 201 and a 400 INSUFFICIENT_FUNDS are
 * stored and replayed for the key; 404, 409 and 422 are not, so a corrected retry with the key executes.
 */
export async function createRefund(
  { db, config }: Pick<AppContext, 'db' | 'config'>,
  caller: { businessCode: number; idempotencyScope: IdempotencyScope },
  body: CreateRefundBody,
  now: Date,
): Promise<IdempotentResult> {
  const request = toCreateRefundRequest(body);
  return runIdempotent(db, caller.idempotencyScope, request, now, async (tx) => {
    const { payment, externalReference } = await qrs.lockPaymentForRefund(tx, caller.businessCode, request.payment_id);
    if (payment.paid_at.getTime() + config.refundWindowMs <= now.getTime()) {
      throw new ApiError('REFUND_WINDOW_CLOSED', {
        message: `Payment ${payment.id} was made on ${payment.paid_at.toISOString()}, before the refund window began.`,
      });
    }
    const left = payment.amount_centavos - payment.amount_refunded_centavos;
    const amount = request.amount_centavos ?? centavos(left);
    if (left === 0 || amount > left) {
      throw new ApiError('REFUND_EXCEEDS_PAYMENT', {
        message: `Payment ${payment.id} has ${formatCentavos(centavos(left))} BOB left to refund.`,
      });
    }
    const refund = await openRefund(tx, payment, externalReference, { amountCentavos: amount, reason: request.reason, description: request.description }, now);
    return { statusCode: 201, body: toRefundResource(refund) };
  });
}

/**
 * The refund itself, on a payment the caller holds locked: counted on the payment (the database refuses
 * more than was paid), debited from `available` with its `refund` movement (400 INSUFFICIENT_FUNDS when
 * it does not cover it), the refund row and `refund.created`.
 */
async function openRefund(
  tx: Transaction,
  payment: PaymentRow,
  externalReference: string | null,
  refund: { amountCentavos: Centavos; reason: RefundReason; description: string | null },
  now: Date,
): Promise<RefundRow> {
  const id = `rf_${randomBase62(22)}`;
  await qrs.addRefunded(tx, payment.id, refund.amountCentavos);
  const movement = await ledger.debitForRefund(tx, {
    businessCode: payment.business_code,
    amountCentavos: refund.amountCentavos,
    reference: refund.description,
    snapshot: {
      details: {
        source_bank: payment.source_bank,
        account_number: payment.account_number.masked,
        account_titular: payment.account_titular,
        payment_id: payment.id,
        refund_id: id,
      },
      qr_id: payment.qr_id,
      ...(externalReference === null ? {} : { external_reference: externalReference }),
    },
    now,
  });
  if (!movement) throw new ApiError('INSUFFICIENT_FUNDS', { message: 'The available balance does not cover this refund.' });
  const row = await store.insertRefund(tx, {
    id,
    businessCode: payment.business_code,
    paymentId: payment.id,
    qrId: payment.qr_id,
    movementId: movement.id,
    amountCentavos: refund.amountCentavos,
    reason: refund.reason,
    description: refund.description,
    now,
  });
  await events.emit(tx, { kind: 'merchant', businessCode: row.business_code }, 'refund.created', toRefundResource(row), now);
  return row;
}

/** What a rail notification for a QR became: an ordinary payment, or a late one with its full refund. */
export type ReceivedNotice =
  | { late: false; payment: PaymentRow }
  | { late: true; payment: PaymentRow; refund: RefundRow };

/**
 * A rail's notification of money a payer's bank has already sent (docs/api-reference.md#late-payments):
 * a QR that can take it takes it as any payment; one that cannot (paid, canceled, expired, its merchant
 * suspended) records it and refunds it in full in the same transaction, so the payer always gets it back.
 */
export async function receiveNotice(
  context: Pick<AppContext, 'db' | 'config' | 'purposes'>,
  notice: PaymentNotice,
  now: Date,
): Promise<ReceivedNotice> {
  return context.db.transaction(async (tx): Promise<ReceivedNotice> => {
    const received = await qrs.receivePaymentIn(tx, context, notice, now, { whenNotPayable: 'record' });
    if (!('late' in received)) return { late: false, payment: received.payment };
    const refund = await openRefund(tx, received.payment, received.qr.external_reference, { amountCentavos: received.payment.amount_centavos, reason: 'qr_not_payable', description: null }, now);
    return { late: true, payment: { ...received.payment, amount_refunded_centavos: received.payment.amount_centavos }, refund };
  });
}

/** The sandbox late-payment helper's answer: the payment object with its automatic refund. */
export function toNoticeView(received: ReceivedNotice) {
  return { ...toPaymentView(received.payment), refund: received.late ? toRefundResource(received.refund) : null };
}

export async function getRefund(db: Queryable, businessCode: number, id: string): Promise<RefundRow> {
  const row = await store.findRefund(db, businessCode, id);
  if (!row) throw notFound('refund');
  return row;
}

export async function listRefunds(
  db: ReadDatabase,
  filter: { businessCode: number; paymentId: number | null; status: RefundStatus | null },
  page: PageRequest,
): Promise<Page<RefundRow>> {
  // One snapshot for the page and its total, so `meta` agrees with `data`.
  return db.transaction(async (tx) => {
    const total = await store.countRefunds(tx, filter);
    const window = pageWindow(page);
    const items = window.offset < total ? await store.listRefunds(tx, filter, window) : [];
    return { items, total };
  });
}

/**
 * The sandbox helper: COMPLETED asks the rail to pay the refund now (the sandbox rail fails a payer account
 * ending in 0000, so the refund may end FAILED); FAILED fails it with the code given. Only a PENDING
 * refund moves: anything else is 422 on `to`.
 */
export async function advanceRefund(
  db: Database,
  rail: RefundRail,
  businessCode: number,
  id: string,
  target: { to: 'COMPLETED' | 'FAILED'; failureCode?: RailFailureCode },
  now: Date,
): Promise<RefundRow> {
  if (target.failureCode !== undefined && target.to !== 'FAILED') {
    throw validationError([{ field: 'failure_code', code: 'invalid_value', message: 'is only allowed with to: FAILED' }]);
  }
  return db.transaction(async (tx) => {
    const row = await store.findRefundForUpdate(tx, businessCode, id);
    if (!row) throw notFound('refund');
    if (row.status !== 'PENDING') {
      throw validationError([{ field: 'to', code: 'invalid_value', message: `refund ${id} is ${row.status} and cannot become ${target.to}` }]);
    }
    const report: RefundReport = target.to === 'COMPLETED'
      ? await rail.sendRefund(refundOrderOf(row))
      : { status: 'failed', railReference: null, failureCode: target.failureCode ?? DEFAULT_FAILURE_CODE };
    return applyRefundReport(tx, row, report, now);
  });
}

/**
 * The operator's word on a PENDING refund of any merchant (POST /admin/v1/refunds/{id}/resolve, mps refund
 * resolve): where the rail cannot pay a refund back by itself (a bank without reversals, docs/rails.md), the
 * operator pays the payer some other way, or cannot, and records which. The refund moves exactly as the
 * sandbox's advance helper moves it — COMPLETED, or FAILED with its funds back in the balance and the
 * helper's default failure code — with its events; no rail is called. 404 unknown; 409 REFUND_NOT_PENDING.
 */
export async function resolveRefund(
  db: Database,
  id: string,
  resolution: { to: 'COMPLETED' | 'FAILED'; note: string | null },
  now: Date,
): Promise<RefundRow> {
  return db.transaction(async (tx) => {
    const row = await store.findAnyRefundForUpdate(tx, id);
    if (!row) throw notFound('refund');
    if (row.status !== 'PENDING') throw new ApiError('REFUND_NOT_PENDING', { message: `Refund ${id} is ${row.status}: it was resolved already.` });
    if (resolution.note !== null) await store.noteResolution(tx, id, resolution.note);
    const noted = { ...row, resolution_note: resolution.note ?? row.resolution_note };
    const report: RefundReport = resolution.to === 'COMPLETED'
      ? { status: 'completed', railReference: null }
      : { status: 'failed', railReference: null, failureCode: DEFAULT_FAILURE_CODE };
    return applyRefundReport(tx, noted, report, now);
  });
}

/**
 * One step of the rail worker: claims one refund PENDING for at least `delayMs` (SKIP LOCKED, so any
 * number of processes can run it), asks the rail to pay it, and applies the answer in the same
 * transaction. False when nothing is due.
 */
export async function settleOneDueRefund(db: Database, rail: RefundRail, delayMs: number, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const row = await store.claimDueRefund(tx, new Date(now.getTime() - delayMs));
    if (!row) return false;
    // Called under the row lock: fine for the in-process sandbox rail; a networked rail may be called again
    // after a crash, which the idempotency key derived from the refund id makes harmless.
    await applyRefundReport(tx, row, await rail.sendRefund(refundOrderOf(row)), now);
    return true;
  });
}

/** Applies what the rail said about a PENDING refund whose row `tx` holds locked. */
async function applyRefundReport(tx: Transaction, row: RefundRow, report: RefundReport, now: Date): Promise<RefundRow> {
  const owner = { kind: 'merchant', businessCode: row.business_code } as const;
  if (report.status === 'completed') {
    const completed = await store.markRefundCompleted(tx, row.id, report.railReference, now);
    if (!completed) throw lostTransition(row, 'COMPLETED');
    await events.emit(tx, owner, 'refund.completed', toRefundResource(completed), now);
    return completed;
  }
  const failed = await store.markRefundFailed(tx, row.id, { failureCode: report.failureCode, railReference: report.railReference }, now);
  if (!failed) throw lostTransition(row, 'FAILED');
  // The payment row before the balance: the lock order of this module.
  await qrs.addRefunded(tx, failed.payment_id, -failed.amount_centavos);
  await ledger.close(tx, { businessCode: failed.business_code, movementId: failed.movement_id, kind: 'refund_return', now });
  await events.emit(tx, owner, 'refund.failed', toRefundResource(failed), now);
  return failed;
}

/** A transition the caller's row lock should have made certain did not apply: a bug, never user input. */
function lostTransition(row: RefundRow, to: RefundStatus): Error {
  return new Error(`refund ${row.id} left ${row.status} before it could become ${to}`);
}

function refundOrderOf(row: RefundRow) {
  return {
    idempotencyKey: railKey('refund', row.id),
    amountCentavos: row.amount_centavos,
    payer: { sourceBank: row.source_bank, accountNumber: row.account_number, accountTitular: row.account_titular },
  };
}
