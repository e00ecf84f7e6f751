// SQL of simple QRs and their payments. Transitions are guarded updates (docs/architecture.md, habit 4); expiry is
// applied at the time passed in ($now), never the database's own clock.
import type { RailName } from '../rails/names.ts';
import { databaseErrorOf, SqlState, type Queryable } from '../db/database.ts';
import { FullAccountNumber, payerAccountNumberOf, revealAccountNumber, type PayerAccountNumber } from '../masking.ts';
import { centavos, type Centavos } from '../money.ts';

export type QrStatus = 'ACTIVE' | 'PAID' | 'CANCELED';
export type CancelReason = 'merchant' | 'expired';

export interface QrRow {
  id: string;
  business_code: number;
  pay_token: string;
  status: QrStatus;
  amount_centavos: Centavos | null;
  currency: string;
  modify_amount: boolean;
  is_multi_use: boolean;
  description: string | null;
  qr_expiration: string | null;
  expires_at: Date | null;
  purpose: string | null;
  /** null: a bank's image that could not be decoded. */
  qr_payload: string | null;
  qr_image: string;
  payments_count: number;
  amount_collected_centavos: Centavos;
  external_reference: string | null;
  min_amount_centavos: Centavos | null;
  max_amount_centavos: Centavos | null;
  max_payments: number | null;
  last_payment_id: number | null;
  paid_at: Date | null;
  canceled_at: Date | null;
  cancel_reason: CancelReason | null;
  /** The rail the QR was issued on, and the bank's id of it (null on the sandbox). */
  rail: RailName;
  rail_reference: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentRow {
  id: number;
  qr_id: string;
  business_code: number;
  amount_centavos: Centavos;
  currency: string;
  status: 'COMPLETED';
  source_bank: string;
  /** The payer's full account number (shows itself masked), or the text a bank sent already masked. */
  account_number: PayerAccountNumber;
  account_titular: string;
  movement_id: number;
  paid_at: Date;
  /** The fee charged on it (docs/fees.md): none on a late payment or an activation fee. */
  fee_centavos: Centavos;
  amount_refunded_centavos: Centavos;
  /** Money that arrived for a QR that could no longer take it (refunded in full when it was recorded). */
  late: boolean;
  /** The rail the payment came through, and the bank's transaction id (null on the sandbox): recorded once. */
  rail: RailName;
  rail_reference: string | null;
}

/** A QR with its latest payment (null before the first), as every read returns it. */
export interface QrWithLastPayment {
  qr: QrRow;
  lastPayment: PaymentRow | null;
}

const QR_COLUMNS = `id, business_code, pay_token, status, amount_centavos, currency, modify_amount, is_multi_use,
  description, qr_expiration, expires_at, purpose, qr_payload, qr_image, payments_count, amount_collected_centavos,
  external_reference, min_amount_centavos, max_amount_centavos, max_payments,
  last_payment_id, paid_at, canceled_at, cancel_reason, rail, rail_reference, created_at, updated_at`;
const PAYMENT_COLUMNS = 'id, qr_id, business_code, amount_centavos, currency, status, source_bank, account_number, account_titular, movement_id, paid_at, fee_centavos, amount_refunded_centavos, late, rail, rail_reference';

/** QR columns prefixed `q.` and the last payment's columns as `p_…`, for the joined reads. */
const JOINED_COLUMNS = [
  ...QR_COLUMNS.split(',').map((c) => `q.${c.trim()}`),
  ...PAYMENT_COLUMNS.split(',').map((c) => `p.${c.trim()} as p_${c.trim()}`),
].join(', ');

/** "Not yet expired at $now" for the QR aliased `q`; `$n` is the parameter holding now. */
const notExpired = (nowParam: string) => `(q.expires_at is null or q.expires_at > ${nowParam}::timestamptz)`;

/** The status filters of the list, by effective status (docs/api-reference.md#qr-statuses-and-expiry). */
const STATUS_FILTERS: Record<QrStatus, (nowParam: string) => string> = {
  ACTIVE: (now) => `q.status = 'ACTIVE' and ${notExpired(now)}`,
  PAID: (now) => `q.status = 'PAID' and ${now}::timestamptz is not null`, // every filter uses $now, so its type is known
  CANCELED: (now) => `(q.status = 'CANCELED' or (q.status = 'ACTIVE' and not ${notExpired(now)}))`,
};

export interface NewQr {
  id: string;
  businessCode: number;
  payToken: string;
  amountCentavos: Centavos | null;
  modifyAmount: boolean;
  isMultiUse: boolean;
  description: string | null;
  qrExpiration: string | null;
  expiresAt: Date | null;
  purpose: string | null;
  qrPayload: string | null;
  qrImage: string;
  externalReference: string | null;
  minAmountCentavos: Centavos | null;
  maxAmountCentavos: Centavos | null;
  maxPayments: number | null;
  rail: RailName;
  railReference: string | null;
}

export class PayTokenTakenError extends Error {}

/**
 * Inserts a new QR and returns its row as written: the caller's values, the starting values as constants,
 * the payment columns left null. The row is built here rather than read back: `returning` the ~2 KB row
 * (image included) made the main thread parse it on every create.
 */
export async function insertQr(tx: Queryable, qr: NewQr, now: Date): Promise<QrRow> {
  const row: QrRow = {
    id: qr.id,
    business_code: qr.businessCode,
    pay_token: qr.payToken,
    status: 'ACTIVE',
    amount_centavos: qr.amountCentavos,
    currency: 'BOB',
    modify_amount: qr.modifyAmount,
    is_multi_use: qr.isMultiUse,
    description: qr.description,
    qr_expiration: qr.qrExpiration,
    expires_at: qr.expiresAt,
    purpose: qr.purpose,
    qr_payload: qr.qrPayload,
    qr_image: qr.qrImage,
    payments_count: 0,
    amount_collected_centavos: centavos(0),
    external_reference: qr.externalReference,
    min_amount_centavos: qr.minAmountCentavos,
    max_amount_centavos: qr.maxAmountCentavos,
    max_payments: qr.maxPayments,
    last_payment_id: null,
    paid_at: null,
    canceled_at: null,
    cancel_reason: null,
    rail: qr.rail,
    rail_reference: qr.railReference,
    created_at: now,
    updated_at: now,
  };
  try {
    // What a new QR starts with (ACTIVE, BOB, no payments) is written as constants; only what the caller
    // chose is a parameter. The columns left out (last payment, paid, canceled) start null.
    await tx.query(
      `insert into simple_qrs (id, business_code, pay_token, amount_centavos, modify_amount, is_multi_use, description,
         qr_expiration, expires_at, purpose, qr_payload, qr_image, created_at, updated_at,
         external_reference, min_amount_centavos, max_amount_centavos, max_payments,
         status, currency, payments_count, amount_collected_centavos, rail, rail_reference)
       values ($1::uuid, $2::bigint, $3::text, $4::bigint, $5::boolean, $6::boolean, $7::text,
         $8::text, $9::timestamptz, $10::text, $11::text, $12::text, $13::timestamptz, $13::timestamptz,
         $14::text, $15::bigint, $16::bigint, $17::integer,
         'ACTIVE', 'BOB', 0, 0, $18::text, $19::text)`,
      [row.id, row.business_code, row.pay_token, row.amount_centavos, row.modify_amount, row.is_multi_use, row.description,
        row.qr_expiration, row.expires_at, row.purpose, row.qr_payload, row.qr_image, now,
        row.external_reference, row.min_amount_centavos, row.max_amount_centavos, row.max_payments, row.rail, row.rail_reference],
    );
    return row;
  } catch (error) {
    // 128 random bits make this practically impossible; the mapping keeps it a clear error, not a 500 mystery.
    if (databaseErrorOf(error)?.code === SqlState.UNIQUE_VIOLATION && databaseErrorOf(error)?.constraint === 'simple_qrs_pay_token_unique') {
      throw new PayTokenTakenError('pay token collision');
    }
    throw error;
  }
}

function splitJoined(row: Record<string, unknown>): QrWithLastPayment {
  const qr: Record<string, unknown> = {};
  const payment: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith('p_')) payment[key.slice(2)] = value;
    else qr[key] = value;
  }
  return { qr: qr as unknown as QrRow, lastPayment: payment.id === null || payment.id === undefined ? null : fromStoredPayment(payment as unknown as StoredPayment) };
}

