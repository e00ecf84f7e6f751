// SQL of transfers. Every lifecycle step is one guarded UPDATE named after the transition (docs/architecture.md, habit 4):
// it changes the row only from the statuses the transition allows, and returns nothing otherwise.
import type { Queryable } from '../db/database.ts';
import type { FailureCode, TransferStatus } from './schemas.ts';
import { FullAccountNumber, revealAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';

export interface TransferRow {
  id: number;
  business_code: number;
  movement_id: number;
  status: TransferStatus;
  amount_centavos: Centavos;
  currency: 'BOB';
  reference: string | null;
  destination_type: 'bank_account';
  bank_code: number;
  /** The full account number: shows itself masked; only the rail opens it. */
  account_number: FullAccountNumber;
  account_titular: string;
  failure_code: FailureCode | null;
  /** The bank's reason for a failure (a rejection's description, a refused upload's message); null otherwise. */
  failure_message: string | null;
  rail_reference: string | null;
  /** The fee charged on it (docs/fees.md), given back with its amount if it fails or is canceled. */
  fee_centavos: Centavos;
  /** Who asked for it: the merchant (`api`) or its payout schedule (`schedule`). */
  origin: TransferOrigin;
  created_at: Date;
  updated_at: Date;
}

export type TransferOrigin = 'api' | 'schedule';

/** A row as the database returns it: the account number still plain text. */
type StoredTransfer = Omit<TransferRow, 'account_number'> & { account_number: string };

function fromStored(row: StoredTransfer): TransferRow {
  return { ...row, account_number: new FullAccountNumber(row.account_number) };
}

const TRANSFER_COLUMNS = `id, business_code, movement_id, status, amount_centavos, currency, reference, destination_type,
  bank_code, account_number, account_titular, failure_code, failure_message, rail_reference, fee_centavos, origin, created_at, updated_at`;

export interface NewTransfer {
  businessCode: number;
  movementId: number;
  amountCentavos: Centavos;
  reference: string | null;
  bankCode: number;
  accountNumber: FullAccountNumber;
  accountTitular: string;
  feeCentavos: Centavos;
  origin: TransferOrigin;
  now: Date;
}

/** Inserts PENDING transfers in one statement; ids follow the order given. */
export async function insertTransfers(tx: Queryable, transfers: readonly NewTransfer[]): Promise<TransferRow[]> {
  const { rows } = await tx.query<StoredTransfer>(
    `insert into transfers (business_code, movement_id, status, amount_centavos, reference, bank_code, account_number,
                            account_titular, fee_centavos, origin, created_at, updated_at)
     select business_code, movement_id, 'PENDING', amount_centavos, reference, bank_code, account_number, account_titular,
            fee_centavos, origin, at, at
       from unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::timestamptz[],
                   $9::bigint[], $10::text[])
         with ordinality as t(business_code, movement_id, amount_centavos, reference, bank_code, account_number, account_titular, at,
                              fee_centavos, origin, ord)
      order by ord
     returning ${TRANSFER_COLUMNS}`,
    [
      transfers.map((t) => t.businessCode), transfers.map((t) => t.movementId), transfers.map((t) => t.amountCentavos),
      transfers.map((t) => t.reference), transfers.map((t) => t.bankCode), transfers.map((t) => revealAccountNumber(t.accountNumber)),
      transfers.map((t) => t.accountTitular), transfers.map((t) => t.now.toISOString()),
      transfers.map((t) => t.feeCentavos), transfers.map((t) => t.origin),
    ],
  );
  return rows.map(fromStored);
}

export async function findTransfer(tx: Queryable, businessCode: number, id: number): Promise<TransferRow | undefined> {
  const { rows } = await tx.query<StoredTransfer>(
    `select ${TRANSFER_COLUMNS} from transfers where id = $1::bigint and business_code = $2::bigint`,
    [id, businessCode],
  );
  return rows[0] && fromStored(rows[0]);
}

/** Reads a transfer and locks it until the transaction ends (the advance helper decides from what it reads). */
export async function findTransferForUpdate(tx: Queryable, businessCode: number, id: number): Promise<TransferRow | undefined> {
  const { rows } = await tx.query<StoredTransfer>(
    `select ${TRANSFER_COLUMNS} from transfers where id = $1::bigint and business_code = $2::bigint for update`,
    [id, businessCode],
  );
  return rows[0] && fromStored(rows[0]);
}

/** One page of a merchant's transfers, newest first. */
export async function listTransfersOfMerchant(
  tx: Queryable,
  businessCode: number,
  filter: { status: TransferStatus | null; limit: number; offset: number },
): Promise<TransferRow[]> {
  const { rows } = await tx.query<StoredTransfer>(
    `select ${TRANSFER_COLUMNS} from transfers
      where business_code = $1::bigint and ($2::text is null or status = $2::text)
      order by created_at desc, id desc
      limit $3::integer offset $4::integer`,
    [businessCode, filter.status, filter.limit, filter.offset],
  );
  return rows.map(fromStored);
}

export async function countTransfersOfMerchant(tx: Queryable, businessCode: number, status: TransferStatus | null): Promise<number> {
  const { rows } = await tx.query<{ total: number }>(
    `select count(*) as total from transfers where business_code = $1::bigint and ($2::text is null or status = $2::text)`,
    [businessCode, status],
  );
  return rows[0]!.total;
}

/** The merchant's transfers opened by `movementIds`: movement id → transfer id (movements of other merchants are not found). */
export async function findTransferIdsByMovement(tx: Queryable, businessCode: number, movementIds: readonly number[]): Promise<Map<number, number>> {
  const { rows } = await tx.query<{ id: number; movement_id: number }>(
    'select id, movement_id from transfers where business_code = $1::bigint and movement_id = any($2::bigint[])',
    [businessCode, movementIds],
  );
  return new Map(rows.map((row) => [Number(row.movement_id), Number(row.id)]));
}

/** PENDING → CANCELED, by the merchant. */
export async function cancelPendingTransfer(tx: Queryable, businessCode: number, id: number, now: Date): Promise<TransferRow | undefined> {
  const { rows } = await tx.query<StoredTransfer>(
    `update transfers set status = 'CANCELED', updated_at = $3::timestamptz
      where id = $1::bigint and business_code = $2::bigint and status = 'PENDING'
      returning ${TRANSFER_COLUMNS}`,
    [id, businessCode, now],
  );
  return rows[0] && fromStored(rows[0]);
}

/** PENDING → IN_TRANSIT: the rail accepted the transfer (a bank's batch holding it was written: no reference yet). */
export async function markTransferInTransit(
  tx: Queryable,
  businessCode: number,
  id: number,
  railReference: string | null,
  now: Date,
): Promise<TransferRow | undefined> {
  const { rows } = await tx.query<StoredTransfer>(
    `update transfers set status = 'IN_TRANSIT', rail_reference = $3::text, updated_at = $4::timestamptz
      where id = $1::bigint and business_code = $2::bigint and status = 'PENDING'
      returning ${TRANSFER_COLUMNS}`,
    [id, businessCode, railReference, now],
  );
  return rows[0] && fromStored(rows[0]);
}

/** IN_TRANSIT → COMPLETED: the funds reached the destination bank (`railReference`: the bank's id of the debit, when it gave one). */
export async function markTransferCompleted(
  tx: Queryable,
  businessCode: number,
  id: number,
  railReference: string | null,
  now: Date,
): Promise<TransferRow | undefined> {
  const { rows } = await tx.query<StoredTransfer>(
    `update transfers set status = 'COMPLETED', rail_reference = coalesce($4::text, rail_reference), updated_at = $3::timestamptz
      where id = $1::bigint and business_code = $2::bigint and status = 'IN_TRANSIT'
      returning ${TRANSFER_COLUMNS}`,
    [id, businessCode, now, railReference],
  );
  return rows[0] && fromStored(rows[0]);
}

/** PENDING or IN_TRANSIT → FAILED with its reason. */
export async function markTransferFailed(
  tx: Queryable,
  businessCode: number,
  id: number,
  failure: { failureCode: FailureCode; failureMessage: string | null; railReference: string | null },
  now: Date,
): Promise<TransferRow | undefined> {
  const { rows } = await tx.query<StoredTransfer>(
    `update transfers set status = 'FAILED', failure_code = $3::text, failure_message = $6::text,
            rail_reference = coalesce($4::text, rail_reference), updated_at = $5::timestamptz
      where id = $1::bigint and business_code = $2::bigint and status in ('PENDING', 'IN_TRANSIT')
      returning ${TRANSFER_COLUMNS}`,
    [id, businessCode, failure.failureCode, failure.railReference, now, failure.failureMessage],
  );
  return rows[0] && fromStored(rows[0]);
}

/**
 * Claims one open transfer whose last change is older than its step's delay (PENDING before
 * `pendingBefore`, IN_TRANSIT before `inTransitBefore`), locking it; SKIP LOCKED lets other workers take
 * others. The times come from the caller's clock as parameters, never from the database's now().
 */
export async function claimDueTransfer(
  tx: Queryable,
  due: { pendingBefore: Date; inTransitBefore: Date },
): Promise<TransferRow | undefined> {
  const { rows } = await tx.query<StoredTransfer>(
    `select ${TRANSFER_COLUMNS} from transfers
      where status in ('PENDING', 'IN_TRANSIT')
        and updated_at <= greatest($1::timestamptz, $2::timestamptz)
        and ((status = 'PENDING' and updated_at <= $1::timestamptz) or (status = 'IN_TRANSIT' and updated_at <= $2::timestamptz))
      order by updated_at, id
      limit 1
      for update skip locked`,
    [due.pendingBefore, due.inTransitBefore],
  );
  return rows[0] && fromStored(rows[0]);
}

/**
 * Claims up to `limit` PENDING transfers, oldest first, locking them (SKIP LOCKED: two processes cutting
 * batches at once take different transfers): what a bank rail's next batch holds.
 */
export async function claimPendingTransfers(tx: Queryable, limit: number): Promise<TransferRow[]> {
  const { rows } = await tx.query<StoredTransfer>(
    `select ${TRANSFER_COLUMNS} from transfers
      where status = 'PENDING'
      order by updated_at, id
      limit $1::integer
      for update skip locked`,
    [limit],
  );
  return rows.map(fromStored);
}

/** Reads transfers by id (any merchant) and locks them, in id order (the order every locker takes: no deadlock). */
export async function findTransfersForUpdate(tx: Queryable, ids: readonly number[]): Promise<TransferRow[]> {
  const { rows } = await tx.query<StoredTransfer>(
    `select ${TRANSFER_COLUMNS} from transfers where id = any($1::bigint[]) order by id for update`,
    [ids],
  );
  return rows.map(fromStored);
}

/** PENDING → IN_TRANSIT for several transfers at once (a bank batch just written holds them); in id order. */
export async function markTransfersInTransit(tx: Queryable, ids: readonly number[], now: Date): Promise<TransferRow[]> {
  const { rows } = await tx.query<StoredTransfer>(
    `update transfers set status = 'IN_TRANSIT', rail_reference = null, updated_at = $2::timestamptz
      where id = any($1::bigint[]) and status = 'PENDING'
      returning ${TRANSFER_COLUMNS}`,
    [ids, now],
  );
  return rows.map(fromStored).sort((a, b) => a.id - b.id);
}
