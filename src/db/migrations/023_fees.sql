-- 023: fees in the money model (docs/fees.md, docs/journal.md; contract §15.2). A fee is its own movement
-- (type `fee`, amount < 0) opened by its own journal entry (kind `fee`: available → revenue) in the
-- statement that posts the payment or transfer it is charged on. Each merchant gains a `revenue` account:
-- the platform's earnings from that merchant, so every entry stays balanced and the per-merchant sum of
-- accounts stays zero. A transfer that fails or is canceled gives its fee back in its return entry.
--
-- Additive for processes of the previous version: they post no fee, never read `revenue`, and write rows
-- the new defaults and constraints accept.

-- The revenue account's head, on the balance row every money change already locks. A credit balance: the
-- fees charged less those given back, never negative.
alter table balances add column revenue_centavos bigint not null default 0
  constraint balances_revenue_nonnegative check (revenue_centavos >= 0);

alter table journal_postings drop constraint journal_postings_account_valid;
alter table journal_postings add constraint journal_postings_account_valid
  check (account in ('available', 'pending_out', 'qr_clearing', 'ach_clearing', 'revenue'));

alter table journal_entries drop constraint journal_entries_kind_valid;
alter table journal_entries add constraint journal_entries_kind_valid check (kind in (
  'payment', 'activation_fee', 'fee', 'transfer', 'transfer_settlement', 'transfer_return', 'refund', 'refund_return'));
-- A fee movement is opened once, like every other.
drop index journal_entries_one_opening;
create unique index journal_entries_one_opening on journal_entries (movement_id)
  where kind in ('payment', 'activation_fee', 'fee', 'transfer', 'refund');

-- A fee movement names the movement it was charged on (`fee_of`, the same merchant's); a payment's or
-- transfer's movement carries its fee (0 when none), so a payment's `fee` and `net` read from its own row.
alter table movements add column fee_of bigint;
alter table movements add column fee_centavos bigint not null default 0
  constraint movements_fee_nonnegative check (fee_centavos >= 0);
alter table movements add constraint movements_fee_of_fkey
  foreign key (business_code, fee_of) references movements (business_code, id);
-- At most one fee per movement: a retried statement can never charge twice.
create unique index movements_one_fee on movements (fee_of) where fee_of is not null;
alter table movements drop constraint movements_type_valid;
alter table movements add constraint movements_type_valid check (type in ('payment', 'transfer', 'refund', 'fee'));
alter table movements drop constraint movements_amount_sign;
alter table movements add constraint movements_amount_sign check (
  (type = 'payment' and amount_centavos > 0) or (type in ('transfer', 'refund', 'fee') and amount_centavos < 0));
-- A fee is charged on something, and only a fee is.
alter table movements add constraint movements_fee_of_only_fees check ((type = 'fee') = (fee_of is not null));

alter table movement_days drop constraint movement_days_type_valid;
alter table movement_days add constraint movement_days_type_valid check (type in ('payment', 'transfer', 'refund', 'fee'));

-- A transfer's fee mirrors its transfer, so it comes back with it; a payment's fee is final. The fee of a
-- payment or transfer movement, and what a fee movement was charged on (its payment's or transfer's id),
-- come with each movement, for the API's `fee`, `net` and `details`.
create or replace view movement_history as
  select m.id, m.business_code, m.type, m.amount_centavos, m.currency,
         case m.type when 'payment' then 'COMPLETED' when 'transfer' then t.status when 'refund' then r.status
                     else coalesce(t.status, 'COMPLETED') end as status,
         m.reference, m.snapshot, m.created_at,
         m.fee_centavos,
         case when m.type <> 'fee' then null when t.id is not null then 'transfer' else 'payment' end as charged_on,
         case when m.type = 'fee' then coalesce(t.id, qp.id) end as charged_on_id
    from movements m
    left join transfers t on t.movement_id = coalesce(m.fee_of, m.id)
    left join refunds r on r.movement_id = m.id
    left join qr_payments qp on m.type = 'fee' and qp.movement_id = m.fee_of;

-- The revenue account's changes per 15-minute bucket, beside `available`'s (the revenue report reads
-- these, never the journal): fees charged count +1, transfer fees given back −1.
alter table ledger_buckets add column revenue_count integer not null default 0;
alter table ledger_buckets add column revenue_centavos bigint not null default 0;
-- The report reads the range's buckets with fee activity, of every merchant: a partial index by time.
create index ledger_buckets_with_revenue on ledger_buckets (bucket_start, business_code)
  include (revenue_count, revenue_centavos) where revenue_count <> 0 or revenue_centavos <> 0;

-- The fee of a payment and of a transfer, on their own rows (the API shows `fee` and `net` from them).
alter table qr_payments add column fee_centavos bigint not null default 0
  constraint qr_payments_fee_range check (fee_centavos between 0 and amount_centavos);
alter table transfers add column fee_centavos bigint not null default 0
  constraint transfers_fee_nonnegative check (fee_centavos >= 0);
-- Who asked for a transfer: the merchant through the API (or console), or its payout schedule.
alter table transfers add column origin text not null default 'api'
  constraint transfers_origin_valid check (origin in ('api', 'schedule'));
