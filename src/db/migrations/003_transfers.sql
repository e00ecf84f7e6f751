-- 003: transfers (ACH pay-out): one row per transfer with its full destination, its lifecycle status and its debit movement.
create table transfers (
  id bigint generated always as identity primary key,
  business_code bigint not null references merchants (business_code),
  -- the PENDING `transfer` movement written by the debit; settled in place on every status change
  movement_id bigint not null constraint transfers_movement_unique unique
    constraint transfers_movement_fkey references movements (id),
  status text not null constraint transfers_status_valid
    check (status in ('PENDING', 'IN_TRANSIT', 'COMPLETED', 'FAILED', 'CANCELED')),
  amount_centavos bigint not null constraint transfers_amount_range check (amount_centavos between 10 and 2000000),
  currency text not null default 'BOB' constraint transfers_currency_valid check (currency = 'BOB'),
  reference text constraint transfers_reference_length check (char_length(reference) <= 50),
  destination_type text not null default 'bank_account' constraint transfers_destination_type_valid
    check (destination_type = 'bank_account'),
  bank_code integer not null,
  -- the only place the full account number is kept: responses, events, movements and logs get it masked
  account_number text not null constraint transfers_account_number_format
    check (account_number ~ '^[0-9-]{1,34}$' and account_number ~ '[0-9]'),
  account_titular text not null constraint transfers_account_titular_length
    check (char_length(account_titular) between 1 and 100),
  failure_code text constraint transfers_failure_code_when_failed check ((status = 'FAILED') = (failure_code is not null)),
  -- the rail's own reference once the transfer was submitted
  rail_reference text,
  created_at timestamptz not null,
  -- the time of the last status change (a transfer changes only through its lifecycle)
  updated_at timestamptz not null
);
create index transfers_by_merchant on transfers (business_code, created_at desc, id desc);
create index transfers_by_merchant_status on transfers (business_code, status, created_at desc, id desc);
-- what a rail worker looks for: open transfers by the time of their last change
create index transfers_open_by_age on transfers (updated_at, id) where status in ('PENDING', 'IN_TRANSIT');
