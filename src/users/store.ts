// SQL of the console's users, invitations and sessions (migration 027). Every function takes the
// transaction (or the database for a single read) first. Whatever is read for a signed-in person is
// scoped by the business_code of their session in the statement itself: a row of another merchant is
// never read, whatever id a form or URL names.
import type { Queryable } from '../db/database.ts';

export type UserRole = 'owner' | 'cashier';
export type UserStatus = 'invited' | 'active' | 'disabled';

export interface UserRow {
  id: number;
  business_code: number;
  email: string;
  role: UserRole;
  status: UserStatus;
  created_at: Date;
  updated_at: Date;
}

/** A user as sign-in reads them: with the password hash and the lockout columns. */
export interface UserCredentialsRow extends UserRow {
  password_hash: string | null;
  failed_sign_ins: number;
  locked_until: Date | null;
}

const USER_COLUMNS = 'id, business_code, email, role, status, created_at, updated_at';

export async function insertUser(tx: Queryable, user: { businessCode: number; email: string; role: UserRole }, now: Date): Promise<UserRow> {
  const { rows } = await tx.query<UserRow>(
    `insert into console_users (business_code, email, role, status, created_at, updated_at)
     values ($1::bigint, $2::text, $3::text, 'invited', $4::timestamptz, $4::timestamptz)
     returning ${USER_COLUMNS}`,
    [user.businessCode, user.email, user.role, now],
  );
  return rows[0]!;
}

/** The user of an email, whatever the merchant (an email is one account across the service), locked for the caller's transaction. */
export async function lockUserByEmail(tx: Queryable, email: string): Promise<UserRow | undefined> {
  const { rows } = await tx.query<UserRow>(`select ${USER_COLUMNS} from console_users where lower(email) = lower($1::text) for update`, [email]);
  return rows[0];
}

export async function lockUserOfMerchant(tx: Queryable, businessCode: number, userId: number): Promise<UserRow | undefined> {
  const { rows } = await tx.query<UserRow>(
    `select ${USER_COLUMNS} from console_users where id = $2::bigint and business_code = $1::bigint for update`, [businessCode, userId]);
  return rows[0];
}

export async function findCredentialsByEmail(tx: Queryable, email: string): Promise<UserCredentialsRow | undefined> {
  const { rows } = await tx.query<UserCredentialsRow>(
    `select ${USER_COLUMNS}, password_hash, failed_sign_ins, locked_until from console_users where lower(email) = lower($1::text)`,
    [email],
  );
  return rows[0];
}

export async function setUserRole(tx: Queryable, userId: number, role: UserRole, now: Date): Promise<UserRow> {
  const { rows } = await tx.query<UserRow>(
    `update console_users set role = $2::text, updated_at = $3::timestamptz where id = $1::bigint returning ${USER_COLUMNS}`,
    [userId, role, now],
  );
  return rows[0]!;
}

/** Sets the first password of an invited user and makes them active; undefined when they are no longer invited. */
/**
 * Sets the password a link was used for and makes the user active: a new user's first, a forgotten one's
 * replacement, or a disabled cashier's return (only a link issued after the disabling can be used: disabling
 * withdraws the open ones). The lockout count starts again.
 */
export async function setPasswordFromLink(tx: Queryable, userId: number, passwordHash: string, now: Date): Promise<UserRow | undefined> {
  const { rows } = await tx.query<UserRow>(
    `update console_users set status = 'active', password_hash = $2::text, failed_sign_ins = 0, locked_until = null, updated_at = $3::timestamptz
      where id = $1::bigint returning ${USER_COLUMNS}`,
    [userId, passwordHash, now],
  );
  return rows[0];
}

/**
 * One more wrong password, counted in one statement so that concurrent guesses each count: the
 * `maxFailures`-th locks the account until `lockedUntil` and starts the count again.
 */
export async function countFailedSignIn(tx: Queryable, userId: number, maxFailures: number, lockedUntil: Date, now: Date): Promise<{ locked_until: Date | null }> {
  const { rows } = await tx.query<{ locked_until: Date | null }>(
    `update console_users
        set failed_sign_ins = case when failed_sign_ins + 1 >= $2::integer then 0 else failed_sign_ins + 1 end,
            locked_until = case when failed_sign_ins + 1 >= $2::integer then $3::timestamptz else locked_until end,
            updated_at = $4::timestamptz
      where id = $1::bigint returning locked_until`,
    [userId, maxFailures, lockedUntil, now],
  );
  return rows[0]!;
}

export async function clearFailedSignIns(tx: Queryable, userId: number): Promise<void> {
  await tx.query('update console_users set failed_sign_ins = 0, locked_until = null where id = $1::bigint and (failed_sign_ins <> 0 or locked_until is not null)', [userId]);
}

export async function listUsersOfMerchant(tx: Queryable, businessCode: number): Promise<UserRow[]> {
  const { rows } = await tx.query<UserRow>(`select ${USER_COLUMNS} from console_users where business_code = $1::bigint order by id`, [businessCode]);
  return rows;
}

/** Disables a cashier of the merchant; undefined when the merchant has no such cashier, or it is disabled already. */
export async function disableCashier(tx: Queryable, businessCode: number, userId: number, now: Date): Promise<UserRow | undefined> {
  const { rows } = await tx.query<UserRow>(
    `update console_users set status = 'disabled', updated_at = $3::timestamptz
      where id = $2::bigint and business_code = $1::bigint and role = 'cashier' and status <> 'disabled'
      returning ${USER_COLUMNS}`,
    [businessCode, userId, now],
  );
  return rows[0];
}

