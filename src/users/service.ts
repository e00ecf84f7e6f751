// The merchant console's people (docs/console.md): invitations (by the operator, or by an owner for a
// cashier), accepting one, signing in with the lockout, the sessions every console request is checked
// against, and what an owner does with users and sessions. The console's pages (src/console/) and the
// operator's admin API and CLI call these; every time is the caller's `now` (the service's clock).
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { databaseErrorOf, SqlState } from '../db/database.ts';
import { ApiError } from '../kernel/errors.ts';
import type { MerchantDisplayCache } from '../merchants/display-cache.ts';
import * as merchants from '../merchants/service.ts';
import { hashPassword, verifyAgainstDecoy, verifyPassword } from './passwords.ts';
import * as store from './store.ts';
import type { SessionListingRow, SessionRow, UserRole, UserRow } from './store.ts';
import { newToken, tokenHash } from './tokens.ts';

export type { SessionListingRow, UserRole, UserRow, UserStatus } from './store.ts';
export const USER_ROLES = ['owner', 'cashier'] as const satisfies readonly UserRole[];

/** How long an invitation link works. */
export const INVITATION_TTL_MS = 72 * 3_600_000;
/** A session not used for this long has ended (a cashier's till left signed in overnight). */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** And none outlives this, used or not: then its user signs in again. */
export const SESSION_MAX_MS = 7 * 86_400_000;
/** A session's last use is written at most this often (each page would otherwise write). */
const TOUCH_EVERY_MS = 60_000;
/** The tenth wrong password in a row locks the account… */
export const MAX_FAILED_SIGN_INS = 10;
/** …for this long; then it takes ten more. */
export const LOCK_MS = 15 * 60_000;
/** What is kept of a browser's User-Agent to tell devices apart. */
const USER_AGENT_CHARS = 300;

export interface Invitation {
  user: UserRow;
  /** The link's token, shown once: only its hash is stored. */
  token: string;
  expiresAt: Date;
}

/** The invitation page of a token, under PUBLIC_BASE_URL. */
export function invitationUrlOf(config: Pick<Config, 'publicBaseUrl'>, token: string): string {
  return `${config.publicBaseUrl.replace(/\/+$/, '')}/console/invitations/${token}`;
}

/**
 * Invites `email` to the merchant's console with `role`. An invitation of this merchant not accepted yet is
 * sent again: a new link, the old ones withdrawn. Any other existing account of that email (active or
 * disabled, here or at another merchant) is 409 USER_EXISTS. 404 for an unknown merchant.
 */
export async function inviteUser(
  db: Database,
  request: { businessCode: number; email: string; role: UserRole; invitedBy: number | null },
  now: Date,
): Promise<Invitation> {
  await merchants.getMerchant(db, request.businessCode);
  const token = newToken();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  try {
    const user = await db.transaction(async (tx) => {
      const existing = await store.lockUserByEmail(tx, request.email);
      let user: UserRow;
      if (!existing) {
        user = await store.insertUser(tx, request, now);
      } else if (existing.business_code === request.businessCode && existing.status === 'invited') {
        await store.revokeOpenInvitations(tx, existing.id, now);
        user = existing.role === request.role ? existing : await store.setUserRole(tx, existing.id, request.role, now);
      } else {
        throw new ApiError('USER_EXISTS');
      }
      await store.insertInvitation(tx, { userId: user.id, tokenHash: tokenHash(token), invitedBy: request.invitedBy, expiresAt }, now);
      return user;
    });
    return { user, token, expiresAt };
  } catch (error) {
    // Two invitations of one new email at once: the unique index on lower(email) lets one in.
    if (databaseErrorOf(error)?.code === SqlState.UNIQUE_VIOLATION) throw new ApiError('USER_EXISTS');
    throw error;
  }
}

/**
 * A new link for a user who has an account already: to set a new password (forgotten, or the account locked
 * out by someone guessing) or, for a disabled cashier, to come back. The user's other open links are
 * withdrawn; nothing changes until the link is used — then the new password replaces the old one and every
 * session of the user ends (docs/console.md#password-links). A user still `invited` gets a new invitation
 * (as inviteUser sends it again). Null when `who` names no such user.
 *  - `{ businessCode, userId, role: 'cashier' }`: an owner's, from the users page — a cashier of the business only;
 *  - `{ email }`: the operator's (`mps user link`), any user.
 */
export async function issuePasswordLink(
  db: Database,
  who: { businessCode: number; userId: number; role: 'cashier'; issuedBy: number } | { email: string },
  now: Date,
): Promise<Invitation | null> {
  const token = newToken();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  const user = await db.transaction(async (tx) => {
    const found = 'email' in who ? await store.lockUserByEmail(tx, who.email) : await store.lockUserOfMerchant(tx, who.businessCode, who.userId);
    if (!found || ('role' in who && found.role !== who.role)) return null;
    await store.revokeOpenInvitations(tx, found.id, now);
    await store.insertInvitation(tx, { userId: found.id, tokenHash: tokenHash(token), invitedBy: 'issuedBy' in who ? who.issuedBy : null, expiresAt }, now);
    return found;
  });
  return user ? { user, token, expiresAt } : null;
}

export type InvitationState =
  | { kind: 'open'; email: string; role: UserRole; merchantName: string; expiresAt: Date; purpose: 'invitation' | 'new_password' }
  | { kind: 'used' | 'expired' | 'not_found' };

