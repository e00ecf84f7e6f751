// The rules of Simple QRs (docs/api-reference.md#qr-payments): creation with its EMV payload and image, the one effective-status
// rule every read and write uses, cancel, and payments from any PaymentRail. Money moves only through
// ledger.credit and events only through events.emit, in the payment's transaction.
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { Database, Queryable, ReadDatabase, Transaction } from '../db/database.ts';
import * as events from '../events/service.ts';
import { runIdempotent, storedOutcome, type IdempotencyScope, type IdempotentResult } from '../idempotency/service.ts';
import { ApiError, notFound, railRefused, railUnavailable, validationError, type FieldError } from '../kernel/errors.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import { randomBase62 } from '../ids.ts';
import * as ledger from '../ledger/service.ts';
import * as merchants from '../merchants/service.ts';
import { centavos, centavosToAmount, formatCentavos, validatedCentavos, type Centavos } from '../money.ts';
import { paymentFee } from '../merchants/pricing.ts';
import { buildEmvPayload } from './emv.ts';
import { parseExpiration } from './expiration.ts';
import { findQrById, isUuid, QR_CHANGED_CHANNEL } from './lookup.ts';
import { renderQrDataUri } from './png.ts';
import { requestRailCancel } from '../rails/cancels.ts';
import type { PayInRail, PaymentNotice } from '../rails/pay-in.ts';
import { bankImageDataUri, decodeBankQrImage } from './bank-image.ts';
import { QR_AMOUNT_BOUNDS, type CreateQrBody } from './schemas.ts';
import { effectiveState } from './state.ts';
import * as store from './store.ts';
import { qrUrlOf, toPaymentView, toQrEventView, toQrView } from './views.ts';
import type { PaymentRow, QrRow, QrWithLastPayment } from './store.ts';
import type { RailName } from '../rails/names.ts';

export type { PaymentRow, QrRow, QrStatus, QrWithLastPayment } from './store.ts';
export { findQrById, findQrByPayToken, QR_CHANGED_CHANNEL } from './lookup.ts';

/** Renders the PNG data URI of a payload (inline by default; a worker pool under load). */
export type RenderQrImage = (payload: string) => Promise<string>;
export const renderInline: RenderQrImage = async (payload) => renderQrDataUri(payload);

// ---------------------------------------------------------------------------------------------------
// Create

export interface CreateQrInput {
  amountCentavos: Centavos | null;
  modifyAmount: boolean;
  isMultiUse: boolean;
  description: string | null;
  /** The raw `qr_expiration` text, or null for a QR that never expires. */
  qrExpiration: string | null;
  /** The merchant's own order id. Left out (not null) when absent, as are the three below, so a request
   * without them keeps the idempotency fingerprint it had before they existed. */
  externalReference?: string;
  /** Bounds on what the payer may enter (editable amounts only). */
  minAmountCentavos?: Centavos;
  maxAmountCentavos?: Centavos;
  /** Payments after which a multi-use QR is PAID. */
  maxPayments?: number;
}

export interface CheckedCreateQrInput extends CreateQrInput {
  expiresAt: Date | null;
  /** The expiry as wall-clock text in the service time zone. */
  qrExpirationWallClock: string | null;
}

/** The checks of a create request that its schema cannot express; throws one 422 listing them all. */
export function checkCreateInput(input: CreateQrInput, now: Date, serviceTimeZone: string, { bankIssues = false } = {}): CheckedCreateQrInput {
  const errors: FieldError[] = [];
  if (input.amountCentavos === null && (bankIssues || !input.modifyAmount)) {
    // A bank issues every QR with an amount (§14.3): with a bank's rail it is required on every QR.
    errors.push({ field: 'amount', code: 'required', message: bankIssues ? 'is required: the bank issues every QR with an amount' : 'is required when modify_amount is false' });
  }
  let expiresAt: Date | null = null;
  let qrExpirationWallClock: string | null = null;
  if (input.qrExpiration !== null) {
    const parsed = parseExpiration(input.qrExpiration, now, serviceTimeZone);
    if (parsed.ok) {
      expiresAt = parsed.expiresAt;
      qrExpirationWallClock = parsed.qrExpiration;
    } else {
      errors.push(parsed.error);
    }
  }
  errors.push(...orderRuleErrors(input));
  if (errors.length > 0) throw validationError(errors);
  return { ...input, expiresAt, qrExpirationWallClock };
}

