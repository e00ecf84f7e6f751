// SQL of statements and the journal export (docs/api-reference.md#statements): sums of the quarter-hour
// statement buckets per day, and the merchant's `available` postings in keyset batches.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';
import type { EntryKind, StatementColumn } from './entries.ts';

export type DayTotals = Record<StatementColumn, { count: number; centavos: Centavos }>;

/** `available` at `instant`: the closing of the merchant's last bucket before it (0 before any). */
export async function availableBefore(tx: Queryable, businessCode: number, instant: Date): Promise<Centavos> {
  const { rows } = await tx.query<{ closing_centavos: Centavos }>(
    `select closing_centavos from ledger_buckets
      where business_code = $1::bigint and bucket_start < $2::timestamptz
      order by bucket_start desc limit 1`,
    [businessCode, instant],
  );
  return rows[0]?.closing_centavos ?? (0 as Centavos);
}

/**
 * The totals of each day whose boundaries `dayStarts` gives (N + 1 instants for N days), by day index
 * (0-based); days without activity are absent. A bucket lies wholly inside one day for any zone whose
 * offset is a whole number of quarter hours, so summing buckets is exact.
 */
export async function totalsByDay(tx: Queryable, businessCode: number, dayStarts: readonly Date[]): Promise<Map<number, DayTotals>> {
  const { rows } = await tx.query<{
    day: number; payments_count: number; payments_centavos: Centavos; refunds_count: number; refunds_centavos: Centavos;
    transfers_count: number; transfers_centavos: Centavos; returns_count: number; returns_centavos: Centavos;
    fees_count: number; fees_centavos: Centavos;
  }>(
    `select width_bucket(bucket_start, $2::timestamptz[]) - 1 as day,
            sum(payments_count)::int8 as payments_count, sum(payments_centavos)::int8 as payments_centavos,
            sum(refunds_count)::int8 as refunds_count, sum(refunds_centavos)::int8 as refunds_centavos,
            sum(transfers_count)::int8 as transfers_count, sum(transfers_centavos)::int8 as transfers_centavos,
            sum(returns_count)::int8 as returns_count, sum(returns_centavos)::int8 as returns_centavos,
            sum(fees_count)::int8 as fees_count, sum(fees_centavos)::int8 as fees_centavos
       from ledger_buckets
      where business_code = $1::bigint and bucket_start >= $3::timestamptz and bucket_start < $4::timestamptz
      group by 1`,
    [businessCode, dayStarts.map((d) => d.toISOString()), dayStarts[0], dayStarts[dayStarts.length - 1]],
  );
  return new Map(rows.map((r) => [r.day, {
    payments: { count: r.payments_count, centavos: r.payments_centavos },
    refunds: { count: r.refunds_count, centavos: r.refunds_centavos },
    transfers: { count: r.transfers_count, centavos: r.transfers_centavos },
    returns: { count: r.returns_count, centavos: r.returns_centavos },
    fees: { count: r.fees_count, centavos: r.fees_centavos },
  }]));
}

/** One line of the journal export: an entry that changed `available`, with what it belongs to. */
export interface EntryLine {
  entry_id: number;
  posted_at: Date;
  kind: EntryKind;
  amount_centavos: Centavos;
  balance_after_centavos: Centavos;
  reference: string | null;
  /** The movement's snapshot: masked counterparty, qr_id, external_reference. */
  snapshot: Record<string, unknown>;
  payment_id: number | null;
  transfer_id: number | null;
  refund_id: string | null;
}

/** The newest entry id of a merchant: an export reads up to it, so entries posted meanwhile never half-appear. */
export async function lastEntryId(tx: Queryable, businessCode: number): Promise<number> {
  const { rows } = await tx.query<{ id: number | null }>(
    'select max(id) as id from journal_entries where business_code = $1::bigint', [businessCode]);
  return rows[0]?.id ?? 0;
}

/**
 * Up to `limit` export lines posted in [from, to) after the keyset position `after` (posting time, entry
 * id), in posting order, among entries up to `upToEntryId`. Each batch walks journal_postings_by_account
 * from where the last one stopped, so a year of entries is read in short queries and never held at once.
 */
export async function entryLinesAfter(
  tx: Queryable,
  businessCode: number,
  window: { from: Date; to: Date; upToEntryId: number },
  after: { postedAt: Date; entryId: number } | null,
  limit: number,
): Promise<EntryLine[]> {
  const { rows } = await tx.query<EntryLine>(
    `select p.entry_id, p.posted_at, e.kind, p.amount_centavos, p.balance_after_centavos, m.reference, m.snapshot,
            coalesce(s.payment_id, (m.snapshot -> 'details' ->> 'payment_id')::bigint) as payment_id, s.transfer_id,
            case when m.fee_of is null then s.refund_id end as refund_id
       from journal_postings p
       join journal_entries e on e.id = p.entry_id
       join movements m on m.id = e.movement_id
       -- the ledger's own record of what a movement is (migration 025): a fee's entry names the payment or
       -- transfer it was charged on (023), a refund's the payment it gives back from its snapshot
       left join movement_states s on s.movement_id = coalesce(m.fee_of, m.id)
      where p.business_code = $1::bigint and p.account = 'available'
        and p.posted_at >= $2::timestamptz and p.posted_at < $3::timestamptz and p.entry_id <= $4::bigint
        ${after ? 'and (p.posted_at, p.entry_id) > ($6::timestamptz, $7::bigint)' : ''}
      order by p.posted_at, p.entry_id
      limit $5::integer`,
    // The keyset condition is left out of the first batch rather than written `$n is null or …`, so the
    // planner can always use it as an index condition.
    [businessCode, window.from, window.to, window.upToEntryId, limit, ...(after ? [after.postedAt, after.entryId] : [])],
  );
  return rows;
}