// Invitations

export async function insertInvitation(tx: Queryable, invitation: { userId: number; tokenHash: string; invitedBy: number | null; expiresAt: Date }, now: Date): Promise<void> {
  await tx.query(
    `insert into console_invitations (user_id, token_hash, invited_by_user_id, created_at, expires_at)
     values ($1::bigint, $2::text, $3::bigint, $4::timestamptz, $5::timestamptz)`,
    [invitation.userId, invitation.tokenHash, invitation.invitedBy, now, invitation.expiresAt],
  );
}

/** Withdraws the user's invitations not used yet (a newer one replaces them, or the user is disabled). */
export async function revokeOpenInvitations(tx: Queryable, userId: number, now: Date): Promise<void> {
  await tx.query(
    'update console_invitations set revoked_at = $2::timestamptz where user_id = $1::bigint and used_at is null and revoked_at is null',
    [userId, now],
  );
}

export interface InvitationRow {
  user_id: number;
  email: string;
  role: UserRole;
  /** The user's status now: `invited` for a first password, else the link replaces a password. */
  user_status: UserStatus;
  business_code: number;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

export async function findInvitation(tx: Queryable, tokenHash: string): Promise<InvitationRow | undefined> {
  const { rows } = await tx.query<InvitationRow>(
    `select i.user_id, u.email, u.role, u.status as user_status, u.business_code, i.expires_at, i.used_at, i.revoked_at
       from console_invitations i join console_users u on u.id = i.user_id
      where i.token_hash = $1::text`,
    [tokenHash],
  );
  return rows[0];
}

/**
 * Uses the invitation: of two acceptances of one link, whatever their timing, the database lets one
 * update the row; the other reads nothing back.
 */
export async function useInvitation(tx: Queryable, tokenHash: string, now: Date): Promise<number | undefined> {
  const { rows } = await tx.query<{ user_id: number }>(
    `update console_invitations set used_at = $2::timestamptz
      where token_hash = $1::text and used_at is null and revoked_at is null and expires_at > $2::timestamptz
      returning user_id`,
    [tokenHash, now],
  );
  return rows[0]?.user_id;
}

// Sessions

export async function insertSession(tx: Queryable, session: { userId: number; tokenHash: string; userAgent: string; expiresAt: Date }, now: Date): Promise<void> {
  await tx.query(
    `insert into console_sessions (user_id, token_hash, user_agent, created_at, last_seen_at, expires_at)
     values ($1::bigint, $2::text, $3::text, $4::timestamptz, $4::timestamptz, $5::timestamptz)`,
    [session.userId, session.tokenHash, session.userAgent, now, session.expiresAt],
  );
}

/** A live session with whom it signs in: what every console request starts from. */
export interface SessionRow {
  session_id: number;
  last_seen_at: Date;
  user_id: number;
  email: string;
  role: UserRole;
  business_code: number;
}

/** The live session of a token: not ended, not expired, used within `idleSince`, its user active. */
export async function findLiveSession(tx: Queryable, tokenHash: string, now: Date, idleSince: Date): Promise<SessionRow | undefined> {
  const { rows } = await tx.query<SessionRow>(
    `select s.id as session_id, s.last_seen_at, u.id as user_id, u.email, u.role, u.business_code
       from console_sessions s join console_users u on u.id = s.user_id
      where s.token_hash = $1::text and s.ended_at is null and s.expires_at > $2::timestamptz and s.last_seen_at > $3::timestamptz
        and u.status = 'active'`,
    [tokenHash, now, idleSince],
  );
  return rows[0];
}

export async function touchSession(tx: Queryable, sessionId: number, now: Date): Promise<void> {
  await tx.query('update console_sessions set last_seen_at = $2::timestamptz where id = $1::bigint and last_seen_at < $2::timestamptz', [sessionId, now]);
}

export interface SessionListingRow {
  id: number;
  user_id: number;
  email: string;
  role: UserRole;
  user_agent: string;
  created_at: Date;
  last_seen_at: Date;
}

/** The merchant's live sessions, most recently used first. */
export async function listLiveSessionsOfMerchant(tx: Queryable, businessCode: number, now: Date, idleSince: Date): Promise<SessionListingRow[]> {
  const { rows } = await tx.query<SessionListingRow>(
    `select s.id, s.user_id, u.email, u.role, s.user_agent, s.created_at, s.last_seen_at
       from console_sessions s join console_users u on u.id = s.user_id
      where u.business_code = $1::bigint and s.ended_at is null and s.expires_at > $2::timestamptz and s.last_seen_at > $3::timestamptz
        and u.status = 'active'
      order by s.last_seen_at desc, s.id desc`,
    [businessCode, now, idleSince],
  );
  return rows;
}

/** Ends a session of the merchant's; false when it names none of its sessions still open. */
export async function endSessionOfMerchant(tx: Queryable, businessCode: number, sessionId: number, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `update console_sessions s set ended_at = $3::timestamptz
       from console_users u
      where s.id = $2::bigint and u.id = s.user_id and u.business_code = $1::bigint and s.ended_at is null`,
    [businessCode, sessionId, now],
  );
  return rowCount > 0;
}

export async function endSessionsOfUser(tx: Queryable, userId: number, now: Date): Promise<void> {
  await tx.query('update console_sessions set ended_at = $2::timestamptz where user_id = $1::bigint and ended_at is null', [userId, now]);
}