/** A payment as the database returns it: the account number still plain text. */
type StoredPayment = Omit<PaymentRow, 'account_number'> & { account_number: string };

function fromStoredPayment(row: StoredPayment): PaymentRow {
  return { ...row, account_number: payerAccountNumberOf(row.account_number) };
}

export async function findQrOfMerchant(tx: Queryable, businessCode: number, qrId: string): Promise<QrWithLastPayment | undefined> {
  const { rows } = await tx.query(
    `select ${JOINED_COLUMNS} from simple_qrs q left join qr_payments p on p.id = q.last_payment_id
      where q.id = $1::uuid and q.business_code = $2::bigint`,
    [qrId, businessCode],
  );
  return rows[0] ? splitJoined(rows[0]) : undefined;
}

export async function findQrById(tx: Queryable, qrId: string): Promise<QrWithLastPayment | undefined> {
  const { rows } = await tx.query(
    `select ${JOINED_COLUMNS} from simple_qrs q left join qr_payments p on p.id = q.last_payment_id where q.id = $1::uuid`,
    [qrId],
  );
  return rows[0] ? splitJoined(rows[0]) : undefined;
}

export async function findQrByPayToken(tx: Queryable, payToken: string): Promise<QrWithLastPayment | undefined> {
  const { rows } = await tx.query(
    `select ${JOINED_COLUMNS} from simple_qrs q left join qr_payments p on p.id = q.last_payment_id where q.pay_token = $1::text`,
    [payToken],
  );
  return rows[0] ? splitJoined(rows[0]) : undefined;
}