/** The rules of min_amount, max_amount and max_payments that tie them to the QR's other fields. */
function orderRuleErrors(input: CreateQrInput): FieldError[] {
  const errors: FieldError[] = [];
  const { minAmountCentavos: min, maxAmountCentavos: max, amountCentavos: suggested } = input;
  if (!input.modifyAmount) {
    if (min !== undefined) errors.push({ field: 'min_amount', code: 'invalid_value', message: 'is only allowed with modify_amount: true' });
    if (max !== undefined) errors.push({ field: 'max_amount', code: 'invalid_value', message: 'is only allowed with modify_amount: true' });
  } else {
    if (min !== undefined && max !== undefined && min > max) {
      errors.push({ field: 'max_amount', code: 'invalid_value', message: 'must not be less than min_amount' });
    } else if (suggested !== null && ((min !== undefined && suggested < min) || (max !== undefined && suggested > max))) {
      errors.push({ field: 'amount', code: 'invalid_value', message: 'must lie between min_amount and max_amount' });
    }
  }
  if (input.maxPayments !== undefined && !input.isMultiUse) {
    errors.push({ field: 'max_payments', code: 'invalid_value', message: 'is only allowed with is_multi_use: true' });
  }
  return errors;
}

/** A QR or payment amount its schema accepted, in centavos; null when the request left it out. */
export function qrAmountCentavos(amount: number | string | undefined): Centavos | null {
  return amount === undefined ? null : validatedCentavos(amount, QR_AMOUNT_BOUNDS);
}

/** What making a QR needs of the app: the public base URL for its link, the merchant's name, city and MCC. */
export type QrMakingContext = Pick<AppContext, 'config' | 'merchantDisplays'>;

/** Everything of a new QR except the database write: id, token, payload and image. */
async function prepareQr(
  db: Queryable,
  { config, merchantDisplays }: QrMakingContext,
  businessCode: number,
  input: CheckedCreateQrInput,
  purpose: string | null,
  render: RenderQrImage,
): Promise<store.NewQr> {
  const merchant = await merchantDisplays.get(db, businessCode);
  const payToken = randomBase62(22);
  const qrPayload = buildEmvPayload({
    isMultiUse: input.isMultiUse,
    qrUrl: qrUrlOf(config, payToken),
    payToken,
    mcc: merchant.mcc,
    amountCentavos: input.modifyAmount ? null : input.amountCentavos,
    merchantName: merchant.name,
    merchantCity: merchant.city,
  });
  return {
    ...newQrOf(businessCode, input, purpose),
    payToken,
    qrPayload,
    qrImage: await render(qrPayload),
    rail: config.rail.kind,
  };
}

/** The QR's own fields, whoever draws its image; the service's own payload and image are set by the caller. */
function newQrOf(businessCode: number, input: CheckedCreateQrInput, purpose: string | null): Omit<store.NewQr, 'qrPayload' | 'qrImage'> {
  return {
    id: randomUUID(),
    businessCode,
    payToken: randomBase62(22),
    amountCentavos: input.amountCentavos,
    modifyAmount: input.modifyAmount,
    isMultiUse: input.isMultiUse,
    description: input.description,
    qrExpiration: input.qrExpirationWallClock,
    expiresAt: input.expiresAt,
    purpose,
    externalReference: input.externalReference ?? null,
    minAmountCentavos: input.minAmountCentavos ?? null,
    maxAmountCentavos: input.maxAmountCentavos ?? null,
    maxPayments: input.maxPayments ?? null,
    // The configured rail's name (a bank's QR gets the bank's id as rail_reference).
    rail: 'sandbox',
    railReference: null,
  };
}

/** One statement: callers without other writes pass the database itself (autocommit, one round trip). */
async function insertPreparedQr(tx: Queryable, prepared: store.NewQr, now: Date): Promise<QrWithLastPayment> {
  return { qr: await store.insertQr(tx, prepared, now), lastPayment: null };
}

/** The route name idempotency keys of QR creation are scoped to. */
export const CREATE_QR_ROUTE = 'POST /api/v2/simple-qrs';

export interface CreateQrRequest {
  /** The merchant of the calling key. */
  businessCode: number;
  body: CreateQrBody;
  /** The key's scope when the request carries an Idempotency-Key (optional on this route). */
  idempotency: IdempotencyScope | null;
}

