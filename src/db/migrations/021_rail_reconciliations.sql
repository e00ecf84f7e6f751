-- 021: reconciliation of a bank rail's day with the journal (docs/rails.md, "Reconciliation"; contract §14.5).
-- The bank capability's tables (src/bank/reconciliation-store.ts).
--
-- Additive, like 016–019: processes of the previous version never read or write these tables or indexes.

-- Each reconciliation run that got the bank's answers: by the daily job, or asked by an operator (the API,
-- the CLI). /metrics reports the breaks of the latest run of the latest day reconciled, read from here so
-- every process reports the same.
create table rail_reconciliations (
  id bigint generated always as identity primary key,
  rail text not null constraint rail_reconciliations_rail_valid check (rail in ('sandbox', 'baneco')),
  business_date date not null,
  origin text not null constraint rail_reconciliations_origin_valid check (origin in ('daily', 'operator')),
  status text not null constraint rail_reconciliations_status_valid check (status in ('balanced', 'breaks')),
  payments_bank integer not null constraint rail_reconciliations_payments_bank_range check (payments_bank >= 0),
  payments_ours integer not null constraint rail_reconciliations_payments_ours_range check (payments_ours >= 0),
  transfers_bank integer not null constraint rail_reconciliations_transfers_bank_range check (transfers_bank >= 0),
  transfers_ours integer not null constraint rail_reconciliations_transfers_ours_range check (transfers_ours >= 0),
  -- how many breaks of each kind: {"missing_payment": 2, …}, kinds with none left out
  break_counts jsonb not null constraint rail_reconciliations_break_counts_object check (jsonb_typeof(break_counts) = 'object'),
  -- the breaks as the run found them, amounts in centavos: [{kind, reference, ours, bank}]
  breaks jsonb not null constraint rail_reconciliations_breaks_array check (jsonb_typeof(breaks) = 'array'),
  created_at timestamptz not null,
  constraint rail_reconciliations_status_agrees check ((status = 'balanced') = (jsonb_array_length(breaks) = 0))
);
-- the latest run of the latest day, per rail (/metrics)
create index rail_reconciliations_latest on rail_reconciliations (rail, business_date desc, id desc);

-- The daily job's days: claimed by one process at a time (claimed_until, a lease that is also the wait
-- before a day the bank did not answer is tried again), done once its run is stored.
create table rail_reconciliation_days (
  rail text not null constraint rail_reconciliation_days_rail_valid check (rail in ('sandbox', 'baneco')),
  business_date date not null,
  claimed_until timestamptz not null,
  reconciliation_id bigint constraint rail_reconciliation_days_run_fkey references rail_reconciliations (id),
  primary key (rail, business_date)
);

-- What reconciliation reads of the other capabilities' tables, without reading them whole: a day's bank
-- payments (by paid_at), and which transfer item the bank's debit ids of the account history belong to.
create index qr_payments_rail_paid_at on qr_payments (rail, paid_at) where rail_reference is not null;
create index transfer_batch_items_by_debit_reference on transfer_batch_items (debit_reference) where debit_reference is not null;