/** Which QRs a list shows: by effective status and by the merchant's own order id. */
export interface QrFilter {
  status: QrStatus | null;
  externalReference: string | null;
}

function filterSql({ status, externalReference }: QrFilter): string {
  return (status ? `and ${STATUS_FILTERS[status]('$2')}` : 'and $2::timestamptz is not null')
    // $3 is always referenced so its type is known; spelled out, so the planner sees which index matches.
    + (externalReference === null ? ' and $3::text is null' : ' and q.external_reference = $3::text');
}

export async function countQrsOfMerchant(tx: Queryable, businessCode: number, filter: QrFilter, now: Date): Promise<number> {
  const { rows } = await tx.query<{ total: number }>(
    `select count(*)::int8 as total from simple_qrs q where q.business_code = $1::bigint ${filterSql(filter)}`,
    [businessCode, now, filter.externalReference],
  );
  return rows[0]!.total;
}

export async function listQrsOfMerchant(
  tx: Queryable,
  businessCode: number,
  filter: QrFilter,
  now: Date,
  page: { limit: number; offset: number },
): Promise<QrWithLastPayment[]> {
  const { rows } = await tx.query(
    `select ${JOINED_COLUMNS} from simple_qrs q left join qr_payments p on p.id = q.last_payment_id
      where q.business_code = $1::bigint ${filterSql(filter)}
      order by q.created_at desc, q.id desc limit $4::int offset $5::int`,
    [businessCode, now, filter.externalReference, page.limit, page.offset],
  );
  return rows.map(splitJoined);
}

/**
 * Takes a payment of `amountCentavos` on a QR that is payable at `now`: ACTIVE and not expired. A
 * single-use QR — or a multi-use one taking its `max_payments`-th payment — becomes PAID in the same
 * statement, so of two concurrent payers the second finds no ACTIVE row (the row lock makes it wait,
 * then re-check): undefined means "not payable".
 */
/**
 * Counts a payment on an ACTIVE QR that had not expired when the payer paid (`paidAt`; a bank reports it,
 * perhaps after the expiry), and makes it PAID when it is full; `now` is when the service records it.
 */
export async function claimQrForPayment(tx: Queryable, qrId: string, amountCentavos: Centavos, paidAt: Date, now: Date): Promise<QrRow | undefined> {
  const { rows } = await tx.query<QrRow>(
    `update simple_qrs q
        set payments_count = q.payments_count + 1,
            amount_collected_centavos = q.amount_collected_centavos + $2::bigint,
            status = case when q.is_multi_use and (q.max_payments is null or q.payments_count + 1 < q.max_payments) then 'ACTIVE' else 'PAID' end,
            paid_at = case when q.is_multi_use and (q.max_payments is null or q.payments_count + 1 < q.max_payments) then q.paid_at else $3::timestamptz end,
            updated_at = $4::timestamptz
      where q.id = $1::uuid and q.status = 'ACTIVE' and ${notExpired('$3')}
      returning ${QR_COLUMNS}`,
    [qrId, amountCentavos, paidAt, now],
  );
  return rows[0];
}

export interface NewPayment {
  qrId: string;
  businessCode: number;
  singleUse: boolean;
  amountCentavos: Centavos;
  sourceBank: string;
  accountNumber: PayerAccountNumber;
  accountTitular: string;
  movementId: number;
  feeCentavos: Centavos;
  rail: RailName;
  /** The bank's transaction id: a second payment with the same one is refused (RailPaymentRecordedError). */
  railReference: string | null;
  /** When the payer paid (the bank's time, or now on the sandbox). */
  paidAt: Date;
}