/**
 * POST /api/v2/simple-qrs: the checks the schema cannot express (one 422 listing them all), then the
 * business_code check (409), then the payload and image — made before any transaction, so the render
 * never holds a connection — then one insert, replayed for a repeated Idempotency-Key.
 */
export async function createQr(
  context: Pick<AppContext, 'db' | 'config' | 'merchantDisplays' | 'rail'>,
  { businessCode, body, idempotency }: CreateQrRequest,
  now: Date,
  render: RenderQrImage = renderInline,
): Promise<IdempotentResult> {
  const input: CreateQrInput = {
    amountCentavos: qrAmountCentavos(body.amount),
    modifyAmount: body.modify_amount ?? false,
    isMultiUse: body.is_multi_use ?? false,
    description: body.description ?? null,
    qrExpiration: body.qr_expiration ?? null,
    ...(body.external_reference === undefined ? {} : { externalReference: body.external_reference }),
    ...(body.min_amount === undefined ? {} : { minAmountCentavos: qrAmountCentavos(body.min_amount)! }),
    ...(body.max_amount === undefined ? {} : { maxAmountCentavos: qrAmountCentavos(body.max_amount)! }),
    ...(body.max_payments === undefined ? {} : { maxPayments: body.max_payments }),
  };
  const payIn = context.rail.payIn;
  const checked = checkCreateInput(input, now, context.config.serviceTimeZone, { bankIssues: payIn !== null });
  if (body.business_code !== businessCode) throw new ApiError('BUSINESS_CODE_MISMATCH');
  const fingerprinted = { business_code: businessCode, ...input, currency: 'BOB' };
  if (payIn !== null) return createBankQr(context, payIn, { businessCode, checked, idempotency, fingerprinted }, now);
  const prepared = await prepareQr(context.db, context, businessCode, checked, null, render);
  const create = async (tx: Queryable) => ({ statusCode: 201, body: toQrView(context.config, await insertPreparedQr(tx, prepared, now), now) });
  if (idempotency === null) return { ...(await create(context.db)), replayed: false }; // a single insert: no transaction round trips
  return runIdempotent(context.db, idempotency, fingerprinted, now, create);
}

/**
 * A QR the bank issues (§14.3), in three steps that never hold a connection across the bank's call:
 * (1) a stored outcome of the key is looked up, read only — and replayed, without calling the bank;
 * (2) the bank issues the QR under our id, outside any transaction — a refusal is 502 RAIL_REFUSED, no
 * answer 503 RAIL_UNAVAILABLE, and in both cases nothing is written; (3) the QR and the key's outcome are
 * stored in the usual idempotent transaction. Should a concurrent request with the same key have won
 * meanwhile, its outcome is answered and the bank QR issued here is handed to the poll to cancel.
 */
async function createBankQr(
  context: Pick<AppContext, 'db' | 'config' | 'merchantDisplays'>,
  payIn: PayInRail,
  { businessCode, checked, idempotency, fingerprinted }: { businessCode: number; checked: CheckedCreateQrInput; idempotency: IdempotencyScope | null; fingerprinted: unknown },
  now: Date,
): Promise<IdempotentResult> {
  const { db, config } = context;
  if (idempotency !== null) {
    const stored = await storedOutcome(db, idempotency, fingerprinted);
    if (stored) return stored;
  }
  const issued = await issueAtBank(config, payIn, businessCode, checked, null, now);
  const create = async (tx: Queryable) => ({ statusCode: 201, body: toQrView(config, await insertPreparedQr(tx, issued, now), now) });
  const result = await storingBankQr(db, config, issued, now, () =>
    idempotency === null ? create(db).then((answer) => ({ ...answer, replayed: false })) : runIdempotent(db, idempotency, fingerprinted, now, create));
  // A concurrent request with the same key won: its QR is the answer, and the one issued here an orphan.
  if (result.replayed) await requestRailCancel(db, config.rail.kind, issued.railReference, now).catch(() => undefined);
  return result;
}

/** A QR the bank has issued, as it will be stored: the bank's image and id, our own fields. */
type BankIssuedQr = store.NewQr & { railReference: string };

/**
 * Step (2) of every bank QR, the API's and the internal purposes' alike: the bank issues the QR under a
 * new id of ours. Called outside any transaction (the call may take seconds). A refusal throws 502
 * RAIL_REFUSED, no answer 503 RAIL_UNAVAILABLE (the bank may have issued it: unknown, never failed); the
 * caller has written nothing either way.
 */
