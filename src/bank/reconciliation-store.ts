// SQL of reconciliation (migration 021; docs/rails.md, "Reconciliation"): what the service holds of a bank
// rail's day — payments from the qr module's tables, batch items from the transfers module's (the bank
// capability sits above both and may read them; they never read these) — and the runs and daily claims
// of the bank capability's own tables.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';
import type { RailName } from '../rails/names.ts';

/** A business day's bounds: [start, end) in SERVICE_TIMEZONE. */
export interface DayBounds {
  start: Date;
  end: Date;
}

export interface HeldPayment {
  railReference: string;
  amountCentavos: Centavos;
  /** Whether paid_at falls within the day (else it was fetched for being named by the bank's list). */
  ofDay: boolean;
}

/** The rail's payments paid within the day, and any other of them the bank's list names. */
export async function heldPayments(tx: Queryable, rail: RailName, day: DayBounds, named: readonly string[]): Promise<HeldPayment[]> {
  const { rows } = await tx.query<{ rail_reference: string; amount_centavos: Centavos; of_day: boolean }>(
    `select rail_reference, amount_centavos, (paid_at >= $2::timestamptz and paid_at < $3::timestamptz) as of_day
       from qr_payments
      where rail = $1::text and rail_reference is not null
        and ((paid_at >= $2::timestamptz and paid_at < $3::timestamptz) or rail_reference = any($4::text[]))`,
    [rail, day.start, day.end, named],
  );
  return rows.map((row) => ({ railReference: row.rail_reference, amountCentavos: row.amount_centavos, ofDay: row.of_day }));
}

/** Which of the bank's QR ids are QRs of ours. */
export async function ownQrReferences(tx: Queryable, rail: RailName, references: readonly string[]): Promise<Set<string>> {
  if (references.length === 0) return new Set();
  const { rows } = await tx.query<{ rail_reference: string }>(
    'select rail_reference from simple_qrs where rail = $1::text and rail_reference = any($2::text[])',
    [rail, references],
  );
  return new Set(rows.map((row) => row.rail_reference));
}

export interface AcceptedItem {
  transferId: number;
  debitReference: string | null;
  amountCentavos: Centavos;
}

/** The rail's batch items the bank accepted (their first word) within the day. */
export async function itemsAcceptedWithin(tx: Queryable, rail: RailName, day: DayBounds): Promise<AcceptedItem[]> {
  const { rows } = await tx.query<{ transfer_id: number; debit_reference: string | null; amount_centavos: Centavos }>(
    `select i.transfer_id, i.debit_reference, t.amount_centavos
       from transfer_batch_items i
       join transfer_batches b on b.id = i.batch_id
       join transfers t on t.id = i.transfer_id
      where b.rail = $1::text and i.outcome = 'accepted' and i.outcome_at >= $2::timestamptz and i.outcome_at < $3::timestamptz
      order by i.transfer_id`,
    [rail, day.start, day.end],
  );
  return rows.map((row) => ({ transferId: row.transfer_id, debitReference: row.debit_reference, amountCentavos: row.amount_centavos }));
}

/** Which of the bank's debit ids some batch item of the rail carries, whichever day its word came. */
export async function knownDebitReferences(tx: Queryable, rail: RailName, references: readonly string[]): Promise<Set<string>> {
  if (references.length === 0) return new Set();
  const { rows } = await tx.query<{ debit_reference: string }>(
    `select i.debit_reference from transfer_batch_items i join transfer_batches b on b.id = i.batch_id
      where i.debit_reference = any($2::text[]) and b.rail = $1::text`,
    [rail, references],
  );
  return new Set(rows.map((row) => row.debit_reference));
}

export interface OpenBatch {
  batchId: number;
  amountCentavos: Centavos;
}

/**
 * The rail's batches written before the day ended whose upload's answer never came, not resolved by the
 * operator, with a transfer the bank has not answered for yet: they stand until settled, so each day's
 * reconciliation from the one they were written on reports them.
 */
export async function unknownBatchesBy(tx: Queryable, rail: RailName, end: Date): Promise<OpenBatch[]> {
  const { rows } = await tx.query<{ id: number; amount_centavos: Centavos }>(
    `select b.id, b.amount_centavos from transfer_batches b
      where b.rail = $1::text and b.status = 'unknown' and b.resolution is null and b.created_at < $2::timestamptz
        and exists (select 1 from transfer_batch_items i where i.batch_id = b.id and i.outcome is null)
      order by b.id`,
    [rail, end],
  );
  return rows.map((row) => ({ batchId: row.id, amountCentavos: row.amount_centavos }));
}

