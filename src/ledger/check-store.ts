// SQL of the ledger check (docs/journal.md#the-ledger-check): each query recomputes one thing from the
// journal or the movements and returns only what disagrees, at most PROBLEM_LIMIT rows. Only the ledger's
// own tables are read (test/db/sql-layers.test.ts): whether a transfer's row agrees with its movement's
// state is the transfers module's to say, above the ledger.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';

const PROBLEM_LIMIT = 100;

/** One disagreement the check found: which proof failed, for which merchant, and the numbers. */
export interface LedgerProblem {
  check: 'entry_balanced' | 'account_balance' | 'running_balance' | 'movement_journal' | 'statement_bucket' | 'movement_days'
    | 'movement_states';
  business_code: number;
  detail: string;
}

export interface InvariantRow {
  business_code: number;
  available_centavos: Centavos;
  pending_out_centavos: Centavos;
  expected_available_centavos: Centavos;
  expected_pending_out_centavos: Centavos;
}

export async function countBalances(tx: Queryable): Promise<number> {
  const { rows } = await tx.query<{ total: number }>('select count(*)::int8 as total from balances');
  return rows[0]!.total;
}

export async function countEntries(tx: Queryable): Promise<number> {
  const { rows } = await tx.query<{ total: number }>('select count(*)::int8 as total from journal_entries');
  return rows[0]!.total;
}

/**
 * The invariant of docs/api-reference.md#balance-invariant for every merchant, over the movements view:
 * available = sum of movements not FAILED or CANCELED, pending_out = transfers still PENDING or IN_TRANSIT.
 */