async function issueAtBank(
  config: Pick<Config, 'rail'>,
  payIn: PayInRail,
  businessCode: number,
  checked: CheckedCreateQrInput,
  purpose: string | null,
  now: Date,
): Promise<BankIssuedQr> {
  const qrId = randomUUID();
  const issued = await payIn.issueQr({
    qrId,
    amountCentavos: checked.amountCentavos!, // required with a bank's rail (checkCreateInput)
    description: checked.description ?? '',
    expiresAt: checked.expiresAt,
    issuedAt: now,
    singleUse: !checked.isMultiUse,
    modifyAmount: checked.modifyAmount,
  });
  if (issued.outcome === 'refused') throw railRefused(issued.message);
  if (issued.outcome === 'unknown') throw railUnavailable();
  return {
    ...newQrOf(businessCode, checked, purpose),
    id: qrId,
    qrPayload: decodeBankQrImage(issued.value.pngBase64),
    qrImage: bankImageDataUri(issued.value.pngBase64),
    rail: config.rail.kind,
    railReference: issued.value.railReference,
  };
}

/**
 * Step (3) of every bank QR: runs `write`, which stores `issued`. If it throws, the bank's QR is an orphan
 * unless the write committed and only its answer was lost: it is handed to the cancel queue only when no
 * QR of ours holds it (a lookup that fails too leaves it alone), best effort, and the error goes on.
 */
async function storingBankQr<T>(db: Queryable, config: Pick<Config, 'rail'>, issued: BankIssuedQr, now: Date, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const ours = await findQrById(db, issued.id).catch(() => 'unknown' as const);
    if (ours === undefined) await requestRailCancel(db, config.rail.kind, issued.railReference, now).catch(() => undefined);
    throw error;
  }
}

/**
 * Creates a QR owned by `businessCode` for an internal `purpose` inside the caller's transaction (the
 * onboarding activation fee: owner 1000, the platform merchant). Validation errors are 422 as for the API.
 */
export async function createQrWithPurpose(
  tx: Transaction,
  context: QrMakingContext,
  businessCode: number,
  input: CreateQrInput,
  purpose: string,
  now: Date,
): Promise<QrWithLastPayment> {
  const checked = checkCreateInput(input, now, context.config.serviceTimeZone);
  const prepared = await prepareQr(tx, context, businessCode, checked, purpose, renderInline);
  return insertPreparedQr(tx, prepared, now);
}

/**
 * `createQrWithPurpose` when a bank issues the QRs (§14.3); the caller must hold no transaction. The bank
 * issues the QR first, outside any transaction (502 RAIL_REFUSED, 503 RAIL_UNAVAILABLE: nothing written),
 * then the QR is inserted and `attach` runs with it in one transaction — where the caller ties the QR to
 * what it pays for. `attach` throws to refuse it (another QR was attached first, or its owner closed): the
 * transaction rolls back and the bank's QR goes to the cancel queue, as it does when the write fails.
 */
export async function createBankQrWithPurpose<T>(
  context: Pick<AppContext, 'db' | 'config'>,
  payIn: PayInRail,
  businessCode: number,
  input: CreateQrInput,
  purpose: string,
  now: Date,
  attach: (tx: Transaction, created: QrWithLastPayment) => Promise<T>,
): Promise<T> {
  const { db, config } = context;
  const checked = checkCreateInput(input, now, config.serviceTimeZone, { bankIssues: true });
  const issued = await issueAtBank(config, payIn, businessCode, checked, purpose, now);
  return storingBankQr(db, config, issued, now, () => db.transaction(async (tx) => attach(tx, await insertPreparedQr(tx, issued, now))));
}

// ---------------------------------------------------------------------------------------------------
// Reads

export async function getQrOfMerchant(db: Queryable, businessCode: number, qrId: string): Promise<QrWithLastPayment> {
  const found = isUuid(qrId) ? await store.findQrOfMerchant(db, businessCode, qrId) : undefined;
  if (!found) throw notFound('QR');
  return found;
}

export async function listQrsOfMerchant(
  db: Queryable,
  businessCode: number,
  filter: store.QrFilter,
  now: Date,
  page: PageRequest,
): Promise<Page<QrWithLastPayment>> {
  const window = pageWindow(page);
  const total = await store.countQrsOfMerchant(db, businessCode, filter, now);
  const items = window.offset < total ? await store.listQrsOfMerchant(db, businessCode, filter, now, window) : [];
  return { items, total };
}