export interface ConflictingItem {
  transferId: number;
  amountCentavos: Centavos;
}

/**
 * The rail's batch items with a contradiction that arrived within the day: a later status callback that
 * contradicts the first, or a first word at odds with its transfer's final status (the operator resolved
 * the batch, or its upload was refused, before the bank answered).
 */
export async function conflictingItemsWithin(tx: Queryable, rail: RailName, day: DayBounds): Promise<ConflictingItem[]> {
  const { rows } = await tx.query<{ transfer_id: number; amount_centavos: Centavos }>(
    `select i.transfer_id, t.amount_centavos
       from transfer_batch_items i
       join transfer_batches b on b.id = i.batch_id
       join transfers t on t.id = i.transfer_id
      where b.rail = $1::text and i.transfer_id in (
        select transfer_id from transfer_batch_items
         where conflicting_outcome is not null and conflict_at >= $2::timestamptz and conflict_at < $3::timestamptz
        union
        select i2.transfer_id from transfer_batch_items i2 join transfers t2 on t2.id = i2.transfer_id
         where i2.outcome is not null and i2.outcome_at >= $2::timestamptz and i2.outcome_at < $3::timestamptz
           and ((i2.outcome = 'accepted' and t2.status = 'FAILED') or (i2.outcome = 'rejected' and t2.status = 'COMPLETED')))
      order by i.transfer_id`,
    [rail, day.start, day.end],
  );
  return rows.map((row) => ({ transferId: row.transfer_id, amountCentavos: row.amount_centavos }));
}

// ---------------------------------------------------------------------------------------------------
// Runs and the daily job's claims.

/** A break as stored: amounts in centavos. */
export interface StoredBreak {
  kind: string;
  reference: string | null;
  ours: number | null;
  bank: number | null;
}

export interface RunToStore {
  rail: RailName;
  businessDate: string;
  origin: 'daily' | 'operator';
  status: 'balanced' | 'breaks';
  payments: { bank: number; ours: number };
  transfers: { bank: number; ours: number };
  breakCounts: Record<string, number>;
  breaks: StoredBreak[];
}

/** Stores a run; returns its id. */
export async function insertRun(db: Queryable, run: RunToStore, now: Date): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `insert into rail_reconciliations (rail, business_date, origin, status, payments_bank, payments_ours, transfers_bank,
       transfers_ours, break_counts, breaks, created_at)
     values ($1::text, $2::date, $3::text, $4::text, $5::integer, $6::integer, $7::integer, $8::integer, $9::jsonb, $10::jsonb, $11::timestamptz)
     returning id`,
    [run.rail, run.businessDate, run.origin, run.status, run.payments.bank, run.payments.ours, run.transfers.bank, run.transfers.ours,
      JSON.stringify(run.breakCounts), JSON.stringify(run.breaks), now],
  );
  return rows[0]!.id;
}

/**
 * Claims the day for the daily job until `until`: true when this process may reconcile it — no run of it
 * is stored yet and no other process holds an unexpired claim. One statement, so two processes never both win.
 */
export async function claimDay(db: Queryable, rail: RailName, day: string, now: Date, until: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into rail_reconciliation_days (rail, business_date, claimed_until) values ($1::text, $2::date, $4::timestamptz)
     on conflict (rail, business_date) do update set claimed_until = excluded.claimed_until
      where rail_reconciliation_days.reconciliation_id is null and rail_reconciliation_days.claimed_until <= $3::timestamptz`,
    [rail, day, now, until],
  );
  return rowCount > 0;
}

/** The day's daily run is stored: it is done. */
export async function markDayDone(db: Queryable, rail: RailName, day: string, reconciliationId: number): Promise<void> {
  await db.query(
    'update rail_reconciliation_days set reconciliation_id = $3::bigint where rail = $1::text and business_date = $2::date',
    [rail, day, reconciliationId],
  );
}

export interface LatestRun {
  rail: RailName;
  businessDate: string;
  breakCounts: Record<string, number>;
}

/** Per rail, the latest run of the latest day reconciled. */
export async function latestRuns(db: Queryable): Promise<LatestRun[]> {
  const { rows } = await db.query<{ rail: RailName; business_date: string; break_counts: Record<string, number> }>(
    `select distinct on (rail) rail, business_date::text as business_date, break_counts
       from rail_reconciliations order by rail, business_date desc, id desc`,
  );
  return rows.map((row) => ({ rail: row.rail, businessDate: row.business_date, breakCounts: row.break_counts }));
}
