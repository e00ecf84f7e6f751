-- 002: simple QRs (pay-in requests) and their payments; a single-use QR is paid once, enforced by a guarded update and a partial unique index.

create table simple_qrs (
  id uuid primary key,
  business_code bigint not null references merchants (business_code),
  -- the unguessable token of the hosted page and of the EMV reference label (22 base62 characters)
  pay_token text not null constraint simple_qrs_pay_token_format check (pay_token ~ '^[0-9A-Za-z]{22}$'),
  -- the recorded status; reads apply expiry on top of it (an ACTIVE row past expires_at reads CANCELED)
  status text not null default 'ACTIVE' constraint simple_qrs_status_valid check (status in ('ACTIVE', 'PAID', 'CANCELED')),
  amount_centavos bigint constraint simple_qrs_amount_range check (amount_centavos is null or amount_centavos between 10 and 10000000),
  currency text not null default 'BOB' constraint simple_qrs_currency_valid check (currency = 'BOB'),
  modify_amount boolean not null,
  is_multi_use boolean not null,
  description text constraint simple_qrs_description_length check (description is null or char_length(description) <= 140),
  -- the expiry as a wall-clock time in SERVICE_TIMEZONE at creation, and the instant it names
  qr_expiration text,
  expires_at timestamptz,
  -- an internal purpose whose registered handler runs inside each payment's transaction (onboarding fees)
  purpose text constraint simple_qrs_purpose_format check (purpose is null or purpose ~ '^[a-z_]{1,40}$'),
  qr_payload text not null,
  qr_image text not null,
  payments_count integer not null default 0 constraint simple_qrs_payments_count_nonnegative check (payments_count >= 0),
  amount_collected_centavos bigint not null default 0 constraint simple_qrs_amount_collected_nonnegative check (amount_collected_centavos >= 0),
  last_payment_id bigint,
  paid_at timestamptz,
  canceled_at timestamptz,
  cancel_reason text constraint simple_qrs_cancel_reason_valid check (cancel_reason is null or cancel_reason in ('merchant', 'expired')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint simple_qrs_fixed_amount_present check (modify_amount or amount_centavos is not null),
  constraint simple_qrs_expiration_pair check ((qr_expiration is null) = (expires_at is null)),
  constraint simple_qrs_paid_once check (status <> 'PAID' or (not is_multi_use and payments_count = 1 and paid_at is not null)),
  constraint simple_qrs_single_use_count check (is_multi_use or payments_count <= 1),
  constraint simple_qrs_canceled_has_reason check ((status = 'CANCELED') = (cancel_reason is not null and canceled_at is not null))
);
create unique index simple_qrs_pay_token_unique on simple_qrs (pay_token);
create index simple_qrs_by_merchant on simple_qrs (business_code, created_at desc, id desc);
create index simple_qrs_expiring on simple_qrs (expires_at) where status = 'ACTIVE' and expires_at is not null;

-- One row per payment. The payer's full account number is kept here only; everything shown is masked.
create table qr_payments (
  id bigint generated always as identity primary key,
  qr_id uuid not null references simple_qrs (id),
  business_code bigint not null references merchants (business_code),
  -- true for a payment of a single-use QR: the partial unique index below allows one per QR
  single_use boolean not null,
  amount_centavos bigint not null constraint qr_payments_amount_positive check (amount_centavos > 0),
  currency text not null default 'BOB' constraint qr_payments_currency_valid check (currency = 'BOB'),
  status text not null default 'COMPLETED' constraint qr_payments_status_valid check (status in ('COMPLETED')),
  source_bank text not null,
  account_number text not null,
  account_titular text not null,
  movement_id bigint not null references movements (id),
  paid_at timestamptz not null
);
create unique index qr_payments_single_use_once on qr_payments (qr_id) where single_use;
create index qr_payments_of_qr on qr_payments (qr_id, id desc);
