// SQL of the revenue report (docs/fees.md#revenue): the revenue account's changes summed from the
// quarter-hour statement buckets, never from the journal, so a year's report reads at most its buckets
// with fee activity.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';

/** What a merchant's fees earned the platform on one day of the range (day: 0-based index). */
export interface RevenueRow {
  day: number;
  business_code: number;
  /** Fees charged less transfer fees given back. */
  count: number;
  centavos: Centavos;
}

/**
 * The revenue of every merchant on each day that `dayStarts` bounds (N + 1 instants for N days), for the
 * days and merchants that had any; through ledger_buckets_with_revenue, buckets without fees are never read.
 */
export async function revenueByDayAndMerchant(tx: Queryable, dayStarts: readonly Date[]): Promise<RevenueRow[]> {
  const { rows } = await tx.query<RevenueRow>(
    `select width_bucket(bucket_start, $1::timestamptz[]) - 1 as day, business_code,
            sum(revenue_count)::int8 as count, sum(revenue_centavos)::int8 as centavos
       from ledger_buckets
      where bucket_start >= $2::timestamptz and bucket_start < $3::timestamptz
        and (revenue_count <> 0 or revenue_centavos <> 0)
      group by 1, 2
      order by 1, 2`,
    [dayStarts.map((d) => d.toISOString()), dayStarts[0], dayStarts[dayStarts.length - 1]],
  );
  return rows;
}

/** The activation fees the platform's own account collected on each day of the range (its statement's `fees`). */
export async function activationsByDay(tx: Queryable, platformBusinessCode: number, dayStarts: readonly Date[]): Promise<Array<{ day: number; count: number; centavos: Centavos }>> {
  const { rows } = await tx.query<{ day: number; count: number; centavos: Centavos }>(
    `select width_bucket(bucket_start, $2::timestamptz[]) - 1 as day, sum(fees_count)::int8 as count, sum(fees_centavos)::int8 as centavos
       from ledger_buckets
      where business_code = $1::bigint and bucket_start >= $3::timestamptz and bucket_start < $4::timestamptz and fees_count <> 0
      group by 1
      order by 1`,
    [platformBusinessCode, dayStarts.map((d) => d.toISOString()), dayStarts[0], dayStarts[dayStarts.length - 1]],
  );
  return rows;
}
