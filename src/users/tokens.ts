// The console's bearer tokens — an invitation link's, a session cookie's — and the CSRF field derived from a
// session. A token is 43 base62 characters (> 250 bits) and only its SHA-256 is stored: a copy of the
// database holds no link that works and no session to take over. The CSRF field is HMAC(token) and
// needs no storage: a cross-site page can neither read the SameSite=Strict cookie nor compute the field.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../ids.ts';

const TOKEN_LENGTH = 43;
const TOKEN_PATTERN = /^[0-9A-Za-z]{43}$/;

export function newToken(): string {
  return randomBase62(TOKEN_LENGTH);
}

/** True for text shaped like a token: anything else is refused before the database is asked. */
export function isTokenShaped(text: unknown): text is string {
  return typeof text === 'string' && TOKEN_PATTERN.test(text);
}

/** What the database keeps of a token: its SHA-256, in hex. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The hidden field of every form a browser holding `secret` (a session token, or a sign-in cookie) sends. */
export function csrfFieldOf(secret: string): string {
  return createHmac('sha256', secret).update('console csrf').digest('base64url');
}

/** Constant-time comparison of a submitted CSRF field with the one `secret` gives. */
export function isValidCsrfField(secret: string | null, submitted: unknown): boolean {
  if (secret === null || typeof submitted !== 'string') return false;
  const expected = Buffer.from(csrfFieldOf(secret));
  const given = Buffer.from(submitted);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