export async function listPaymentsOfQr(
  db: Queryable,
  businessCode: number,
  qrId: string,
  page: PageRequest,
): Promise<Page<PaymentRow>> {
  const window = pageWindow(page);
  const { qr } = await getQrOfMerchant(db, businessCode, qrId);
  const total = await store.countPaymentsOfQr(db, qr.id);
  const items = window.offset < total ? await store.listPaymentsOfQr(db, qr.id, window) : [];
  return { items, total };
}

/** A merchant's payment; 404 for an unknown one or another merchant's. */
export async function getPaymentOfMerchant(db: Queryable, businessCode: number, paymentId: number): Promise<PaymentRow> {
  const found = Number.isSafeInteger(paymentId) && paymentId > 0 ? await store.findPaymentOfMerchant(db, businessCode, paymentId) : undefined;
  if (!found) throw notFound('payment');
  return found;
}

/**
 * The payments behind a page of the merchant's movements (a payment movement's `id` is the payment's
 * `movement_id`): movement id → payment id, so a history can link each payment movement to its payment.
 */
export async function paymentIdsOfMovements(db: Queryable, businessCode: number, movementIds: readonly number[]): Promise<Map<number, number>> {
  return movementIds.length === 0 ? new Map() : store.findPaymentIdsByMovement(db, businessCode, movementIds);
}

/** Every payment of a merchant, newest recorded first (late payments included: they were refunded in full). */
export async function listPaymentsOfMerchant(db: ReadDatabase, businessCode: number, page: PageRequest): Promise<Page<PaymentRow>> {
  // One snapshot for the page and its total, so the pager agrees with the rows.
  return db.transaction(async (tx) => {
    const window = pageWindow(page);
    const total = await store.countPaymentsOfMerchant(tx, businessCode);
    const items = window.offset < total ? await store.listPaymentsOfMerchant(tx, businessCode, window) : [];
    return { items, total };
  });
}

// ---------------------------------------------------------------------------------------------------
// Cancel and expiry

/** The merchant cancels an ACTIVE QR (POST /api/v2/simple-qrs/{id}/cancel): 404 unknown, 409 QR_NOT_CANCELABLE. */
export async function cancelQr(db: Database, config: Pick<Config, 'publicBaseUrl'>, businessCode: number, qrId: string, now: Date): Promise<QrWithLastPayment> {
  return db.transaction((tx) => cancelQrIn(tx, config, businessCode, qrId, now));
}

/** `cancelQr` inside the caller's transaction (onboarding cancels an intent's activation QR with the intent). */
export async function cancelQrIn(tx: Transaction, config: Pick<Config, 'publicBaseUrl'>, businessCode: number, qrId: string, now: Date): Promise<QrWithLastPayment> {
  const canceled = isUuid(qrId) ? await store.cancelQrByMerchant(tx, businessCode, qrId, now) : undefined;
  if (!canceled) {
    await getQrOfMerchant(tx, businessCode, qrId); // 404 for an unknown or foreign QR
    throw new ApiError('QR_NOT_CANCELABLE', { message: `QR ${qrId} is already paid or canceled.` });
  }
  const found = (await store.findQrOfMerchant(tx, businessCode, qrId))!;
  // A bank's QR is cancelled at the bank too, by the poll, after this answer (§14.3).
  if (canceled.rail_reference !== null) await requestRailCancel(tx, canceled.rail, canceled.rail_reference, now);
  await events.emit(tx, { kind: 'merchant', businessCode }, 'simple_qr.canceled', toQrEventView(config, found, now), now);
  tx.notifyAfterCommit(QR_CHANGED_CHANNEL, found.qr.id); // the id as stored: the path's may differ in case
  return found;
}

/** Records up to `limit` expired QRs as CANCELED ("expired") with their simple_qr.canceled events; returns how many. */
export async function sweepExpiredQrs(db: Database, config: Pick<Config, 'publicBaseUrl'>, now: Date, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const expired = await store.cancelExpiredQrs(tx, now, limit);
    if (expired.length === 0) return 0;
    const withPayments = await store.findQrsByIds(tx, expired.map((qr) => qr.id));
    for (const found of withPayments) {
      // A bank's QR past its expiry is cancelled at the bank at the next poll (§14.3).
      if (found.qr.rail_reference !== null) await requestRailCancel(tx, found.qr.rail, found.qr.rail_reference, now);
      await events.emit(tx, { kind: 'merchant', businessCode: found.qr.business_code }, 'simple_qr.canceled', toQrEventView(config, found, now), now);
      tx.notifyAfterCommit(QR_CHANGED_CHANNEL, found.qr.id);
    }
    return expired.length;
  });
}

