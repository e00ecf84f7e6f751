-- 027: the merchant console's people (docs/console.md; contract §13): a merchant's users — its owner and
-- cashiers — their single-use invitations, and their signed-in sessions. Passwords, invitation tokens and
-- session tokens are never stored in clear: a password as its scrypt hash (src/users/passwords.ts), a token
-- as its SHA-256 in hex (src/users/tokens.ts), so a copy of the database signs no one in.
--
-- An email is one console account across the whole service (unique on lower(email)): signing in asks for
-- the email and the password only, never which business. A person who works for two businesses uses two
-- addresses.
--
-- Additive: processes of the previous version never read or write these tables.

create table console_users (
  id bigserial primary key,
  business_code bigint not null references merchants (business_code),
  email text not null
    constraint console_users_email_format check (char_length(email) between 3 and 254 and email ~ '^[^\s@]+@[^\s@]+$'),
  role text not null
    constraint console_users_role_valid check (role in ('owner', 'cashier')),
  -- invited: no password yet (the invitation sets it); active: signs in; disabled: never again
  status text not null
    constraint console_users_status_valid check (status in ('invited', 'active', 'disabled')),
  -- scrypt$N$r$p$salt$hash (base64url): null until the invitation is accepted
  password_hash text
    constraint console_users_password_hash_format check (password_hash ~ '^scrypt\$[0-9]+\$[0-9]+\$[0-9]+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$'),
  -- consecutive wrong passwords since the last success or lock; the tenth locks the account
  failed_sign_ins integer not null default 0
    constraint console_users_failed_sign_ins_range check (failed_sign_ins between 0 and 10),
  locked_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint console_users_active_has_password check (status <> 'active' or password_hash is not null)
);
create unique index console_users_email_unique on console_users (lower(email));
create index console_users_of_merchant on console_users (business_code, id);

-- A link that lets its holder set the user's password, once, for 72 hours. "Once" is the database's: the
-- acceptance is `update … set used_at = $now where token_hash = $1 and used_at is null and expires_at > $now`,
-- and of two concurrent acceptances only one updates the row.
create table console_invitations (
  id bigserial primary key,
  user_id bigint not null references console_users (id),
  token_hash text not null
    constraint console_invitations_token_hash_is_sha256 check (token_hash ~ '^[0-9a-f]{64}$'),
  -- who asked for it: the operator (admin API or CLI) or the id of the owner who invited from the console
  invited_by_user_id bigint references console_users (id),
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  -- a newer invitation of the same user, or the user disabled, withdraws it
  revoked_at timestamptz,
  constraint console_invitations_token_hash_unique unique (token_hash),
  constraint console_invitations_expiry_after_creation check (expires_at > created_at),
  constraint console_invitations_used_or_revoked check (used_at is null or revoked_at is null)
);
create index console_invitations_of_user on console_invitations (user_id) where used_at is null and revoked_at is null;

-- A signed-in browser. The cookie holds the token; the CSRF field of its forms is derived from it
-- (HMAC, src/users/tokens.ts), so nothing more is stored. A session ends at sign-out, when an owner ends
-- it, when its user is disabled, after SESSION_IDLE of no use, or at expires_at, whichever comes first.
create table console_sessions (
  id bigserial primary key,
  user_id bigint not null references console_users (id),
  token_hash text not null
    constraint console_sessions_token_hash_is_sha256 check (token_hash ~ '^[0-9a-f]{64}$'),
  -- the browser's User-Agent, cut to 300 characters: what the owner reads to tell devices apart
  user_agent text not null
    constraint console_sessions_user_agent_length check (char_length(user_agent) <= 300),
  created_at timestamptz not null,
  last_seen_at timestamptz not null,
  expires_at timestamptz not null,
  ended_at timestamptz,
  constraint console_sessions_token_hash_unique unique (token_hash),
  constraint console_sessions_expiry_after_creation check (expires_at > created_at),
  constraint console_sessions_seen_after_creation check (last_seen_at >= created_at)
);
create index console_sessions_open_of_user on console_sessions (user_id) where ended_at is null;