export class SingleUseAlreadyPaidError extends Error {}

/** The rail's payment with this transaction id is recorded already (callback, poll and sweep raced). */
export class RailPaymentRecordedError extends Error {}

/** Inserts the payment and points the QR's last_payment_id at it, in one statement. */
export async function insertPaymentAsLast(tx: Queryable, payment: NewPayment): Promise<PaymentRow> {
  try {
    const { rows } = await tx.query<StoredPayment>(
      `with inserted as (
         insert into qr_payments (qr_id, business_code, single_use, amount_centavos, source_bank, account_number, account_titular, movement_id, paid_at, rail, rail_reference, fee_centavos)
         values ($1::uuid, $2::bigint, $3::boolean, $4::bigint, $5::text, $6::text, $7::text, $8::bigint, $9::timestamptz, $10::text, $11::text, $12::bigint)
         returning ${PAYMENT_COLUMNS}
       ), pointed as (
         update simple_qrs set last_payment_id = (select id from inserted) where id = $1::uuid
       )
       select ${PAYMENT_COLUMNS} from inserted`,
      [payment.qrId, payment.businessCode, payment.singleUse, payment.amountCentavos, payment.sourceBank,
        storedAccountText(payment.accountNumber), payment.accountTitular, payment.movementId, payment.paidAt, payment.rail, payment.railReference,
        payment.feeCentavos],
    );
    return fromStoredPayment(rows[0]!);
  } catch (error) {
    if (databaseErrorOf(error)?.constraint === 'qr_payments_single_use_once') throw new SingleUseAlreadyPaidError('single-use QR already paid');
    if (databaseErrorOf(error)?.constraint === 'qr_payments_rail_reference_unique') throw new RailPaymentRecordedError('rail payment recorded already');
    throw error;
  }
}

/** Inserts a late payment: a row of the QR's payments that is not its last payment and does not count as paid (and carries no fee). */
export async function insertLatePayment(tx: Queryable, payment: NewPayment): Promise<PaymentRow> {
  const { rows } = await tx.query<StoredPayment>(
    `insert into qr_payments (qr_id, business_code, single_use, late, amount_centavos, source_bank, account_number, account_titular, movement_id, paid_at, rail, rail_reference)
     values ($1::uuid, $2::bigint, $3::boolean, true, $4::bigint, $5::text, $6::text, $7::text, $8::bigint, $9::timestamptz, $10::text, $11::text)
     returning ${PAYMENT_COLUMNS}`,
    [payment.qrId, payment.businessCode, payment.singleUse, payment.amountCentavos, payment.sourceBank,
      storedAccountText(payment.accountNumber), payment.accountTitular, payment.movementId, payment.paidAt, payment.rail, payment.railReference],
  ).catch((error: unknown) => {
    if (databaseErrorOf(error)?.constraint === 'qr_payments_rail_reference_unique') throw new RailPaymentRecordedError('rail payment recorded already');
    throw error;
  });
  return fromStoredPayment(rows[0]!);
}

export async function countPaymentsOfQr(tx: Queryable, qrId: string): Promise<number> {
  const { rows } = await tx.query<{ total: number }>('select count(*)::int8 as total from qr_payments where qr_id = $1::uuid', [qrId]);
  return rows[0]!.total;
}

export async function listPaymentsOfQr(tx: Queryable, qrId: string, page: { limit: number; offset: number }): Promise<PaymentRow[]> {
  const { rows } = await tx.query<StoredPayment>(
    `select ${PAYMENT_COLUMNS} from qr_payments where qr_id = $1::uuid order by id desc limit $2::int offset $3::int`,
    [qrId, page.limit, page.offset],
  );
  return rows.map(fromStoredPayment);
}

/** Movement id → payment id of the merchant's payments recorded by `movementIds` (index qr_payments_by_movement). */
export async function findPaymentIdsByMovement(tx: Queryable, businessCode: number, movementIds: readonly number[]): Promise<Map<number, number>> {
  const { rows } = await tx.query<{ id: number; movement_id: number }>(
    'select id, movement_id from qr_payments where business_code = $1::bigint and movement_id = any($2::bigint[])',
    [businessCode, movementIds],
  );
  return new Map(rows.map((row) => [Number(row.movement_id), Number(row.id)]));
}