// ---------------------------------------------------------------------------------------------------
// Payments

/** The amount a payment moves, by docs/api-reference.md#payment-rules: fixed amounts must match, editable ones default to the suggestion. */
export function resolvePaymentAmount(qr: QrRow, offeredCentavos: Centavos | null): Centavos {
  if (!qr.modify_amount) {
    if (offeredCentavos !== null && offeredCentavos !== qr.amount_centavos) {
      throw validationError([{ field: 'amount', code: 'invalid_value', message: `must equal the QR's fixed amount ${centavosToAmount(qr.amount_centavos!)}` }]);
    }
    return qr.amount_centavos!;
  }
  const amount = offeredCentavos ?? qr.amount_centavos;
  if (amount === null) throw validationError([{ field: 'amount', code: 'required', message: 'is required: this QR has no suggested amount' }]);
  if (qr.min_amount_centavos !== null && amount < qr.min_amount_centavos) {
    throw validationError([{ field: 'amount', code: 'too_small', message: `must be at least ${formatCentavos(qr.min_amount_centavos)} for this QR` }]);
  }
  if (qr.max_amount_centavos !== null && amount > qr.max_amount_centavos) {
    throw validationError([{ field: 'amount', code: 'too_large', message: `must be at most ${formatCentavos(qr.max_amount_centavos)} for this QR` }]);
  }
  return amount;
}

export interface ReceivedPayment {
  found: QrWithLastPayment;
  payment: PaymentRow;
}

/** A payment recorded for a QR that could no longer take it: its caller refunds it in the same transaction. */
export interface LatePayment {
  qr: QrRow;
  payment: PaymentRow;
}

/**
 * Records a payment reported by any rail, in its own transaction: the QR claim (a guarded update: a
 * single-use QR is paid exactly once, whatever the concurrency), the ledger credit and movement, the
 * payment row, its events and the purpose's handler. Refusals (409 QR_NOT_PAYABLE, 422 amount) move nothing.
 */
export async function receivePayment(
  context: Pick<AppContext, 'db' | 'config' | 'purposes'>,
  notice: PaymentNotice,
  now: Date,
): Promise<ReceivedPayment> {
  return context.db.transaction(async (tx) => {
    const received = await receivePaymentIn(tx, context, notice, now, { whenNotPayable: 'refuse' });
    if ('late' in received) throw new Error('a refused payment was recorded late');
    return received;
  });
}

/**
 * `receivePayment` inside the caller's transaction. With `whenNotPayable: 'record'` — money a payer's bank
 * has already sent, which the payer must get back — a QR that cannot take the payment (paid, canceled,
 * expired, its merchant suspended) does not refuse it: the payment is recorded as late, credited, and
 * returned for the caller to refund in full in the same transaction (docs/api-reference.md#late-payments).
 * A late payment is not the QR's payment: its counters, status and events do not change.
 */
export async function receivePaymentIn(
  tx: Transaction,
  { config, purposes }: Pick<AppContext, 'config' | 'purposes'>,
  notice: PaymentNotice,
  now: Date,
  { whenNotPayable }: { whenNotPayable: 'refuse' | 'record' },
): Promise<ReceivedPayment | (LatePayment & { late: true })> {
  const current = notice.businessCode === null
    ? await findQrById(tx, notice.qrId)
    : await getQrOfMerchant(tx, notice.businessCode, notice.qrId);
  if (!current) throw notFound('QR');
  const standing = await merchants.paymentStanding(tx, current.qr.business_code);
  let amountCentavos: Centavos;
  try {
    amountCentavos = resolvePaymentAmount(current.qr, notice.amountCentavos);
  } catch (error) {
    // Money a bank already moved (a notice with the bank's payment id) is never refused (§14.3): an amount
    // that breaks the QR's rules is recorded as a late payment and refunded in full; the QR's state does
    // not change because of it. The sandbox's late-payment helper keeps the rules (422).
    if (whenNotPayable !== 'record' || notice.railReference === null || notice.amountCentavos === null || !(error instanceof ApiError)) throw error;
    return { late: true, ...await recordLatePayment(tx, current.qr, notice, notice.amountCentavos, standing, now) };
  }
  if (whenNotPayable === 'record' && notice.railReference !== null && current.qr.purpose !== null) {
    // A purpose's handler may refuse the payment (an onboarding link that expired between the payer's bank
    // taking the money and our learning of it). Money a bank moved is never refused: the payment is taken
    // under a savepoint, and a refusal becomes a late payment refunded in full instead.
    await tx.query('savepoint purpose_payment');
    try {
      const taken = await takePayment(tx, { config, purposes }, current, notice, amountCentavos, standing, now, whenNotPayable);
      await tx.query('release savepoint purpose_payment');
      return taken;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      await tx.query('rollback to savepoint purpose_payment');
      return { late: true, ...await recordLatePayment(tx, current.qr, notice, amountCentavos, standing, now) };
    }
  }
  return takePayment(tx, { config, purposes }, current, notice, amountCentavos, standing, now, whenNotPayable);
}

