-- 007: the append-only double-entry journal (docs/journal.md). Every change of money appends one entry
-- whose postings sum to zero, in the transaction of the change; the database refuses an unbalanced entry
-- and any UPDATE, DELETE or TRUNCATE of the journal. The balances row stays the head of each account
-- (fast reads, the no-negative CHECKs); each posting carries its account's balance after it. Movements
-- become immutable: a transfer's status is read from the transfer, through the `movement_history` view,
-- instead of being edited into Monday's row on Wednesday. Existing movements are journaled by a backfill,
-- so a database from before this migration reconciles.

-- The heads of each merchant's share of the platform's clearing accounts, one per rail: money that came in
-- through the QR payment network (a debit balance, negative here) and money sent out through ACH. Kept per
-- merchant on the balance row every money change already locks, so no payment waits on another merchant.
alter table balances add column qr_clearing_centavos bigint not null default 0;
alter table balances add column ach_clearing_centavos bigint not null default 0;

-- (business_code, id) is unique (id alone is), so an entry's movement can be checked to be its merchant's.
drop index movements_by_merchant_and_id;
alter table movements add constraint movements_by_merchant_and_id unique (business_code, id);

create table journal_entries (
  id bigint generated always as identity primary key,
  business_code bigint not null,
  kind text not null constraint journal_entries_kind_valid check (kind in (
    'payment', 'activation_fee', 'transfer', 'transfer_settlement', 'transfer_return', 'refund', 'refund_return')),
  -- the movement the entry belongs to: a payment's, a transfer's (debit, settlement or return), a refund's
  movement_id bigint not null,
  -- milliseconds, as the service's clock gives them: an export's keyset position is exact in JavaScript
  posted_at timestamptz not null constraint journal_entries_posted_at_milliseconds check (posted_at = date_trunc('milliseconds', posted_at)),
  -- a merchant's entries in order (the export's newest-entry lookup), and the target of the postings' key
  constraint journal_entries_of_merchant unique (business_code, id),
  -- the movement is the entry's merchant's (and through it, the merchant exists)
  constraint journal_entries_movement_fkey foreign key (business_code, movement_id) references movements (business_code, id)
);
-- A movement is opened by one entry and closed by at most one (a transfer settles or comes back, a refund
-- comes back): funds can never return twice, whatever the code above does.
create unique index journal_entries_one_opening on journal_entries (movement_id)
  where kind in ('payment', 'activation_fee', 'transfer', 'refund');
create unique index journal_entries_one_closing on journal_entries (movement_id)
  where kind in ('transfer_settlement', 'transfer_return', 'refund_return');

-- Signed amounts: a credit is positive, a debit negative, and every account's balance is the sum of its
-- postings (merchant accounts are what the platform owes the merchant: credit balances, never negative).
create table journal_postings (
  entry_id bigint not null,
  business_code bigint not null,
  account text not null constraint journal_postings_account_valid
    check (account in ('available', 'pending_out', 'qr_clearing', 'ach_clearing')),
  amount_centavos bigint not null constraint journal_postings_amount_nonzero check (amount_centavos <> 0),
  balance_after_centavos bigint not null,
  posted_at timestamptz not null constraint journal_postings_posted_at_milliseconds check (posted_at = date_trunc('milliseconds', posted_at)),
  constraint journal_postings_pkey primary key (entry_id, account),
  -- a posting belongs to its entry's merchant
  constraint journal_postings_entry_fkey foreign key (business_code, entry_id) references journal_entries (business_code, id)
);
-- An account's history in posting order: statements' CSV export, the ledger check's running balances.
create index journal_postings_by_account on journal_postings (business_code, account, posted_at, entry_id);