/** What an invitation link leads to, without using it. */
export async function invitationState(db: Database, token: string, now: Date): Promise<InvitationState> {
  const invitation = await store.findInvitation(db, tokenHash(token));
  if (!invitation) return { kind: 'not_found' };
  if (invitation.used_at !== null) return { kind: 'used' };
  // Withdrawn (a newer link, a disabled cashier) reads as expired: the person asks for a new link either way.
  if (invitation.revoked_at !== null || invitation.expires_at <= now) return { kind: 'expired' };
  const { name } = await merchants.getMerchant(db, invitation.business_code);
  return {
    kind: 'open', email: invitation.email, role: invitation.role, merchantName: name, expiresAt: invitation.expires_at,
    purpose: invitation.user_status === 'invited' ? 'invitation' : 'new_password',
  };
}

/** A new session's token, for the session cookie: shown to the browser only. */
export interface NewSession {
  token: string;
  expiresAt: Date;
}

/**
 * Uses an invitation or password link: sets the user's password, ends every session the user had (a new
 * password signs out every other device) and signs them in. `used` or `expired` when the link no longer
 * works — among them the second of two uses at once, which the database refuses.
 */
export async function acceptInvitation(db: Database, token: string, password: string, userAgent: string, now: Date): Promise<NewSession | { kind: 'used' | 'expired' | 'not_found' }> {
  const state = await invitationState(db, token, now);
  if (state.kind !== 'open') return state;
  const passwordHash = await hashPassword(password); // tens of milliseconds: outside the transaction
  const session = await db.transaction(async (tx) => {
    const userId = await store.useInvitation(tx, tokenHash(token), now);
    if (userId === undefined) return null;
    if (!(await store.setPasswordFromLink(tx, userId, passwordHash, now))) return null;
    await store.endSessionsOfUser(tx, userId, now);
    return startSession(tx, userId, userAgent, now);
  });
  return session ?? { kind: 'used' };
}

export type SignInOutcome = NewSession | { kind: 'refused' } | { kind: 'locked'; until: Date };

/**
 * Signs in with email and password. A wrong password, an unknown email and a disabled or not yet active
 * account all read `refused` alike, and take as long. The tenth wrong password in a row locks the account for
 * LOCK_MS: while locked, even the right password is `locked`.
 */
export async function signIn(db: Database, email: string, password: string, userAgent: string, now: Date): Promise<SignInOutcome> {
  const user = await store.findCredentialsByEmail(db, email);
  if (!user || user.status !== 'active' || user.password_hash === null) {
    await verifyAgainstDecoy(password);
    return { kind: 'refused' };
  }
  if (user.locked_until !== null && user.locked_until > now) return { kind: 'locked', until: user.locked_until };
  if (!(await verifyPassword(password, user.password_hash))) {
    const counted = await store.countFailedSignIn(db, user.id, MAX_FAILED_SIGN_INS, new Date(now.getTime() + LOCK_MS), now);
    if (counted.locked_until !== null && counted.locked_until > now) return { kind: 'locked', until: counted.locked_until };
    return { kind: 'refused' };
  }
  return db.transaction(async (tx) => {
    await store.clearFailedSignIns(tx, user.id);
    return startSession(tx, user.id, userAgent, now);
  });
}

async function startSession(tx: Parameters<typeof store.insertSession>[0], userId: number, userAgent: string, now: Date): Promise<NewSession> {
  const token = newToken();
  const expiresAt = new Date(now.getTime() + SESSION_MAX_MS);
  await store.insertSession(tx, { userId, tokenHash: tokenHash(token), userAgent: cleanUserAgent(userAgent), expiresAt }, now);
  return { token, expiresAt };
}

/** The User-Agent as the sessions list shows it: printable text only, cut short. */
function cleanUserAgent(userAgent: string): string {
  return userAgent.replace(/[^\x20-\x7E\u00A0-\uFFFF]/gu, '').slice(0, USER_AGENT_CHARS);
}

/** Who a console request comes from: the live session of its cookie's token. */
export interface ConsoleSession {
  sessionId: number;
  userId: number;
  email: string;
  role: UserRole;
  businessCode: number;
  merchantName: string;
}

/**
 * The live session of `token`, its last use recorded; null when there is none (ended, expired, idle, its
 * user disabled). The business's name comes from the merchants' display cache (a name never changes).
 */
export async function sessionOf(
  { db, merchantDisplays }: { db: Database; merchantDisplays: MerchantDisplayCache }, token: string, now: Date,
): Promise<ConsoleSession | null> {
  const row: SessionRow | undefined = await store.findLiveSession(db, tokenHash(token), now, new Date(now.getTime() - SESSION_IDLE_MS));
  if (!row) return null;
  if (now.getTime() - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) await store.touchSession(db, row.session_id, now);
  const { name } = await merchantDisplays.get(db, row.business_code);
  return { sessionId: row.session_id, userId: row.user_id, email: row.email, role: row.role, businessCode: row.business_code, merchantName: name };
}

export async function listUsers(db: Database, businessCode: number): Promise<UserRow[]> {
  return store.listUsersOfMerchant(db, businessCode);
}

/** Disables a cashier of the merchant, ends their sessions and withdraws their invitations; false when there is no such cashier. */
export async function disableCashier(db: Database, businessCode: number, userId: number, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const user = await store.disableCashier(tx, businessCode, userId, now);
    if (!user) return false;
    await store.endSessionsOfUser(tx, user.id, now);
    await store.revokeOpenInvitations(tx, user.id, now);
    return true;
  });
}

export async function listSessions(db: Database, businessCode: number, now: Date): Promise<SessionListingRow[]> {
  return store.listLiveSessionsOfMerchant(db, businessCode, now, new Date(now.getTime() - SESSION_IDLE_MS));
}

/** Ends one of the merchant's sessions (sign-out, or an owner ending a device's); false when it names none still open. */
export async function endSession(db: Database, businessCode: number, sessionId: number, now: Date): Promise<boolean> {
  return store.endSessionOfMerchant(db, businessCode, sessionId, now);
}
