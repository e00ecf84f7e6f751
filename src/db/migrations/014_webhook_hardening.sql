-- 014: webhook secrets sealed at rest, and a bound on redeliveries of one event (docs/webhooks.md).
--
-- Additive, like 012: processes of the version before may run beside new ones during a rolling deploy.
-- Their inserts still write a plain `secret`, which stays allowed; new processes write only the sealed
-- columns, and a worker job seals the plain secrets left (a migration cannot: the key is configuration,
-- not data). A later migration drops `secret` and `previous_secret` once no such process can be running.

-- AES-256-GCM values of kernel/secret-box.ts, bound to the row and role (`webhook_endpoint:<id>:current`).
alter table webhook_endpoints
  add column secret_sealed text constraint webhook_endpoints_secret_sealed_format check (secret_sealed ~ '^v1\.'),
  add column previous_secret_sealed text constraint webhook_endpoints_previous_secret_sealed_format check (previous_secret_sealed ~ '^v1\.'),
  alter column secret drop not null,
  add constraint webhook_endpoints_secret_present check (secret is not null or secret_sealed is not null);

-- The pair rule now holds for either form of the previous secret (sealed, or plain in rows not yet sealed).
alter table webhook_endpoints drop constraint webhook_endpoints_previous_secret_pair;
alter table webhook_endpoints add constraint webhook_endpoints_previous_secret_pair
  check ((previous_secret is null and previous_secret_sealed is null) = (previous_secret_expires_at is null));

-- What the sealing job looks for: empty once every row is sealed, so its poll is one probe of an empty index.
create index webhook_endpoints_plain_secret on webhook_endpoints (id) where secret is not null or previous_secret is not null;

-- Redeliveries of one event within a fixed window (an hour from its first redelivery), counted by one
-- guarded upsert: the database refuses the one over the limit, and the row lock on the event's counter
-- serializes concurrent redeliveries of the same event (which deadlocked on its delivery rows before).
create table webhook_redelivery_windows (
  event_id text primary key references events (id),
  window_started_at timestamptz not null,
  redeliveries integer not null constraint webhook_redelivery_windows_redeliveries_positive check (redeliveries >= 1)
);