-- Each merchant's `available` changes summed per 15-minute bucket (UTC), kept in the posting's statement:
-- a statement of any date range in any time zone with whole-quarter-hour offsets reads at most 96 rows a
-- day instead of every entry. closing_centavos is `available` after the bucket's last posting.
create table ledger_buckets (
  business_code bigint not null references merchants (business_code),
  bucket_start timestamptz not null,
  payments_count integer not null default 0,
  payments_centavos bigint not null default 0,
  refunds_count integer not null default 0,
  refunds_centavos bigint not null default 0,
  transfers_count integer not null default 0,
  transfers_centavos bigint not null default 0,
  returns_count integer not null default 0,
  returns_centavos bigint not null default 0,
  fees_count integer not null default 0,
  fees_centavos bigint not null default 0,
  -- not CHECKed non-negative: balances' CHECK guards every posting, and a backfilled history whose
  -- instances' clocks disagreed may order a debit a moment before the payment that funded it
  closing_centavos bigint not null,
  constraint ledger_buckets_pkey primary key (business_code, bucket_start)
);

create function journal_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception 'the journal is append-only: % on % is refused', tg_op, tg_table_name using errcode = '55000';
end $$;

create trigger journal_entries_append_only before update or delete on journal_entries
  for each statement execute function journal_refuse_change();
create trigger journal_entries_no_truncate before truncate on journal_entries
  for each statement execute function journal_refuse_change();
create trigger journal_postings_append_only before update or delete on journal_postings
  for each statement execute function journal_refuse_change();
create trigger journal_postings_no_truncate before truncate on journal_postings
  for each statement execute function journal_refuse_change();

-- Debits equal credits: after every statement that adds postings, each entry it touched has at least two
-- postings, all from this statement, summing to zero. An entry's postings are written by one statement,
-- so an entry can neither be left half-written nor be changed later by a posting added to it. The check
-- reads the statement's own rows and one index probe per entry, never the journal at large.
create function journal_check_balanced() returns trigger language plpgsql as $$
declare
  unbalanced bigint;
begin
  select n.entry_id into unbalanced
    from (select entry_id, count(*) as legs, sum(amount_centavos) as total from new_postings group by entry_id) n
   where n.total <> 0 or n.legs < 2
      or (select count(*) from journal_postings p where p.entry_id = n.entry_id) <> n.legs
   limit 1;
  if found then
    raise exception 'journal entry % is not balanced: its debits and credits differ, or it had postings already', unbalanced using errcode = '23514';
  end if;
  return null;
end $$;

create trigger journal_postings_balanced after insert on journal_postings
  referencing new table as new_postings
  for each statement execute function journal_check_balanced();

-- And no entry without postings: after every statement that adds entries, each of them has at least two
-- postings summing to zero — written by the same statement, as every entry's are (postEntries writes
-- both in one statement). One index probe per new entry.
create function journal_check_entries_posted() returns trigger language plpgsql as $$
declare
  bare bigint;
begin
  select n.id into bare
    from new_entries n
   cross join lateral (select count(*) as legs, coalesce(sum(p.amount_centavos), 0) as total
                         from journal_postings p where p.entry_id = n.id) as posted
   where posted.legs < 2 or posted.total <> 0
   limit 1;
  if found then
    raise exception 'journal entry % was written without balanced postings in the same statement', bare using errcode = '23514';
  end if;
  return null;
end $$;

create trigger journal_entries_posted after insert on journal_entries
  referencing new table as new_entries
  for each statement execute function journal_check_entries_posted();

-- Movements are immutable from now on: a transfer's movement shows the transfer's status through the view.
alter table movements drop column status;
alter table movements drop column updated_at;
create trigger movements_append_only before update or delete on movements
  for each statement execute function journal_refuse_change();

-- The movements of docs/api-reference.md#movements: payments are COMPLETED; a transfer's movement mirrors
-- its transfer.
create view movement_history as
  select m.id, m.business_code, m.type, m.amount_centavos, m.currency,
         case when m.type = 'payment' then 'COMPLETED' else t.status end as status,
         m.reference, m.snapshot, m.created_at
    from movements m
    left join transfers t on t.movement_id = m.id;

