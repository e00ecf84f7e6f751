-- 001: partners, merchants and API keys; the ledger (balances, movements, counters); the event outbox;
-- stored idempotency outcomes; and the platform's own merchant account that collects activation fees.
-- Money is bigint centavos; enumerations are text with named CHECKs (docs/architecture.md, habit 10).

create table partners (
  id bigint generated always as identity primary key,
  name text not null constraint partners_name_length check (char_length(name) between 1 and 200),
  created_at timestamptz not null default now()
);

create sequence merchants_business_code_seq start with 1001;

create table merchants (
  business_code bigint primary key default nextval('merchants_business_code_seq'),
  name text not null constraint merchants_name_length check (char_length(name) between 1 and 200),
  city text not null default 'La Paz' constraint merchants_city_length check (char_length(city) between 1 and 100),
  mcc text not null default '5999' constraint merchants_mcc_format check (mcc ~ '^[0-9]{4}$'),
  status text not null default 'active' constraint merchants_status_valid check (status in ('active', 'suspended')),
  ach_enabled boolean not null default false,
  partner_id bigint references partners (id),
  is_platform boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
alter sequence merchants_business_code_seq owned by merchants.business_code;
create unique index merchants_single_platform on merchants (is_platform) where is_platform;

create table api_keys (
  id bigint generated always as identity primary key,
  -- kind prefix plus the next 8 characters of the key, kept in clear to name the key
  key_prefix text not null constraint api_keys_key_prefix_unique unique,
  -- hex SHA-256 of the whole key: keys carry >= 128 random bits, so a slow hash would add only latency
  key_hash text not null constraint api_keys_key_hash_unique unique,
  owner_kind text not null constraint api_keys_owner_kind_valid check (owner_kind in ('merchant', 'partner')),
  business_code bigint references merchants (business_code),
  partner_id bigint references partners (id),
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  constraint api_keys_owner_matches_kind check (
    (owner_kind = 'merchant' and business_code is not null and partner_id is null) or
    (owner_kind = 'partner' and partner_id is not null and business_code is null))
);
create index api_keys_by_merchant on api_keys (business_code) where business_code is not null;
create index api_keys_by_partner on api_keys (partner_id) where partner_id is not null;

-- The ledger. `available` is what a merchant can pay out now; `pending_out` is debited transfers not yet
-- settled. The CHECK is the last line of defence: no code path may ever drive a balance negative.
create table balances (
  business_code bigint primary key references merchants (business_code),
  currency text not null default 'BOB' constraint balances_currency_valid check (currency = 'BOB'),
  available_centavos bigint not null default 0 constraint balances_available_nonnegative check (available_centavos >= 0),
  pending_out_centavos bigint not null default 0 constraint balances_pending_out_nonnegative check (pending_out_centavos >= 0),
  updated_at timestamptz not null default now()
);

-- One row per balance movement; `snapshot` holds what the movement displays (masked payer details, or the
-- masked destination), so the history never reads QR or transfer tables.
create table movements (
  id bigint generated always as identity primary key,
  business_code bigint not null references merchants (business_code),
  type text not null constraint movements_type_valid check (type in ('payment', 'transfer')),
  amount_centavos bigint not null,
  currency text not null default 'BOB' constraint movements_currency_valid check (currency = 'BOB'),
  status text not null constraint movements_status_valid
    check (status in ('PENDING', 'IN_TRANSIT', 'COMPLETED', 'FAILED', 'CANCELED')),
  reference text,
  snapshot jsonb not null default '{}'::jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint movements_amount_sign check (
    (type = 'payment' and amount_centavos > 0) or (type = 'transfer' and amount_centavos < 0))
);
create index movements_history on movements (business_code, created_at desc, id desc);
create index movements_history_by_type on movements (business_code, type, created_at desc, id desc);
-- Counts the few movements at or above a pinned `before_id`, so a stable page's `total` is the counter
-- minus an index range rather than a count over the whole history.
create index movements_by_merchant_and_id on movements (business_code, id);

-- Movement counts per merchant and type, kept in the movement's transaction, so a page's `total` is a
-- key lookup rather than a count over millions of rows.
create table movement_counters (
  business_code bigint not null references merchants (business_code),
  type text not null constraint movement_counters_type_valid check (type in ('payment', 'transfer')),
  movement_count bigint not null default 0 constraint movement_counters_nonnegative check (movement_count >= 0),
  constraint movement_counters_pkey primary key (business_code, type)
);

-- The transactional outbox: written in the transaction of the change it reports; `published_at` is set
-- when the webhooks module has fanned the event out to deliveries.
create table events (
  id text primary key constraint events_id_format check (id ~ '^evt_[0-9A-Za-z]{22,}$'),
  sequence bigint generated always as identity constraint events_sequence_unique unique,
  owner_kind text not null constraint events_owner_kind_valid check (owner_kind in ('merchant', 'partner')),
  owner_id bigint not null,
  type text not null constraint events_type_format check (type ~ '^[a-z_]+\.[a-z_]+$'),
  data jsonb not null,
  created_at timestamptz not null,
  published_at timestamptz
);
create index events_by_owner on events (owner_kind, owner_id, created_at desc, sequence desc);
create index events_unpublished on events (sequence) where published_at is null;

-- Stored outcomes of writes sent with an Idempotency-Key (docs/api-reference.md#idempotency), per caller and route.
create table idempotency_keys (
  caller text not null,
  route text not null,
  idempotency_key uuid not null,
  request_hash text not null,
  status_code integer not null,
  response_body jsonb not null,
  created_at timestamptz not null,
  constraint idempotency_keys_pkey primary key (caller, route, idempotency_key)
);
create index idempotency_keys_by_age on idempotency_keys (created_at);

-- The platform's own merchant account: it owns activation-fee QRs and collects the fees.
insert into merchants (business_code, name, city, mcc, ach_enabled, is_platform)
values (1000, 'Merchant Payments Platform', 'La Paz', '5999', false, true);
insert into balances (business_code) values (1000);
