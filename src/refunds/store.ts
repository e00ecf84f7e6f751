// SQL of refunds. Every lifecycle step is one guarded UPDATE named after the transition (docs/architecture.md,
// habit 4): it changes the row only from PENDING and returns nothing otherwise. Reads join the payment for
// the payer a refund goes back to, so the payer's full account number is kept in one place only.
import type { Queryable } from '../db/database.ts';
import { payerAccountNumberOf, type PayerAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';
import type { RailFailureCode } from '../rails/failures.ts';
import type { RefundReason, RefundStatus } from './schemas.ts';

export interface RefundRow {
  id: string;
  business_code: number;
  payment_id: number;
  qr_id: string;
  movement_id: number;
  amount_centavos: Centavos;
  status: RefundStatus;
  reason: RefundReason;
  description: string | null;
  failure_code: RailFailureCode | null;
  rail_reference: string | null;
  /** What the operator said when they resolved it (POST /admin/v1/refunds/{id}/resolve); null otherwise. */
  resolution_note: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  /** The payer of the payment, whom the refund pays back. */
  source_bank: string;
  account_number: PayerAccountNumber;
  account_titular: string;
}

type StoredRefund = Omit<RefundRow, 'account_number'> & { account_number: string };

function fromStored(row: StoredRefund): RefundRow {
  return { ...row, account_number: payerAccountNumberOf(row.account_number) };
}

const REFUND_COLUMNS = `r.id, r.business_code, r.payment_id, r.qr_id, r.movement_id, r.amount_centavos, r.status, r.reason,
  r.description, r.failure_code, r.rail_reference, r.resolution_note, r.created_at, r.updated_at, r.completed_at,
  p.source_bank, p.account_number, p.account_titular`;

export interface NewRefund {
  id: string;
  businessCode: number;
  paymentId: number;
  qrId: string;
  movementId: number;
  amountCentavos: Centavos;
  reason: RefundReason;
  description: string | null;
  now: Date;
}

export async function insertRefund(tx: Queryable, refund: NewRefund): Promise<RefundRow> {
  const row = await writeAndRead(tx,
    `insert into refunds (id, business_code, payment_id, qr_id, movement_id, amount_centavos, status, reason, description, created_at, updated_at)
     values ($1::text, $2::bigint, $3::bigint, $4::uuid, $5::bigint, $6::bigint, 'PENDING', $7::text, $8::text, $9::timestamptz, $9::timestamptz)`,
    [refund.id, refund.businessCode, refund.paymentId, refund.qrId, refund.movementId, refund.amountCentavos, refund.reason,
      refund.description, refund.now]);
  return row!;
}

/** Runs one write of refunds (`… returning *` is added) and reads the written row back with its payer. */
async function writeAndRead(tx: Queryable, write: string, params: readonly unknown[]): Promise<RefundRow | undefined> {
  const { rows } = await tx.query<StoredRefund>(
    `with r as (${write} returning *) select ${REFUND_COLUMNS} from r join qr_payments p on p.id = r.payment_id`,
    params,
  );
  return rows[0] && fromStored(rows[0]);
}

export async function findRefund(tx: Queryable, businessCode: number, id: string): Promise<RefundRow | undefined> {
  const { rows } = await tx.query<StoredRefund>(
    `select ${REFUND_COLUMNS} from refunds r join qr_payments p on p.id = r.payment_id
      where r.id = $1::text and r.business_code = $2::bigint`,
    [id, businessCode],
  );
  return rows[0] && fromStored(rows[0]);
}

/** Reads a refund and locks it until the transaction ends (the advance helper decides from what it reads). */
/** Any merchant's refund, locked: the operator resolves refunds across merchants. */
export async function findAnyRefundForUpdate(tx: Queryable, id: string): Promise<RefundRow | undefined> {
  const { rows } = await tx.query<StoredRefund>(
    `select ${REFUND_COLUMNS} from refunds r join qr_payments p on p.id = r.payment_id where r.id = $1::text for update of r`,
    [id],
  );
  return rows[0] && fromStored(rows[0]);
}

/** Keeps the operator's note on a refund still PENDING (the caller holds its row lock). */
export async function noteResolution(tx: Queryable, id: string, note: string): Promise<void> {
  await tx.query(`update refunds set resolution_note = $2::text where id = $1::text and status = 'PENDING'`, [id, note]);
}

export async function findRefundForUpdate(tx: Queryable, businessCode: number, id: string): Promise<RefundRow | undefined> {
  const { rows } = await tx.query<StoredRefund>(
    `select ${REFUND_COLUMNS} from refunds r join qr_payments p on p.id = r.payment_id
      where r.id = $1::text and r.business_code = $2::bigint for update of r`,
    [id, businessCode],
  );
  return rows[0] && fromStored(rows[0]);
}

export interface RefundFilter {
  businessCode: number;
  paymentId: number | null;
  status: RefundStatus | null;
}

export async function countRefunds(tx: Queryable, filter: RefundFilter): Promise<number> {
  const { rows } = await tx.query<{ total: number }>(
    `select count(*)::int8 as total from refunds
      where business_code = $1::bigint and ($2::bigint is null or payment_id = $2::bigint) and ($3::text is null or status = $3::text)`,
    [filter.businessCode, filter.paymentId, filter.status],
  );
  return rows[0]!.total;
}

/** One page of a merchant's refunds, newest first. */
export async function listRefunds(tx: Queryable, filter: RefundFilter, page: { limit: number; offset: number }): Promise<RefundRow[]> {
  const { rows } = await tx.query<StoredRefund>(
    `select ${REFUND_COLUMNS} from refunds r join qr_payments p on p.id = r.payment_id
      where r.business_code = $1::bigint and ($2::bigint is null or r.payment_id = $2::bigint) and ($3::text is null or r.status = $3::text)
      order by r.created_at desc, r.sequence desc
      limit $4::integer offset $5::integer`,
    [filter.businessCode, filter.paymentId, filter.status, page.limit, page.offset],
  );
  return rows.map(fromStored);
}

/** PENDING → COMPLETED: the rail paid the payer back. */
export async function markRefundCompleted(tx: Queryable, id: string, railReference: string | null, now: Date): Promise<RefundRow | undefined> {
  return writeAndRead(tx,
    `update refunds set status = 'COMPLETED', rail_reference = $2::text, completed_at = $3::timestamptz, updated_at = $3::timestamptz
      where id = $1::text and status = 'PENDING'`,
    [id, railReference, now]);
}

/** PENDING → FAILED with its reason: the rail could not pay the payer back. */
export async function markRefundFailed(
  tx: Queryable,
  id: string,
  failure: { failureCode: RailFailureCode; railReference: string | null },
  now: Date,
): Promise<RefundRow | undefined> {
  return writeAndRead(tx,
    `update refunds set status = 'FAILED', failure_code = $2::text, rail_reference = $3::text, updated_at = $4::timestamptz
      where id = $1::text and status = 'PENDING'`,
    [id, failure.failureCode, failure.railReference, now]);
}

/**
 * Claims one PENDING refund created before `pendingBefore`, locking it; SKIP LOCKED lets other workers
 * take others. The time comes from the caller's clock, never the database's now().
 */
export async function claimDueRefund(tx: Queryable, pendingBefore: Date): Promise<RefundRow | undefined> {
  const { rows } = await tx.query<StoredRefund>(
    `with due as (
       select id from refunds where status = 'PENDING' and updated_at <= $1::timestamptz
        order by updated_at, sequence limit 1
        for update skip locked
     )
     select ${REFUND_COLUMNS} from refunds r join due on due.id = r.id join qr_payments p on p.id = r.payment_id`,
    [pendingBefore],
  );
  return rows[0] && fromStored(rows[0]);
}
