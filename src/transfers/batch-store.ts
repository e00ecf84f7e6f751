// SQL of transfer batches (migration 019): the batches a bank rail uploads and what the bank said of each
// item. Every change of a batch is one guarded UPDATE named after it, as in store.ts.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';
import type { RailName } from '../rails/names.ts';

export type BatchStatus = 'uploading' | 'uploaded' | 'refused' | 'unknown';
export type ItemOutcome = 'accepted' | 'rejected';

export interface BatchRow {
  id: number;
  rail: RailName;
  status: BatchStatus;
  item_count: number;
  amount_centavos: Centavos;
  bank_batch_id: string | null;
  message: string | null;
  resolution: 'COMPLETED' | 'FAILED' | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface BatchItemRow {
  transfer_id: number;
  batch_id: number;
  outcome: ItemOutcome | null;
  outcome_at: Date | null;
  debit_reference: string | null;
  credit_reference: string | null;
  conflicting_outcome: ItemOutcome | null;
  conflict_at: Date | null;
}

const BATCH_COLUMNS = 'id, rail, status, item_count, amount_centavos, bank_batch_id, message, resolution, resolved_at, created_at, updated_at';
const ITEM_COLUMNS = 'transfer_id, batch_id, outcome, outcome_at, debit_reference, credit_reference, conflicting_outcome, conflict_at';

/** Writes a batch (uploading) and its items in two statements of the caller's transaction. */
export async function insertBatch(
  tx: Queryable,
  batch: { rail: RailName; transfers: readonly { id: number; amountCentavos: Centavos }[] },
  now: Date,
): Promise<BatchRow> {
  const total = batch.transfers.reduce((sum, transfer) => sum + transfer.amountCentavos, 0);
  const { rows } = await tx.query<BatchRow>(
    `insert into transfer_batches (rail, status, item_count, amount_centavos, created_at, updated_at)
     values ($1::text, 'uploading', $2::integer, $3::bigint, $4::timestamptz, $4::timestamptz)
     returning ${BATCH_COLUMNS}`,
    [batch.rail, batch.transfers.length, total, now],
  );
  const row = rows[0]!;
  await tx.query(
    `insert into transfer_batch_items (transfer_id, batch_id) select unnest($1::bigint[]), $2::bigint`,
    [batch.transfers.map((transfer) => transfer.id), row.id],
  );
  return row;
}

export async function findBatch(db: Queryable, id: number): Promise<BatchRow | undefined> {
  const { rows } = await db.query<BatchRow>(`select ${BATCH_COLUMNS} from transfer_batches where id = $1::bigint`, [id]);
  return rows[0];
}

export async function findBatchForUpdate(tx: Queryable, id: number): Promise<BatchRow | undefined> {
  const { rows } = await tx.query<BatchRow>(`select ${BATCH_COLUMNS} from transfer_batches where id = $1::bigint for update`, [id]);
  return rows[0];
}

/** The upload's answer came: uploading (or unknown, an answer later than the give-up) → uploaded. */
export async function markBatchUploaded(tx: Queryable, id: number, bankBatchId: string, now: Date): Promise<BatchRow | undefined> {
  const { rows } = await tx.query<BatchRow>(
    `update transfer_batches set status = 'uploaded', bank_batch_id = $2::text, message = null, updated_at = $3::timestamptz
      where id = $1::bigint and status in ('uploading', 'unknown') and resolution is null
      returning ${BATCH_COLUMNS}`,
    [id, bankBatchId, now],
  );
  return rows[0];
}

/** The bank turned the upload away: uploading (or unknown) → refused. */
export async function markBatchRefused(tx: Queryable, id: number, message: string, now: Date): Promise<BatchRow | undefined> {
  const { rows } = await tx.query<BatchRow>(
    `update transfer_batches set status = 'refused', message = $2::text, updated_at = $3::timestamptz
      where id = $1::bigint and status in ('uploading', 'unknown') and resolution is null
      returning ${BATCH_COLUMNS}`,
    [id, message.slice(0, 500), now],
  );
  return rows[0];
}

/** No answer: uploading → unknown, with what was missing. */
export async function markBatchUnknown(tx: Queryable, id: number, problem: string, now: Date): Promise<BatchRow | undefined> {
  const { rows } = await tx.query<BatchRow>(
    `update transfer_batches set status = 'unknown', message = $2::text, updated_at = $3::timestamptz
      where id = $1::bigint and status = 'uploading'
      returning ${BATCH_COLUMNS}`,
    [id, problem.slice(0, 500), now],
  );
  return rows[0];
}

/** Batches of a rail still uploading since before `before` (the process that sent them is gone): → unknown. */
export async function markStaleUploadsUnknown(db: Queryable, rail: RailName, before: Date, now: Date): Promise<number> {
  const { rowCount } = await db.query(
    `update transfer_batches set status = 'unknown', message = 'the upload''s answer never came (the process that sent it stopped)',
            updated_at = $3::timestamptz
      where status = 'uploading' and rail = $1::text and created_at < $2::timestamptz`,
    [rail, before, now],
  );
  return rowCount;
}

/** The operator's word on a batch. */
export async function markBatchResolved(tx: Queryable, id: number, resolution: 'COMPLETED' | 'FAILED', now: Date): Promise<BatchRow | undefined> {
  const { rows } = await tx.query<BatchRow>(
    `update transfer_batches set resolution = $2::text, resolved_at = $3::timestamptz, updated_at = $3::timestamptz
      where id = $1::bigint and resolution is null and status in ('uploaded', 'unknown')
      returning ${BATCH_COLUMNS}`,
    [id, resolution, now],
  );
  return rows[0];
}

/** The ids of a batch's transfers, in id order. */
export async function transferIdsOfBatch(db: Queryable, batchId: number): Promise<number[]> {
  const { rows } = await db.query<{ transfer_id: number }>(
    'select transfer_id from transfer_batch_items where batch_id = $1::bigint order by transfer_id',
    [batchId],
  );
  return rows.map((row) => row.transfer_id);
}

/** An item and its batch's rail, locked until the transaction ends (the status callback decides from it). */
export async function findItemForUpdate(
  tx: Queryable, transferId: number,
): Promise<(BatchItemRow & Pick<BatchRow, 'rail' | 'bank_batch_id'>) | undefined> {
  const { rows } = await tx.query<BatchItemRow & Pick<BatchRow, 'rail' | 'bank_batch_id'>>(
    `select ${ITEM_COLUMNS.split(', ').map((column) => `i.${column}`).join(', ')}, b.rail, b.bank_batch_id
       from transfer_batch_items i join transfer_batches b on b.id = i.batch_id
      where i.transfer_id = $1::bigint
        for update of i`,
    [transferId],
  );
  return rows[0];
}

/** The bank's first word on an item. */
export async function recordItemOutcome(
  tx: Queryable,
  transferId: number,
  word: { outcome: ItemOutcome; debitReference: string | null; creditReference: string | null },
  now: Date,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `update transfer_batch_items set outcome = $2::text, outcome_at = $3::timestamptz, debit_reference = $4::text, credit_reference = $5::text
      where transfer_id = $1::bigint and outcome is null`,
    [transferId, word.outcome, now, word.debitReference, word.creditReference],
  );
  return rowCount > 0;
}

/** A later word contradicting the first: kept once, for reconciliation; nothing else changes. */
export async function recordItemConflict(tx: Queryable, transferId: number, outcome: ItemOutcome, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `update transfer_batch_items set conflicting_outcome = $2::text, conflict_at = $3::timestamptz
      where transfer_id = $1::bigint and outcome is not null and outcome <> $2::text and conflicting_outcome is null`,
    [transferId, outcome, now],
  );
  return rowCount > 0;
}
