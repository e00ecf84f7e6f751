-- 005: partner onboarding intents (docs/api-reference.md#onboarding) with the registration they collect, and the merchant profile and payout account an intent creates.

create table onboarding_intents (
  code text primary key constraint onboarding_intents_code_format check (code ~ '^onb_[0-9A-Za-z]{22}$'),
  partner_id bigint not null references partners (id),
  -- the unguessable token of the hosted flow's URL (32 base62 characters), distinct from the code
  token text not null constraint onboarding_intents_token_format check (token ~ '^[0-9A-Za-z]{32}$'),
  -- the recorded status; reads apply expiry on top of it (an open row past expires_at reads expired)
  status text not null default 'open'
    constraint onboarding_intents_status_valid check (status in ('open', 'completed', 'cancelled', 'expired')),
  success_url text constraint onboarding_intents_success_url_length check (success_url is null or char_length(success_url) <= 2048),
  cancel_url text constraint onboarding_intents_cancel_url_length check (cancel_url is null or char_length(cancel_url) <= 2048),
  metadata jsonb not null default '{}'::jsonb constraint onboarding_intents_metadata_object check (jsonb_typeof(metadata) = 'object'),
  -- the registration form, stored when submitted (the payout account number in full here only)
  legal_name text,
  trade_name text,
  tax_id text constraint onboarding_intents_tax_id_format check (tax_id is null or tax_id ~ '^[0-9]{5,15}$'),
  email text,
  phone text,
  city text,
  mcc text constraint onboarding_intents_mcc_format check (mcc is null or mcc ~ '^[0-9]{4}$'),
  payout_bank_code bigint,
  payout_account_number text,
  payout_account_holder text,
  submitted_at timestamptz,
  -- SHA-256 of the flow cookie of the browser that submitted the form: only it may open the done page
  browser_binding_hash text,
  -- the activation-fee QR (owned by the platform merchant); null when the fee is 0
  activation_qr_id uuid,
  business_code bigint references merchants (business_code),
  -- when the done page showed the first API key (once)
  api_key_issued_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  expired_at timestamptz,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  constraint onboarding_intents_token_unique unique (token),
  -- one merchant per intent and one intent per merchant
  constraint onboarding_intents_one_merchant unique (business_code),
  constraint onboarding_intents_activation_qr_unique unique (activation_qr_id),
  constraint onboarding_intents_completed_has_merchant check ((status = 'completed') = (business_code is not null and completed_at is not null)),
  constraint onboarding_intents_cancelled_has_time check ((status = 'cancelled') = (cancelled_at is not null)),
  constraint onboarding_intents_expired_has_time check ((status = 'expired') = (expired_at is not null)),
  constraint onboarding_intents_submission_complete check (
    submitted_at is null or (legal_name is not null and trade_name is not null and tax_id is not null and email is not null
      and phone is not null and city is not null and payout_bank_code is not null and payout_account_number is not null
      and payout_account_holder is not null and browser_binding_hash is not null)),
  constraint onboarding_intents_key_after_completion check (api_key_issued_at is null or status = 'completed')
);
create index onboarding_intents_by_partner on onboarding_intents (partner_id, created_at desc);
create index onboarding_intents_expiring on onboarding_intents (expires_at) where status = 'open';

-- What an onboarded merchant registered beyond its name, city and category code.
create table merchant_profiles (
  business_code bigint primary key references merchants (business_code),
  legal_name text not null constraint merchant_profiles_legal_name_length check (char_length(legal_name) between 1 and 200),
  tax_id text not null constraint merchant_profiles_tax_id_format check (tax_id ~ '^[0-9]{5,15}$'),
  email text not null constraint merchant_profiles_email_length check (char_length(email) between 3 and 254),
  phone text not null constraint merchant_profiles_phone_length check (char_length(phone) between 7 and 20),
  created_at timestamptz not null
);

-- The bank account a merchant is paid out to. The full number is kept here only; everything shown is masked.
create table merchant_payout_accounts (
  business_code bigint primary key references merchants (business_code),
  bank_code bigint not null,
  account_number text not null constraint merchant_payout_accounts_number_format check (account_number ~ '^[0-9-]{1,34}$' and account_number ~ '[0-9]'),
  account_holder text not null constraint merchant_payout_accounts_holder_length check (char_length(account_holder) between 1 and 100),
  created_at timestamptz not null
);
