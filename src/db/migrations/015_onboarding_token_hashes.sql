-- 015: onboarding flow tokens at rest (docs/onboarding.md#5-decisions, "Secrets at rest"). The token in an intent's url is
-- the flow's bearer: whoever holds it can register a merchant. It was stored in clear, so a dump, a backup
-- or a read replica opened every open intent's flow. Now an intent keeps only the token's SHA-256 (hex,
-- what the flow's lookups use) and, for the replay of its creation (contract §5.1: the same url again),
-- the token sealed under ENCRYPTION_KEYS (AES-256-GCM, src/kernel/secret-box.ts), which SQL cannot open.
--
-- Not additive, on purpose: the clear column is dropped in this same transaction. Keeping it for
-- processes of the previous version would keep the secret at rest, which is what this migration removes.
-- During a rolling deploy, an instance still on the previous version answers its onboarding requests
-- (creating an intent, the hosted flow) with 500 until it is replaced; nothing else of the service reads
-- these columns. Replace the instances together, or send onboarding traffic to the new ones first.
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

alter table onboarding_intents drop column token;
