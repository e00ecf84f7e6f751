-- 004: webhook endpoints of merchants and partners, one delivery per (event, endpoint) with a worker lease, and every attempt.
create table webhook_endpoints (
  id text primary key constraint webhook_endpoints_id_format check (id ~ '^we_[0-9A-Za-z]{20,}$'),
  -- creation order, the tie-break of lists when two endpoints share a created_at
  sequence bigint generated always as identity constraint webhook_endpoints_sequence_unique unique,
  owner_kind text not null constraint webhook_endpoints_owner_kind_valid check (owner_kind in ('merchant', 'partner')),
  owner_id bigint not null,
  url text not null constraint webhook_endpoints_url_length check (char_length(url) between 1 and 2048),
  description text constraint webhook_endpoints_description_length check (char_length(description) <= 500),
  -- ['*'] or a list of event types (validated by the service against the events module's list)
  event_types text[] not null constraint webhook_endpoints_event_types_nonempty check (cardinality(event_types) >= 1),
  status text not null default 'enabled' constraint webhook_endpoints_status_valid check (status in ('enabled', 'disabled')),
  -- Kept in clear: signing needs the key itself (Standard Webhooks is HMAC, not a public-key scheme).
  secret text not null constraint webhook_endpoints_secret_format check (secret ~ '^whsec_[A-Za-z0-9+/=]{40,}$'),
  -- The secret before the last rotation, still signed with until previous_secret_expires_at (24 h).
  previous_secret text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- Deleted endpoints stay as rows so their attempts remain readable under GET /events/{id}.
  deleted_at timestamptz,
  constraint webhook_endpoints_previous_secret_pair check ((previous_secret is null) = (previous_secret_expires_at is null))
);
create index webhook_endpoints_by_owner on webhook_endpoints (owner_kind, owner_id, created_at desc, sequence desc) where deleted_at is null;

create table webhook_deliveries (
  id bigint generated always as identity primary key,
  event_id text not null references events (id),
  endpoint_id text not null references webhook_endpoints (id),
  status text not null default 'pending' constraint webhook_deliveries_status_valid check (status in ('pending', 'succeeded', 'failed')),
  -- Attempts of the current round (a redelivery starts a new round): index into the retry schedule.
  attempts integer not null default 0 constraint webhook_deliveries_attempts_nonnegative check (attempts >= 0),
  -- Attempts ever made, numbering the rows of webhook_attempts.
  attempts_total integer not null default 0 constraint webhook_deliveries_attempts_total_nonnegative check (attempts_total >= attempts),
  next_attempt_at timestamptz not null,
  -- Lease of the dispatcher sending it now; an expired lease means the worker died and anyone may retry.
  locked_by text,
  locked_until timestamptz,
  last_status_code integer,
  last_error text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint webhook_deliveries_event_endpoint_unique unique (event_id, endpoint_id),
  constraint webhook_deliveries_lease_pair check ((locked_by is null) = (locked_until is null))
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_by_endpoint on webhook_deliveries (endpoint_id) where status = 'pending';

create table webhook_attempts (
  id bigint generated always as identity primary key,
  delivery_id bigint not null references webhook_deliveries (id),
  event_id text not null,
  endpoint_id text not null,
  attempt integer not null constraint webhook_attempts_attempt_positive check (attempt >= 1),
  status_code integer,
  duration_ms integer not null constraint webhook_attempts_duration_nonnegative check (duration_ms >= 0),
  error text,
  sent_at timestamptz not null,
  constraint webhook_attempts_delivery_attempt_unique unique (delivery_id, attempt)
);
create index webhook_attempts_by_event on webhook_attempts (event_id, sent_at, id);
