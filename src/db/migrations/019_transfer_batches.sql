-- 019: transfers paid out in batches (docs/rails.md, "Pay-out through a bank"; contract §14.4).
--
-- A bank rail takes transfers as batches ("planillas"). A batch and its items are written, in the
-- transaction that moves their transfers to IN_TRANSIT, before the bank is called; the upload's answer is
-- applied in a second transaction. An upload whose answer never came is never sent again by the service:
-- the primary key of transfer_batch_items puts a transfer in one batch, ever.
--
-- Additive, like 016–018: processes of the previous version never read or write these tables or the new
-- column (they never ran a bank rail's pay-out).

create table transfer_batches (
  id bigint generated always as identity primary key,
  rail text not null constraint transfer_batches_rail_valid check (rail in ('sandbox', 'baneco')),
  -- uploading: written, the upload's answer not applied yet (a process that died meanwhile leaves it so;
  -- the worker marks it unknown after the call's timeout). uploaded: the bank took it (bank_batch_id).
  -- refused: the bank turned it away, its transfers failed. unknown: no answer; reconciliation reports it
  -- until callbacks or the operator settle its transfers.
  status text not null constraint transfer_batches_status_valid check (status in ('uploading', 'uploaded', 'refused', 'unknown')),
  item_count integer not null constraint transfer_batches_item_count_range check (item_count between 1 and 500),
  amount_centavos bigint not null constraint transfer_batches_amount_positive check (amount_centavos > 0),
  bank_batch_id text constraint transfer_batches_bank_batch_id_length check (bank_batch_id is null or char_length(bank_batch_id) between 1 and 40),
  -- the bank's refusal, or what the missing answer was (timeout, connection…): cleaned text, never a secret
  message text constraint transfer_batches_message_length check (message is null or char_length(message) <= 500),
  -- the operator's word on an unknown batch (POST /admin/v1/rails/batches/{batchId}/resolve)
  resolution text constraint transfer_batches_resolution_valid check (resolution is null or resolution in ('COMPLETED', 'FAILED')),
  resolved_at timestamptz constraint transfer_batches_resolved_with_resolution check ((resolution is null) = (resolved_at is null)),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint transfer_batches_bank_id_when_uploaded check (status <> 'uploaded' or bank_batch_id is not null)
);
-- what the worker and reconciliation look for: batches still waiting for an answer, and unknown ones
create index transfer_batches_open on transfer_batches (created_at, id) where status in ('uploading', 'unknown');

create table transfer_batch_items (
  -- one batch per transfer, ever: a lost answer is never followed by a second upload of the same transfer
  transfer_id bigint primary key constraint transfer_batch_items_transfer_fkey references transfers (id),
  batch_id bigint not null constraint transfer_batch_items_batch_fkey references transfer_batches (id),
  -- the bank's first word on the item (notifyStatus: ACEP → accepted, RECH → rejected), and when it came
  outcome text constraint transfer_batch_items_outcome_valid check (outcome is null or outcome in ('accepted', 'rejected')),
  outcome_at timestamptz constraint transfer_batch_items_outcome_at check ((outcome is null) = (outcome_at is null)),
  -- the bank's transactionIdDebit (in the account history) and transactionIdCredit
  debit_reference text constraint transfer_batch_items_debit_length check (debit_reference is null or char_length(debit_reference) between 1 and 40),
  credit_reference text constraint transfer_batch_items_credit_length check (credit_reference is null or char_length(credit_reference) between 1 and 100),
  -- a later word that contradicts the first: changes nothing, reported by reconciliation (conflicting_status)
  conflicting_outcome text constraint transfer_batch_items_conflict_valid
    check (conflicting_outcome is null or (outcome is not null and conflicting_outcome <> outcome)),
  conflict_at timestamptz constraint transfer_batch_items_conflict_at check ((conflicting_outcome is null) = (conflict_at is null))
);
create index transfer_batch_items_of_batch on transfer_batch_items (batch_id);
create index transfer_batch_items_by_outcome_at on transfer_batch_items (outcome_at) where outcome is not null;
create index transfer_batch_items_conflicts on transfer_batch_items (conflict_at) where conflicting_outcome is not null;

-- The bank's reason for a failed transfer (RECH's descriptionStatus, a refused upload's message): shown as
-- `failure_message`; null unless the bank gave one.
alter table transfers add column failure_message text
  constraint transfers_failure_message_when_failed check (failure_message is null or (status = 'FAILED' and char_length(failure_message) between 1 and 500));