/** The QR claimed for a payment of `amountCentavos`, the credit, the payment row, its events and the purpose's handler. */
async function takePayment(
  tx: Transaction,
  { config, purposes }: Pick<AppContext, 'config' | 'purposes'>,
  current: QrWithLastPayment,
  notice: PaymentNotice,
  amountCentavos: Centavos,
  standing: merchants.PaymentStanding,
  now: Date,
  whenNotPayable: 'refuse' | 'record',
): Promise<ReceivedPayment | (LatePayment & { late: true })> {
  const paidAt = notice.paidAt ?? now;
  const claimed = standing.acceptsPayments ? await store.claimQrForPayment(tx, current.qr.id, amountCentavos, paidAt, now) : undefined;
  if (!claimed) {
    if (whenNotPayable === 'record') return { late: true, ...await recordLatePayment(tx, current.qr, notice, amountCentavos, standing, now) };
    const why = standing.acceptsPayments ? `it is ${effectiveState(current.qr, now).status}` : 'its merchant is suspended';
    throw new ApiError('QR_NOT_PAYABLE', { message: `QR ${current.qr.id} does not accept payments: ${why}.` });
  }
  // A multi-use bank QR that took its max_payments-th payment is full for us, not for the bank (it only knows
  // singleUse = false): cancel it there too, or every later payment would be late money to give back by hand.
  if (claimed.status === 'PAID' && claimed.is_multi_use && claimed.rail_reference !== null) {
    await requestRailCancel(tx, claimed.rail, claimed.rail_reference, now);
  }
  // The platform's own account collects activation fees: no fee is charged on them (docs/fees.md).
  const fee = standing.isPlatform ? centavos(0) : paymentFee(standing.plan, amountCentavos);
  const movement = await ledger.credit(tx, creditOf(claimed, notice, amountCentavos, fee, standing, now));
  let payment: PaymentRow;
  try {
    payment = await store.insertPaymentAsLast(tx, newPaymentOf(claimed, notice, amountCentavos, fee, movement.id, now));
  } catch (error) {
    // Unreachable while the guarded claim holds; the index is the database's second line (docs/architecture.md, rule 3).
    if (error instanceof store.SingleUseAlreadyPaidError) throw new ApiError('QR_NOT_PAYABLE');
    throw error;
  }
  const found: QrWithLastPayment = { qr: { ...claimed, last_payment_id: payment.id }, lastPayment: payment };
  const owner = { kind: 'merchant', businessCode: claimed.business_code } as const;
  const qrView = toQrEventView(config, found, now);
  await events.emit(tx, owner, 'simple_qr.payment_received', { qr: qrView, payment: toPaymentView(payment) }, now);
  if (claimed.status === 'PAID') await events.emit(tx, owner, 'simple_qr.paid', qrView, now);
  if (claimed.purpose !== null) await purposes.handlerOf(claimed.purpose)(tx, { qr: found.qr, payment, now });
  tx.notifyAfterCommit(QR_CHANGED_CHANNEL, claimed.id);
  return { found, payment };
}

/**
 * The late payment's row and credit. No `simple_qr.payment_received`: an integrator that marks an order
 * paid on that event must not ship an order whose money is going back; the refund's events tell it.
 */
