-- 008: refunds and late payments (docs/api-reference.md#refunds). A refund debits `available` with a `refund` movement in
-- the transaction that creates it and goes back to the payer through the payment rail; a failed refund
-- returns its funds. The payment row counts what is refunded, and a CHECK keeps that within the payment's
-- amount, so two concurrent refunds can never give back more than was paid.

alter table qr_payments add column amount_refunded_centavos bigint not null default 0;
-- A late payment: money a payer's bank sent for a QR that could no longer be paid (docs/api-reference.md#late-payments).
-- It is recorded, refunded in full in the same transaction, and never counts as the QR's payment.
alter table qr_payments add column late boolean not null default false;
drop index qr_payments_single_use_once;
create unique index qr_payments_single_use_once on qr_payments (qr_id) where single_use and not late;
-- the payment of a movement (the journal's CSV export names it)
create index qr_payments_by_movement on qr_payments (movement_id);
alter table qr_payments add constraint qr_payments_refunds_within_amount
  check (amount_refunded_centavos between 0 and amount_centavos);

create table refunds (
  id text primary key constraint refunds_id_format check (id ~ '^rf_[0-9A-Za-z]{22}$'),
  -- creation order: the tie-break of lists when two refunds share a created_at
  sequence bigint generated always as identity constraint refunds_sequence_unique unique,
  business_code bigint not null references merchants (business_code),
  payment_id bigint not null references qr_payments (id),
  qr_id uuid not null references simple_qrs (id),
  -- the `refund` movement written by the debit
  movement_id bigint not null constraint refunds_movement_unique unique references movements (id),
  amount_centavos bigint not null constraint refunds_amount_positive check (amount_centavos > 0),
  currency text not null default 'BOB' constraint refunds_currency_valid check (currency = 'BOB'),
  status text not null constraint refunds_status_valid check (status in ('PENDING', 'COMPLETED', 'FAILED')),
  reason text not null constraint refunds_reason_valid
    check (reason in ('requested_by_customer', 'duplicate', 'fraudulent', 'other', 'qr_not_payable')),
  description text constraint refunds_description_length check (char_length(description) <= 140),
  failure_code text constraint refunds_failure_code_when_failed check ((status = 'FAILED') = (failure_code is not null)),
  -- the rail's own reference once it took the refund
  rail_reference text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  completed_at timestamptz constraint refunds_completed_at_when_completed check ((status = 'COMPLETED') = (completed_at is not null))
);
create index refunds_by_merchant on refunds (business_code, created_at desc, sequence desc);
create index refunds_of_payment on refunds (payment_id);
-- what the rail worker looks for: refunds still PENDING, oldest first
create index refunds_pending_by_age on refunds (updated_at, sequence) where status = 'PENDING';

alter table movements drop constraint movements_type_valid;
alter table movements add constraint movements_type_valid check (type in ('payment', 'transfer', 'refund'));
alter table movements drop constraint movements_amount_sign;
alter table movements add constraint movements_amount_sign check (
  (type = 'payment' and amount_centavos > 0) or (type in ('transfer', 'refund') and amount_centavos < 0));
alter table movement_counters drop constraint movement_counters_type_valid;
alter table movement_counters add constraint movement_counters_type_valid check (type in ('payment', 'transfer', 'refund'));

-- A refund's movement mirrors its refund, as a transfer's mirrors its transfer.
create or replace view movement_history as
  select m.id, m.business_code, m.type, m.amount_centavos, m.currency,
         case m.type when 'payment' then 'COMPLETED' when 'transfer' then t.status else r.status end as status,
         m.reference, m.snapshot, m.created_at
    from movements m
    left join transfers t on t.movement_id = m.id
    left join refunds r on r.movement_id = m.id;