/** A merchant's payment by its id; undefined for an unknown one or another merchant's. */
export async function findPaymentOfMerchant(tx: Queryable, businessCode: number, paymentId: number): Promise<PaymentRow | undefined> {
  const { rows } = await tx.query<StoredPayment>(
    `select ${PAYMENT_COLUMNS} from qr_payments where id = $1::bigint and business_code = $2::bigint`,
    [paymentId, businessCode],
  );
  return rows[0] && fromStoredPayment(rows[0]);
}

export async function countPaymentsOfMerchant(tx: Queryable, businessCode: number): Promise<number> {
  const { rows } = await tx.query<{ total: number }>('select count(*)::int8 as total from qr_payments where business_code = $1::bigint', [businessCode]);
  return rows[0]!.total;
}

/** A merchant's payments, newest recorded first (index qr_payments_by_merchant). */
export async function listPaymentsOfMerchant(tx: Queryable, businessCode: number, page: { limit: number; offset: number }): Promise<PaymentRow[]> {
  const { rows } = await tx.query<StoredPayment>(
    `select ${PAYMENT_COLUMNS} from qr_payments where business_code = $1::bigint order by id desc limit $2::int offset $3::int`,
    [businessCode, page.limit, page.offset],
  );
  return rows.map(fromStoredPayment);
}

/** The merchant's cancel: only a QR that is ACTIVE and not expired at `now`. */
export async function cancelQrByMerchant(tx: Queryable, businessCode: number, qrId: string, now: Date): Promise<QrRow | undefined> {
  const { rows } = await tx.query<QrRow>(
    `update simple_qrs q
        set status = 'CANCELED', canceled_at = $3::timestamptz, cancel_reason = 'merchant', updated_at = $3::timestamptz
      where q.id = $1::uuid and q.business_code = $2::bigint and q.status = 'ACTIVE' and ${notExpired('$3')}
      returning ${QR_COLUMNS}`,
    [qrId, businessCode, now],
  );
  return rows[0];
}

/**
 * Records up to `limit` QRs that expired by `now` as CANCELED ("expired"), skipping rows another
 * sweeper or a payment holds. canceled_at and updated_at are the expiry instant, which is what reads
 * showed before the sweep, so neither the body nor the ETag changes when it runs.
 */
export async function cancelExpiredQrs(tx: Queryable, now: Date, limit: number): Promise<QrRow[]> {
  const { rows } = await tx.query<QrRow>(
    `with due as (
       select id from simple_qrs
        where status = 'ACTIVE' and expires_at is not null and expires_at <= $1::timestamptz
        order by expires_at limit $2::int
        for update skip locked
     )
     update simple_qrs q
        set status = 'CANCELED', canceled_at = q.expires_at, cancel_reason = 'expired', updated_at = q.expires_at
       from due where q.id = due.id
     returning ${QR_COLUMNS.split(',').map((c) => `q.${c.trim()}`).join(', ')}`,
    [now, limit],
  );
  return rows;
}

/** Recorded status and version fields of some QRs, for the long-poll waiters' re-check. */
export async function findQrsByIds(tx: Queryable, qrIds: string[]): Promise<QrWithLastPayment[]> {
  const { rows } = await tx.query(
    `select ${JOINED_COLUMNS} from simple_qrs q left join qr_payments p on p.id = q.last_payment_id where q.id = any($1::uuid[])`,
    [qrIds],
  );
  return rows.map(splitJoined);
}

/** A merchant's payment, locked until the transaction ends: refunds of one payment go one at a time. */
export async function findPaymentForUpdate(
  tx: Queryable, businessCode: number, paymentId: number,
): Promise<{ payment: PaymentRow; externalReference: string | null } | undefined> {
  const { rows } = await tx.query<StoredPayment & { qr_external_reference: string | null }>(
    `select ${PAYMENT_COLUMNS.split(',').map((c) => `p.${c.trim()}`).join(', ')}, q.external_reference as qr_external_reference
       from qr_payments p join simple_qrs q on q.id = p.qr_id
      where p.id = $1::bigint and p.business_code = $2::bigint for update of p`,
    [paymentId, businessCode],
  );
  if (!rows[0]) return undefined;
  const { qr_external_reference: externalReference, ...payment } = rows[0];
  return { payment: fromStoredPayment(payment), externalReference };
}