async function recordLatePayment(
  tx: Transaction, qr: QrRow, notice: PaymentNotice, amountCentavos: Centavos, standing: merchants.PaymentStanding, now: Date,
): Promise<LatePayment> {
  // No fee on money that goes straight back to its payer (docs/fees.md).
  const movement = await ledger.credit(tx, creditOf(qr, notice, amountCentavos, centavos(0), standing, now));
  const payment = await store.insertLatePayment(tx, newPaymentOf(qr, notice, amountCentavos, centavos(0), movement.id, now));
  return { qr, payment };
}

function creditOf(
  qr: QrRow, notice: PaymentNotice, amountCentavos: Centavos, feeCentavos: Centavos, standing: merchants.PaymentStanding, now: Date,
): ledger.CreditRequest {
  return {
    kind: standing.isPlatform ? 'activation_fee' : 'payment',
    businessCode: qr.business_code,
    amountCentavos,
    feeCentavos,
    reference: qr.description,
    snapshot: {
      details: { source_bank: notice.payer.sourceBank, account_number: notice.payer.accountNumber.masked, account_titular: notice.payer.accountTitular },
      qr_id: qr.id,
      ...(qr.external_reference === null ? {} : { external_reference: qr.external_reference }),
    },
    now,
  };
}

function newPaymentOf(qr: QrRow, notice: PaymentNotice, amountCentavos: Centavos, feeCentavos: Centavos, movementId: number, now: Date): store.NewPayment {
  return {
    qrId: qr.id,
    businessCode: qr.business_code,
    singleUse: !qr.is_multi_use,
    amountCentavos,
    feeCentavos,
    sourceBank: notice.payer.sourceBank,
    accountNumber: notice.payer.accountNumber,
    accountTitular: notice.payer.accountTitular,
    movementId,
    rail: notice.rail,
    railReference: notice.railReference,
    paidAt: notice.paidAt ?? now,
  };
}

// ---------------------------------------------------------------------------------------------------
// A bank's QRs and payments (the bank capability reads them through these)

/** The QR a bank knows by `railReference` (its qrId), if it is ours. */
export async function findQrByRailReference(db: Queryable, rail: RailName, railReference: string): Promise<QrRow | undefined> {
  return store.findQrByRailReference(db, rail, railReference);
}

/** Whether the bank's payment `railReference` is recorded already (a read before the guarded insert). */
export async function isRailPaymentRecorded(db: Queryable, rail: RailName, railReference: string): Promise<boolean> {
  return store.isRailPaymentRecorded(db, rail, railReference);
}

/** When the rail issued its first bank QR, or null before it issued any (where the daily sweep starts). */
export async function firstRailQrCreatedAt(db: Queryable, rail: RailName): Promise<Date | null> {
  return store.firstRailQrCreatedAt(db, rail);
}

export type { RailQrToPoll } from './store.ts';
export { RailPaymentRecordedError } from './store.ts';

/**
 * Leases up to `limit` bank QRs due for a status read: ACTIVE ones, and those closed in the last 10 minutes
 * (a payment the bank took just before the close), each read at most once per `intervalMs` (SKIP LOCKED:
 * workers never take the same one). One statement, no transaction left open: the bank is called after it.
 */
export async function leaseRailQrsToPoll(db: Queryable, rail: RailName, now: Date, intervalMs: number, limit: number): Promise<store.RailQrToPoll[]> {
  return store.leaseRailQrsToPoll(db, rail, now, intervalMs, RECENTLY_CLOSED_MS, limit);
}

/** How long after its close a bank QR is still read (§14.3). */
export const RECENTLY_CLOSED_MS = 10 * 60_000;

// ---------------------------------------------------------------------------------------------------
// Refunds (the refunds module changes a payment only through these, in its own transaction)

/**
 * A merchant's payment, locked so its refunds go one at a time, with its QR's external_reference (which
 * the refund's movement carries too); 404 for an unknown or foreign one.
 */
export async function lockPaymentForRefund(tx: Transaction, businessCode: number, paymentId: number): Promise<{ payment: PaymentRow; externalReference: string | null }> {
  const found = await store.findPaymentForUpdate(tx, businessCode, paymentId);
  if (!found) throw notFound('payment');
  return found;
}

/** Counts `deltaCentavos` more (or, negative, less) as refunded; 409 REFUND_EXCEEDS_PAYMENT past the amount. */
export async function addRefunded(tx: Transaction, paymentId: number, deltaCentavos: number): Promise<PaymentRow> {
  const payment = await store.addRefunded(tx, paymentId, deltaCentavos);
  if (!payment) throw new ApiError('REFUND_EXCEEDS_PAYMENT');
  return payment;
}
