// Seeds a merchant's history in bulk, straight into the ledger's tables, as the posting statement would
// have written it: `count` movements one `spacingMs` apart — payments of 2.50, and with `transferEvery`
// every n-th a transfer of 1.00 that the bank settled — each with its movement (and transfer row), its
// balanced entries, postings with running balances, the statement buckets, the per-day movement counts
// and the balance heads, so the ledger check passes on the result. The statement, export and movements
// benchmarks and the export's memory test need a year of a busy merchant in seconds, which a million
// HTTP requests would not give. The merchant must have no history yet.
import type { Database } from '../../src/db/database.ts';

export interface SeedOptions {
  count: number;
  start: Date;
  spacingMs: number;
  /** Every n-th movement is a settled transfer (none when absent). */
  transferEvery?: number;
}

export async function seedHistory(db: Database, businessCode: number, { count, start, spacingMs, transferEvery }: SeedOptions): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `with moved as (
         insert into movements (business_code, type, amount_centavos, reference, snapshot, created_at)
         select $1::bigint, case when t then 'transfer' else 'payment' end, case when t then -100 else 250 end, 'Pedido ' || n,
                case when t
                  then '{"destination":{"type":"bank_account","bank_code":1014,"account_number":"**********5678","account_titular":"Juan Pérez"}}'::jsonb
                  else '{"details":{"source_bank":"Banco Unión","account_number":"**********4321","account_titular":"Ana Pérez"}}'::jsonb end,
                $2::timestamptz + (n * $3::bigint) * interval '1 millisecond'
           from generate_series(1, $4::integer) as n, lateral (select $5::integer > 0 and n % $5::integer = 0 as t) as kind
          order by n
         returning id, type, created_at
       ), transferred as (
         insert into transfers (business_code, movement_id, status, amount_centavos, bank_code, account_number, account_titular, created_at, updated_at)
         select $1::bigint, id, 'COMPLETED', 100, 1014, '20150123455678', 'Juan Pérez', created_at, created_at from moved where type = 'transfer'
       ), entered as (
         insert into journal_entries (business_code, kind, movement_id, posted_at)
         select $1::bigint, step.kind, m.id, m.created_at
           from moved m cross join lateral (values (case when m.type = 'payment' then 'payment' else 'transfer' end, 1), ('transfer_settlement', 2)) as step(kind, n)
          where step.n = 1 or m.type = 'transfer'
          order by m.id, step.n
         returning id, kind, posted_at
       )
       insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
       select e.id, $1::bigint, leg.account, leg.amount, sum(leg.amount) over (partition by leg.account order by e.id), e.posted_at
         from entered e cross join lateral (values
           ('available', case e.kind when 'payment' then 250 when 'transfer' then -100 else 0 end),
           ('qr_clearing', case e.kind when 'payment' then -250 else 0 end),
           ('pending_out', case e.kind when 'transfer' then 100 when 'transfer_settlement' then -100 else 0 end),
           ('ach_clearing', case e.kind when 'transfer_settlement' then 100 else 0 end)) as leg(account, amount)
        where leg.amount <> 0`,
      [businessCode, start, spacingMs, count, transferEvery ?? 0],
    );
    await tx.query(
      `insert into ledger_buckets (business_code, bucket_start, payments_count, payments_centavos, transfers_count, transfers_centavos, closing_centavos)
       select p.business_code, date_bin('15 minutes', p.posted_at, timestamptz '2000-01-01 00:00:00+00'),
              count(*) filter (where e.kind = 'payment'), coalesce(sum(p.amount_centavos) filter (where e.kind = 'payment'), 0),
              count(*) filter (where e.kind = 'transfer'), coalesce(sum(p.amount_centavos) filter (where e.kind = 'transfer'), 0),
              (array_agg(p.balance_after_centavos order by p.entry_id desc))[1]
         from journal_postings p join journal_entries e on e.id = p.entry_id
        where p.business_code = $1::bigint and p.account = 'available'
        group by 1, 2`,
      [businessCode],
    );
    await tx.query(
      `update balances b set
          available_centavos = coalesce((select sum(amount_centavos) from journal_postings where business_code = b.business_code and account = 'available'), 0),
          pending_out_centavos = coalesce((select sum(amount_centavos) from journal_postings where business_code = b.business_code and account = 'pending_out'), 0),
          qr_clearing_centavos = coalesce((select sum(amount_centavos) from journal_postings where business_code = b.business_code and account = 'qr_clearing'), 0),
          ach_clearing_centavos = coalesce((select sum(amount_centavos) from journal_postings where business_code = b.business_code and account = 'ach_clearing'), 0),
          updated_at = (select max(posted_at) from journal_entries where business_code = b.business_code)
        where business_code = $1::bigint`,
      [businessCode],
    );
    await tx.query(
      `insert into movement_days (business_code, type, day, movement_count)
       select business_code, type, date_bin('1 day', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*)
         from movements where business_code = $1::bigint group by 1, 2, 3`,
      [businessCode],
    );
  });
}
