-- 017: what a bank's pay-in needs beside the QRs and payments (docs/rails.md, "Pay-in through a bank").
--
-- Additive, like 012, 014, 015 and 016: processes of the previous version never read or write these
-- tables or the new column.

-- Every call to a bank, one row per HTTP exchange: which rail, which operation, how it ended, its HTTP
-- status and latency. Nothing else: no body, no secret, no account number.
create table rail_attempts (
  id bigint generated always as identity primary key,
  rail text not null constraint rail_attempts_rail_valid check (rail in ('sandbox', 'baneco')),
  operation text not null constraint rail_attempts_operation_length check (char_length(operation) between 1 and 40),
  outcome text not null constraint rail_attempts_outcome_valid check (outcome in ('ok', 'refused', 'unknown', 'unauthorized')),
  http_status integer constraint rail_attempts_http_status_range check (http_status is null or http_status between 100 and 599),
  latency_ms integer not null constraint rail_attempts_latency_range check (latency_ms >= 0),
  created_at timestamptz not null
);
create index rail_attempts_created_at on rail_attempts (created_at);

-- Bank QRs to cancel at the bank (a merchant's cancel, an expiry, a QR issued for a request that lost its
-- idempotency key to another): repeated every poll until the bank answers at all.
create table rail_qr_cancels (
  rail text not null constraint rail_qr_cancels_rail_valid check (rail in ('sandbox', 'baneco')),
  rail_reference text not null constraint rail_qr_cancels_reference_length check (char_length(rail_reference) between 1 and 100),
  requested_at timestamptz not null,
  next_try_at timestamptz not null,
  primary key (rail, rail_reference)
);
create index rail_qr_cancels_due on rail_qr_cancels (next_try_at);

-- Money a bank reports that credits no merchant: a payment for a QR the service does not know, in a
-- currency other than BOB, or out of shape. Kept once per bank payment for reconciliation (§14.5).
create table bank_unmatched_credits (
  id bigint generated always as identity primary key,
  rail text not null constraint bank_unmatched_credits_rail_valid check (rail in ('sandbox', 'baneco')),
  -- The bank's payment id, or for an entry whose id could not be read, a digest of what could.
  dedupe_key text not null constraint bank_unmatched_credits_key_length check (char_length(dedupe_key) between 1 and 200),
  rail_reference text constraint bank_unmatched_credits_reference_length check (rail_reference is null or char_length(rail_reference) between 1 and 100),
  qr_reference text constraint bank_unmatched_credits_qr_length check (qr_reference is null or char_length(qr_reference) between 1 and 100),
  currency text constraint bank_unmatched_credits_currency_length check (currency is null or char_length(currency) between 1 and 10),
  amount_centavos bigint,
  problem text not null constraint bank_unmatched_credits_problem_length check (char_length(problem) between 1 and 500),
  first_seen_at timestamptz not null,
  constraint bank_unmatched_credits_once unique (rail, dedupe_key)
);

-- The daily sweep of a bank's paid list, once per business day.
create table bank_sweeps (
  rail text not null constraint bank_sweeps_rail_valid check (rail in ('sandbox', 'baneco')),
  business_date date not null,
  swept_at timestamptz not null,
  primary key (rail, business_date)
);

-- The status poll's lease: when a bank QR was last read (or claimed for reading). The poll reads the ACTIVE
-- bank QRs and those closed in the last minutes; each has its own partial index, so an idle poll costs two
-- index probes however many bank QRs were ever issued (a single index over every bank QR made each tick
-- read the whole history).
alter table simple_qrs add column rail_checked_at timestamptz;
create index simple_qrs_rail_poll_active on simple_qrs (rail, rail_checked_at nulls first)
  where rail_reference is not null and status = 'ACTIVE';
create index simple_qrs_rail_poll_closed on simple_qrs (rail, (coalesce(canceled_at, paid_at)))
  where rail_reference is not null and status <> 'ACTIVE';

-- A bank's QR keeps the bank's image unchanged; its payload is the text that image encodes, decoded once,
-- or null when it cannot be decoded (docs/api-reference.md, qr_payload).
alter table simple_qrs alter column qr_payload drop not null;
