// Seeds a merchant's history in bulk, straight into the ledger's tables, as the posting statement would
// have written it: `count` payments of 2.50 one `spacingMs` apart, each with its movement, its balanced
// entry, its postings and running balances, the statement buckets, the counters and the balance heads.
// The statement and export benchmarks and the export's memory test need a year of a busy merchant in
// seconds, which a million HTTP payments would not give. The merchant must have no history yet.
import type { Database } from '../../src/db/database.ts';

export async function seedPayments(db: Database, businessCode: number, { count, start, spacingMs }: { count: number; start: Date; spacingMs: number }): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `with moved as (
         insert into movements (business_code, type, amount_centavos, reference, snapshot, created_at)
         select $1::bigint, 'payment', 250, 'Pedido ' || n,
                '{"details":{"source_bank":"Banco Unión","account_number":"**********4321","account_titular":"Ana Pérez"}}'::jsonb,
                $2::timestamptz + (n * $3::bigint) * interval '1 millisecond'
           from generate_series(1, $4::integer) as n
          order by n
         returning id, created_at
       ), entered as (
         insert into journal_entries (business_code, kind, movement_id, posted_at)
         select $1::bigint, 'payment', id, created_at from moved order by id
         returning id, posted_at
       )
       insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
       select e.id, $1::bigint, leg.account, leg.amount, leg.amount * row_number() over (partition by leg.account order by e.id), e.posted_at
         from entered e cross join (values ('available', 250), ('qr_clearing', -250)) as leg(account, amount)`,
      [businessCode, start, spacingMs, count],
    );
    await tx.query(
      `insert into ledger_buckets (business_code, bucket_start, payments_count, payments_centavos, closing_centavos)
       select business_code, date_bin('15 minutes', posted_at, timestamptz '2000-01-01 00:00:00+00'), count(*), sum(amount_centavos), max(balance_after_centavos)
         from journal_postings where business_code = $1::bigint and account = 'available'
        group by 1, 2`,
      [businessCode],
    );
    await tx.query(
      `update balances set available_centavos = 250 * $2::bigint, qr_clearing_centavos = -250 * $2::bigint,
              updated_at = (select max(posted_at) from journal_entries where business_code = $1::bigint)
        where business_code = $1::bigint`,
      [businessCode, count],
    );
    await tx.query(
      `insert into movement_counters (business_code, type, movement_count) values ($1::bigint, 'payment', $2::bigint)
       on conflict (business_code, type) do update set movement_count = movement_counters.movement_count + excluded.movement_count`,
      [businessCode, count],
    );
  });
  await db.query('analyze');
}