/** Binds a payment to the receipt key of the browser that made it (docs/qr.md#receipts): once, never rebound. */
export async function bindReceiptKey(tx: Queryable, paymentId: number, receiptKeyHash: string): Promise<void> {
  await tx.query('update qr_payments set receipt_key_hash = $2::text where id = $1::bigint and receipt_key_hash is null', [paymentId, receiptKeyHash]);
}

/** The payment of QR `qrId` bound to a receipt key, if any. */
export async function findPaymentByReceiptKey(tx: Queryable, qrId: string, receiptKeyHash: string): Promise<PaymentRow | undefined> {
  const { rows } = await tx.query<StoredPayment>(
    `select ${PAYMENT_COLUMNS} from qr_payments where receipt_key_hash = $2::text and qr_id = $1::uuid`,
    [qrId, receiptKeyHash],
  );
  return rows[0] && fromStoredPayment(rows[0]);
}

/**
 * Adds `deltaCentavos` (negative when a refund failed) to what is refunded of a payment, only while the
 * result stays within the payment's amount; undefined otherwise. The CHECK
 * qr_payments_refunds_within_amount stands behind the condition.
 */
export async function addRefunded(tx: Queryable, paymentId: number, deltaCentavos: number): Promise<PaymentRow | undefined> {
  const { rows } = await tx.query<StoredPayment>(
    `update qr_payments set amount_refunded_centavos = amount_refunded_centavos + $2::bigint
      where id = $1::bigint and amount_refunded_centavos + $2::bigint between 0 and amount_centavos
      returning ${PAYMENT_COLUMNS}`,
    [paymentId, deltaCentavos],
  );
  return rows[0] && fromStoredPayment(rows[0]);
}

/** What the payer's account column holds: the full number, or a bank's masked text as the bank gave it. */
function storedAccountText(accountNumber: PayerAccountNumber): string {
  return accountNumber instanceof FullAccountNumber ? revealAccountNumber(accountNumber) : accountNumber.masked;
}

export async function findQrByRailReference(tx: Queryable, rail: RailName, railReference: string): Promise<QrRow | undefined> {
  const { rows } = await tx.query<QrRow>(`select ${QR_COLUMNS} from simple_qrs where rail = $1::text and rail_reference = $2::text`, [rail, railReference]);
  return rows[0];
}

export async function isRailPaymentRecorded(tx: Queryable, rail: RailName, railReference: string): Promise<boolean> {
  const { rows } = await tx.query('select 1 from qr_payments where rail = $1::text and rail_reference = $2::text', [rail, railReference]);
  return rows.length > 0;
}

/**
 * The creation time of the rail's oldest bank QR, or null. No index serves it (each bank QR is read): the
 * daily sweep asks only when a day of its window is not swept yet, and keeps the answer once there is one.
 */
export async function firstRailQrCreatedAt(tx: Queryable, rail: RailName): Promise<Date | null> {
  const { rows } = await tx.query<{ first: Date | null }>(
    'select min(created_at) as first from simple_qrs where rail = $1::text and rail_reference is not null',
    [rail],
  );
  return rows[0]?.first ?? null;
}

/** A bank QR leased for a status read. */
export interface RailQrToPoll {
  id: string;
  rail_reference: string;
  status: QrStatus;
  expires_at: Date | null;
}

/** Leases bank QRs due for a status read by setting rail_checked_at (migration 017), in one statement. */
export async function leaseRailQrsToPoll(tx: Queryable, rail: RailName, now: Date, intervalMs: number, recentlyClosedMs: number, limit: number): Promise<RailQrToPoll[]> {
  const { rows } = await tx.query<RailQrToPoll>(
    `update simple_qrs set rail_checked_at = $2::timestamptz
      where id in (
        select id from simple_qrs
         where rail = $1::text and rail_reference is not null and status = 'ACTIVE'
           and (rail_checked_at is null or rail_checked_at <= $2::timestamptz - make_interval(secs => $3::double precision / 1000))
         order by rail_checked_at nulls first
         limit $5::integer
         for update skip locked)
        or id in (
        select id from simple_qrs
         where rail = $1::text and rail_reference is not null and status <> 'ACTIVE'
           and coalesce(canceled_at, paid_at) > $2::timestamptz - make_interval(secs => $4::double precision / 1000)
           and (rail_checked_at is null or rail_checked_at <= $2::timestamptz - make_interval(secs => $3::double precision / 1000))
         limit $5::integer
         for update skip locked)
     returning id, rail_reference, status, expires_at`,
    [rail, now, intervalMs, recentlyClosedMs, limit],
  );
  return rows;
}
