-- 024: scheduled payouts (docs/payouts.md; contract §15.3). A merchant's payout schedule, and one run record
-- per merchant and scheduled business day, whose primary key is what makes a scheduled transfer happen at
-- most once per merchant and day whatever restarts, retries or several workers do: the run is written in
-- the transaction that creates the transfer, and the database refuses a second run of the same day.
--
-- Additive: processes of the previous version never read or write these tables.

-- At most one schedule per merchant. A merchant onboarded with a payout account gets one at completion
-- (`manual`, that account as destination); one without a row reads as `manual` with the onboarding payout
-- account, if any (merchants from before this migration).
create table payout_schedules (
  business_code bigint primary key references merchants (business_code),
  -- `interval` is a type name in SQL, so the column carries the longer name
  schedule_interval text not null
    constraint payout_schedules_interval_valid check (schedule_interval in ('manual', 'daily', 'weekly')),
  -- ISO weekday, 1 = Monday … 7 = Sunday (extract(isodow …)): weekly schedules only
  weekday smallint constraint payout_schedules_weekday_range check (weekday between 1 and 7),
  -- the destination, as transfers keep theirs: the full number here only; everything shown is masked
  bank_code bigint not null,
  account_number text not null
    constraint payout_schedules_account_number_format check (account_number ~ '^[0-9-]{1,34}$' and account_number ~ '[0-9]'),
  account_titular text not null
    constraint payout_schedules_account_titular_length check (char_length(account_titular) between 1 and 100),
  minimum_centavos bigint not null default 1000
    constraint payout_schedules_minimum_range check (minimum_centavos between 10 and 2000000),
  keep_centavos bigint not null default 0
    constraint payout_schedules_keep_range check (keep_centavos between 0 and 100000000),
  -- the first business day (SERVICE_TIMEZONE) whose PAYOUT_TIME the schedule pays out at: the day of the
  -- next PAYOUT_TIME when it was switched on or its days changed, so no day before that is ever made up
  effective_from date,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint payout_schedules_weekday_with_weekly check ((schedule_interval = 'weekly') = (weekday is not null)),
  constraint payout_schedules_active_has_start check ((schedule_interval = 'manual') = (effective_from is null))
);
-- the job's candidates: schedules that are switched on
create index payout_schedules_active on payout_schedules (business_code) where schedule_interval <> 'manual';

-- What each scheduled day's run did for a merchant, whether or not it paid out. Days missed while no worker
-- ran are recorded as `missed`, covered by the run of the latest of them (the one that paid), so they are
-- never made up again.
create table payout_runs (
  business_code bigint not null references merchants (business_code),
  business_date date not null,
  outcome text not null constraint payout_runs_outcome_valid check (outcome in (
    'transferred',    -- the day's transfer (transfer_id)
    'below_minimum',  -- available − keep − transfer fee was under the schedule's minimum
    'suspended',      -- the merchant was suspended
    'no_ach_module',  -- the merchant no longer has the ACH module
    'unknown_bank',   -- the destination's bank is no longer in the configured list (BANKS_FILE)
    'missed')),       -- no run happened that day; made up by covered_by's
  transfer_id bigint constraint payout_runs_transfer_fkey references transfers (id),
  covered_by date,
  recorded_at timestamptz not null,
  -- at most one run, hence at most one scheduled transfer, per merchant and day
  constraint payout_runs_one_per_day primary key (business_code, business_date),
  constraint payout_runs_one_per_transfer unique (transfer_id),
  constraint payout_runs_transfer_when_transferred check ((outcome = 'transferred') = (transfer_id is not null)),
  constraint payout_runs_missed_covered check ((outcome = 'missed') = (covered_by is not null and covered_by > business_date))
);