-- Backfill: the entries of every movement recorded before this migration, in time order. A transfer that
-- has settled or come back gets its second entry at its transfer's last change.
create temporary table backfill_entries on commit drop as
  select m.business_code, m.id as movement_id, date_trunc('milliseconds', m.created_at) as posted_at,
         case when m.type = 'payment' and mer.is_platform then 'activation_fee' when m.type = 'payment' then 'payment' else 'transfer' end as kind,
         abs(m.amount_centavos) as amount
    from movements m join merchants mer using (business_code)
  union all
  select t.business_code, t.movement_id, date_trunc('milliseconds', t.updated_at),
         case when t.status = 'COMPLETED' then 'transfer_settlement' else 'transfer_return' end,
         t.amount_centavos
    from transfers t where t.status in ('COMPLETED', 'FAILED', 'CANCELED');

-- Entry ids are drawn first, in time order, so that each entry and its postings go in one statement.
create temporary table backfill_ids on commit drop as
  select nextval(pg_get_serial_sequence('journal_entries', 'id')) as id, ordered.*
    from (select business_code, kind, movement_id, posted_at, amount from backfill_entries
           order by posted_at, movement_id, kind = 'transfer' desc) as ordered;

with entered as (
  insert into journal_entries (id, business_code, kind, movement_id, posted_at) overriding system value
  select id, business_code, kind, movement_id, posted_at from backfill_ids
)
insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
select entry_id, business_code, account, amount_centavos,
       sum(amount_centavos) over (partition by business_code, account order by entry_id),
       posted_at
  from (
    select e.id as entry_id, e.business_code, leg.account, leg.amount_centavos, e.posted_at
      from backfill_ids e
     cross join lateral (values
       ('available',    case e.kind when 'transfer' then -e.amount when 'transfer_return' then e.amount
                                    when 'transfer_settlement' then 0 else e.amount end),
       ('pending_out',  case e.kind when 'transfer' then e.amount when 'transfer_settlement' then -e.amount
                                    when 'transfer_return' then -e.amount else 0 end),
       ('qr_clearing',  case when e.kind in ('payment', 'activation_fee') then -e.amount else 0 end),
       ('ach_clearing', case when e.kind = 'transfer_settlement' then e.amount else 0 end)
     ) as leg(account, amount_centavos)
     where leg.amount_centavos <> 0
  ) legs;

update balances b
   set qr_clearing_centavos = coalesce((select sum(amount_centavos) from journal_postings p
                                         where p.business_code = b.business_code and p.account = 'qr_clearing'), 0),
       ach_clearing_centavos = coalesce((select sum(amount_centavos) from journal_postings p
                                          where p.business_code = b.business_code and p.account = 'ach_clearing'), 0);

insert into ledger_buckets (business_code, bucket_start, payments_count, payments_centavos, transfers_count, transfers_centavos,
                            returns_count, returns_centavos, fees_count, fees_centavos, closing_centavos)
select p.business_code, date_bin('15 minutes', p.posted_at, timestamptz '2000-01-01 00:00:00+00') as bucket_start,
       count(*) filter (where e.kind = 'payment'), coalesce(sum(p.amount_centavos) filter (where e.kind = 'payment'), 0),
       count(*) filter (where e.kind = 'transfer'), coalesce(sum(p.amount_centavos) filter (where e.kind = 'transfer'), 0),
       count(*) filter (where e.kind = 'transfer_return'), coalesce(sum(p.amount_centavos) filter (where e.kind = 'transfer_return'), 0),
       count(*) filter (where e.kind = 'activation_fee'), coalesce(sum(p.amount_centavos) filter (where e.kind = 'activation_fee'), 0),
       (array_agg(p.balance_after_centavos order by p.entry_id desc))[1]
  from journal_postings p join journal_entries e on e.id = p.entry_id
 where p.account = 'available'
 group by p.business_code, bucket_start;
