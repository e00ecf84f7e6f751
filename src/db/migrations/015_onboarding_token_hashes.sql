-- 015: onboarding flow tokens at rest (docs/onboarding.md#5-decisions, "Secrets at rest"). The token in an intent's url is
-- the flow's bearer: whoever holds it can register a merchant. It was stored in clear, so a dump, a backup
-- or a read replica opened every open intent's flow. Now an intent keeps only the token's SHA-256 (hex,
-- what the flow's lookups use) and, for the replay of its creation (contract §5.1: the same url again),
-- the token sealed under ENCRYPTION_KEYS (AES-256-GCM, src/kernel/secret-box.ts), which SQL cannot open.
--
-- Additive, like 012 and 014: processes of the version before may run beside new ones during a rolling
-- deploy. Their inserts still name the clear `token`, which a trigger turns into its hash and clears at
-- once, so no clear token stays at rest whoever wrote it; their lookups by the clear column then find
-- nothing, so an onboarding request that reaches an old instance answers 404 until it is replaced (it
-- never answers from, or writes, a clear token). A later migration drops the column and the trigger.
--
-- Intents created before this migration have no sealed token (the database holds no key to seal it with):
-- their flow works through the hash, and a replay of their creation answers the url stored with its
-- outcome until the idempotency purge removes that outcome (24 hours); new outcomes store no url.
alter table onboarding_intents add column token_hash text
  constraint onboarding_intents_token_hash_is_sha256 check (token_hash ~ '^[0-9a-f]{64}$');
-- sha256() is built into PostgreSQL (11+) and PGlite; the service hashes the token's UTF-8 bytes the same way.
update onboarding_intents set token_hash = encode(sha256(convert_to(token, 'UTF8')), 'hex');
alter table onboarding_intents alter column token_hash set not null;
alter table onboarding_intents add constraint onboarding_intents_token_hash_unique unique (token_hash);

-- `v1.<key id>.<base64url>`; null only for intents created before this migration.
alter table onboarding_intents add column token_sealed text
  constraint onboarding_intents_token_sealed_format check (token_sealed ~ '^v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]+$');

alter table onboarding_intents alter column token drop not null;
update onboarding_intents set token = null;

-- What an insert or update of the previous version writes in clear is kept only as its hash.
create function onboarding_intents_hash_clear_token() returns trigger language plpgsql as $$
begin
  if new.token is not null then
    new.token_hash := encode(sha256(convert_to(new.token, 'UTF8')), 'hex');
    new.token := null;
  end if;
  return new;
end;
$$;
create trigger onboarding_intents_hash_clear_token before insert or update of token on onboarding_intents
  for each row execute function onboarding_intents_hash_clear_token();
