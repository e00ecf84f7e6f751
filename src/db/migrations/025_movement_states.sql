-- 025: the ledger stops reading the tables of the capabilities above it (docs/architecture.md, "Layers in
-- SQL"; docs/journal.md, "Movement states"). movement_history took a transfer's or refund's status, and a
-- fee's payment or transfer, by joining transfers, refunds and qr_payments: the ledger, which they all
-- import, depended on them in SQL. Now the ledger keeps what the history shows beside the immutable
-- movement in a table of its own, movement_states, and each of those capabilities keeps it current with a
-- trigger on its own table — the higher module writing the lower one's table, the direction imports go.
-- A trigger, not a call in each store: the state changes in the statement that changes the status (a
-- batch upload's one UPDATE of many transfers too), so the two can never be seen apart.
--
-- Additive for processes of the previous version during a rolling deploy: they write transfers, refunds
-- and payments as before and the triggers record the states for them; the view keeps its columns.

-- One row per payment, transfer or refund movement: the status the API shows for it and the id of what it
-- records (the payment's, the transfer's, the refund's — a refund's id is text, so each kind has its
-- column, typed as its table's). A fee movement has none: it shows the state of the movement it was charged
-- on (movements.fee_of). Payments are final, so their state says COMPLETED from the start.
create table movement_states (
  movement_id bigint primary key constraint movement_states_movement_fkey references movements (id),
  status text not null constraint movement_states_status_valid
    check (status in ('PENDING', 'IN_TRANSIT', 'COMPLETED', 'FAILED', 'CANCELED')),
  payment_id bigint,
  transfer_id bigint,
  refund_id text,
  constraint movement_states_one_subject check (num_nonnulls(payment_id, transfer_id, refund_id) = 1),
  constraint movement_states_payments_completed check (payment_id is null or status = 'COMPLETED')
);

-- Backfill: the state of every movement recorded so far, as the view read it.
insert into movement_states (movement_id, status, payment_id) select movement_id, 'COMPLETED', id from qr_payments;
insert into movement_states (movement_id, status, transfer_id) select movement_id, status, id from transfers;
insert into movement_states (movement_id, status, refund_id) select movement_id, status, id from refunds;

-- The capabilities' triggers. Inserts are statement-level, one INSERT of the statement's new rows however
-- many a grouped POST /transfers writes; status changes are row-level, skipped without a call for any
-- update that leaves the status alone (transition tables cannot go with UPDATE OF a column).

-- qr: a payment (late ones too: each has its movement) is recorded COMPLETED.
create function qr_payments_movement_states() returns trigger language plpgsql as $$
begin
  insert into movement_states (movement_id, status, payment_id)
  select movement_id, 'COMPLETED', id from new_payments;
  return null;
end $$;
create trigger qr_payments_movement_states after insert on qr_payments
  referencing new table as new_payments
  for each statement execute function qr_payments_movement_states();

-- transfers: created PENDING (or whatever the row says), then each change of status.
create function transfers_movement_states_insert() returns trigger language plpgsql as $$
begin
  insert into movement_states (movement_id, status, transfer_id)
  select movement_id, status, id from new_transfers;
  return null;
end $$;
create trigger transfers_movement_states_insert after insert on transfers
  referencing new table as new_transfers
  for each statement execute function transfers_movement_states_insert();

create function transfers_movement_states_update() returns trigger language plpgsql as $$
begin
  update movement_states set status = new.status where movement_id = new.movement_id;
  return null;
end $$;
create trigger transfers_movement_states_update after update of status on transfers
  for each row when (old.status is distinct from new.status)
  execute function transfers_movement_states_update();

-- refunds: likewise.
create function refunds_movement_states_insert() returns trigger language plpgsql as $$
begin
  insert into movement_states (movement_id, status, refund_id)
  select movement_id, status, id from new_refunds;
  return null;
end $$;
create trigger refunds_movement_states_insert after insert on refunds
  referencing new table as new_refunds
  for each statement execute function refunds_movement_states_insert();

create function refunds_movement_states_update() returns trigger language plpgsql as $$
begin
  update movement_states set status = new.status where movement_id = new.movement_id;
  return null;
end $$;
create trigger refunds_movement_states_update after update of status on refunds
  for each row when (old.status is distinct from new.status)
  execute function refunds_movement_states_update();

-- The movements of docs/api-reference.md#movements, from the ledger's tables alone, column for column as
-- 023 defined them: a payment is COMPLETED; a transfer or refund shows its state; a fee shows the state of
-- what it was charged on (a transfer's fee comes back with it, a payment's is final) and names it.
create or replace view movement_history as
  select m.id, m.business_code, m.type, m.amount_centavos, m.currency,
         case m.type when 'payment' then 'COMPLETED' when 'fee' then coalesce(s.status, 'COMPLETED') else s.status end as status,
         m.reference, m.snapshot, m.created_at,
         m.fee_centavos,
         case when m.type <> 'fee' then null when s.transfer_id is not null then 'transfer' else 'payment' end as charged_on,
         case when m.type = 'fee' then coalesce(s.transfer_id, s.payment_id) end as charged_on_id
    from movements m
    left join movement_states s on s.movement_id = coalesce(m.fee_of, m.id);