export async function findInvariantViolations(tx: Queryable): Promise<InvariantRow[]> {
  const { rows } = await tx.query<InvariantRow>(
    `with expected as (
       select business_code,
              coalesce(sum(amount_centavos) filter (where status not in ('FAILED', 'CANCELED')), 0)::bigint as available,
              coalesce(-sum(amount_centavos) filter (where type = 'transfer' and status in ('PENDING', 'IN_TRANSIT')), 0)::bigint as pending_out
         from movement_history group by business_code)
     select b.business_code, b.available_centavos, b.pending_out_centavos,
            coalesce(e.available, 0)::bigint as expected_available_centavos,
            coalesce(e.pending_out, 0)::bigint as expected_pending_out_centavos
       from balances b left join expected e using (business_code)
      where b.available_centavos <> coalesce(e.available, 0)
         or b.pending_out_centavos <> coalesce(e.pending_out, 0)
         or b.available_centavos < 0
      order by b.business_code
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}

/** Entries whose debits and credits differ, or with fewer than two postings. */
export async function findUnbalancedEntries(tx: Queryable): Promise<LedgerProblem[]> {
  const { rows } = await tx.query<LedgerProblem>(
    `select 'entry_balanced' as check, e.business_code,
            format('entry %s (%s): %s postings summing to %s centavos', e.id, e.kind, count(p.entry_id), coalesce(sum(p.amount_centavos), 0)) as detail
       from journal_entries e left join journal_postings p on p.entry_id = e.id
      group by e.id
     having coalesce(sum(p.amount_centavos), 0) <> 0 or count(p.entry_id) < 2
      order by e.id
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}

/** Accounts whose head on the balance row is not the sum of their postings. */
export async function findAccountMismatches(tx: Queryable): Promise<LedgerProblem[]> {
  const { rows } = await tx.query<LedgerProblem>(
    `with sums as (
       select business_code, account, sum(amount_centavos)::bigint as total from journal_postings group by business_code, account
     ), heads as (
       select b.business_code, head.account, head.balance
         from balances b
        cross join lateral (values ('available', b.available_centavos), ('pending_out', b.pending_out_centavos),
                                   ('qr_clearing', b.qr_clearing_centavos), ('ach_clearing', b.ach_clearing_centavos),
                                   ('revenue', b.revenue_centavos)) as head(account, balance)
     )
     select 'account_balance' as check, h.business_code,
            format('%s is %s centavos on the balance row but its postings sum to %s', h.account, h.balance, coalesce(s.total, 0)) as detail
       from heads h left join sums s on s.business_code = h.business_code and s.account = h.account
      where h.balance <> coalesce(s.total, 0)
      order by h.business_code, h.account
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}

/** Postings whose balance_after is not their account's running sum in posting order. */
export async function findRunningBalanceBreaks(tx: Queryable): Promise<LedgerProblem[]> {
  const { rows } = await tx.query<LedgerProblem>(
    `select 'running_balance' as check, business_code,
            format('posting of entry %s on %s says %s after it, the postings before it sum to %s', entry_id, account, balance_after_centavos, running) as detail
       from (select entry_id, business_code, account, balance_after_centavos,
                    sum(amount_centavos) over (partition by business_code, account order by entry_id) as running
               from journal_postings) p
      where balance_after_centavos <> running
      order by business_code, entry_id
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}

/**
 * Movements the journal does not agree with: each movement has its opening entry, its `pending_out`
 * postings hold a transfer's amount exactly while it is PENDING or IN_TRANSIT, and its `available`
 * postings sum to its amount while it counts (0 once FAILED or CANCELED returned it). A transfer's return
 * entry brings its fee back too (docs/fees.md), so `available` is compared per family: a payment or
 * transfer with the fee charged on it.
 */
export async function findMovementJournalMismatches(tx: Queryable): Promise<LedgerProblem[]> {
  const { rows } = await tx.query<LedgerProblem>(
    `with journaled as (
       select e.movement_id,
              count(distinct e.id) filter (where e.kind in ('payment', 'activation_fee', 'fee', 'transfer', 'refund')) as openings,
              coalesce(sum(p.amount_centavos) filter (where p.account = 'available'), 0) as available,
              coalesce(sum(p.amount_centavos) filter (where p.account = 'pending_out'), 0) as pending_out
         from journal_entries e left join journal_postings p on p.entry_id = e.id
        group by e.movement_id
     ), compared as (
       select m.id, m.business_code, m.type, m.status, coalesce(mv.fee_of, m.id) as family,
              case when m.status in ('FAILED', 'CANCELED') then 0 else m.amount_centavos end as available,
              case when m.type = 'transfer' and m.status in ('PENDING', 'IN_TRANSIT') then -m.amount_centavos else 0 end as pending_out,
              coalesce(j.openings, 0) as journal_openings, coalesce(j.available, 0) as journal_available,
              coalesce(j.pending_out, 0) as journal_pending_out
         from movement_history m
         join movements mv on mv.id = m.id
         left join journaled j on j.movement_id = m.id
     ), families as (
       select family, sum(available) as available, sum(journal_available) as journal_available from compared group by family
     )
     select 'movement_journal' as check, x.business_code,
            format('%s movement %s (%s): the journal has %s opening entries, %s on available (with its fee) and %s on pending_out; the movements say %s and %s',
                   x.type, x.id, coalesce(x.status, 'no status'), x.journal_openings, f.journal_available,
                   x.journal_pending_out, f.available, x.pending_out) as detail
       from compared x join families f on f.family = x.family
      where x.status is null or x.journal_openings <> 1 or x.journal_pending_out <> x.pending_out
         or (x.id = x.family and f.journal_available <> f.available)
      order by x.business_code, x.id
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}

/** Statement buckets that do not match the `available` postings they sum. */
export async function findBucketMismatches(tx: Queryable): Promise<LedgerProblem[]> {
  const { rows } = await tx.query<LedgerProblem>(
    `with recomputed as (
       select p.business_code, date_bin('15 minutes', p.posted_at, timestamptz '2000-01-01 00:00:00+00') as bucket_start,
              count(*) filter (where e.kind = 'payment') as payments_count,
              coalesce(sum(p.amount_centavos) filter (where e.kind = 'payment'), 0) as payments_centavos,
              count(*) filter (where e.kind = 'refund') as refunds_count,
              coalesce(sum(p.amount_centavos) filter (where e.kind = 'refund'), 0) as refunds_centavos,
              count(*) filter (where e.kind = 'transfer') as transfers_count,
              coalesce(sum(p.amount_centavos) filter (where e.kind = 'transfer'), 0) as transfers_centavos,
              count(*) filter (where e.kind in ('transfer_return', 'refund_return')) as returns_count,
              coalesce(sum(p.amount_centavos) filter (where e.kind in ('transfer_return', 'refund_return')), 0) as returns_centavos,
              count(*) filter (where e.kind in ('activation_fee', 'fee')) as fees_count,
              coalesce(sum(p.amount_centavos) filter (where e.kind in ('activation_fee', 'fee')), 0) as fees_centavos,
              count(*) filter (where rv.amount_centavos > 0) - count(*) filter (where rv.amount_centavos < 0) as revenue_count,
              coalesce(sum(rv.amount_centavos), 0) as revenue_centavos,
              (array_agg(p.balance_after_centavos order by p.entry_id desc))[1] as closing_centavos
         from journal_postings p join journal_entries e on e.id = p.entry_id
         left join journal_postings rv on rv.entry_id = p.entry_id and rv.account = 'revenue'
        where p.account = 'available'
        group by p.business_code, 2
     )
     select 'statement_bucket' as check, coalesce(b.business_code, r.business_code) as business_code,
            format('the bucket at %s does not match its postings', to_char(coalesce(b.bucket_start, r.bucket_start) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"')) as detail
       from ledger_buckets b full join recomputed r on r.business_code = b.business_code and r.bucket_start = b.bucket_start
      where b.business_code is null or r.business_code is null
         or (b.payments_count, b.payments_centavos, b.refunds_count, b.refunds_centavos, b.transfers_count, b.transfers_centavos,
             b.returns_count, b.returns_centavos, b.fees_count, b.fees_centavos, b.revenue_count, b.revenue_centavos, b.closing_centavos)
            is distinct from
            (r.payments_count::int, r.payments_centavos::bigint, r.refunds_count::int, r.refunds_centavos::bigint, r.transfers_count::int,
             r.transfers_centavos::bigint, r.returns_count::int, r.returns_centavos::bigint, r.fees_count::int, r.fees_centavos::bigint,
             r.revenue_count::int, r.revenue_centavos::bigint, r.closing_centavos)
      order by 2, coalesce(b.bucket_start, r.bucket_start)
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}

/**
 * Per-day movement counts (movement_days) that do not match the movements they count: a day row whose
 * count differs from its movements', a row for a day without movements, or a day with movements and no row.
 */
export async function findMovementDayMismatches(tx: Queryable): Promise<LedgerProblem[]> {
  const { rows } = await tx.query<LedgerProblem>(
    `with recomputed as (
       select business_code, type, date_bin('1 day', created_at, timestamptz '2000-01-01 00:00:00+00') as day, count(*) as movement_count
         from movements
        group by 1, 2, 3
     )
     select 'movement_days' as check, coalesce(d.business_code, r.business_code) as business_code,
            format('%s movements on %s: movement_days says %s, the movements are %s', coalesce(d.type, r.type),
                   to_char(coalesce(d.day, r.day) at time zone 'UTC', 'YYYY-MM-DD'), coalesce(d.movement_count, 0),
                   coalesce(r.movement_count, 0)) as detail
       from movement_days d
       full join recomputed r on r.business_code = d.business_code and r.type = d.type and r.day = d.day
      where d.movement_count is distinct from r.movement_count
      order by 2, coalesce(d.day, r.day), coalesce(d.type, r.type)
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}

/**
 * Movement states (migration 025) that do not fit their movements: a transfer or refund movement without its
 * state (its status would read as none), a state of the wrong kind for its movement's type (a payment's
 * names a payment, a transfer's a transfer, a refund's a refund; a fee has none of its own), a payment,
 * transfer or refund recorded by two movements, or a fee charged on anything but a payment or transfer
 * (it shows that movement's state). A payment movement may have no state: the ledger credits it COMPLETED
 * by its type, and its payment id is then read from nowhere (a credit posted below the QR capability).
 */
export async function findMovementStateMismatches(tx: Queryable): Promise<LedgerProblem[]> {
  const { rows } = await tx.query<LedgerProblem>(
    `with found as (
       select m.business_code, m.id,
              case
                when s.movement_id is null and m.type in ('transfer', 'refund') then 'has no state'
                when s.movement_id is not null and m.type = 'fee' then 'is a fee with a state of its own'
                when s.movement_id is not null and ((m.type = 'payment') <> (s.payment_id is not null)
                  or (m.type = 'transfer') <> (s.transfer_id is not null) or (m.type = 'refund') <> (s.refund_id is not null))
                  then format('has the state of a %s', case when s.payment_id is not null then 'payment'
                                                            when s.transfer_id is not null then 'transfer' else 'refund' end)
                when m.type = 'fee' and c.type not in ('payment', 'transfer') then format('is charged on a %s movement', c.type)
                when count(*) over (partition by s.payment_id, s.transfer_id, s.refund_id) > 1 and s.movement_id is not null
                  then format('records %s, as another movement does',
                              coalesce('payment ' || s.payment_id, 'transfer ' || s.transfer_id, 'refund ' || s.refund_id))
              end as problem, m.type
         from movements m
         left join movement_states s on s.movement_id = m.id
         left join movements c on c.id = m.fee_of
     )
     select 'movement_states' as check, business_code, format('%s movement %s %s', type, id, problem) as detail
       from found
      where problem is not null
      order by business_code, id
      limit ${PROBLEM_LIMIT}`,
  );
  return rows;
}
