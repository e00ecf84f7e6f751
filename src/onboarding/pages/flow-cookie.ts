// The flow cookie of the hosted onboarding flow (docs/api-reference.md#hosted-onboarding-flow) and the CSRF token derived from it. The cookie
// holds a random per-flow secret (HttpOnly, SameSite=Lax, scoped to the flow's path); every form carries
// HMAC(secret, token) in a hidden field, checked on every POST (a cross-site page can neither read the
// cookie nor compute the field). The same secret binds the submitting browser to the intent for the done page.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../../ids.ts';
import { readCookie, scopedCookie } from '../../kernel/cookies.ts';

export const FLOW_COOKIE = 'mps_onboarding';
const SECRET_PATTERN = /^[0-9A-Za-z]{32}$/;

/** The flow secret of the request, when its cookie holds a well-formed one. */
export function flowSecretOf(cookieHeader: string | undefined): string | null {
  const value = readCookie(cookieHeader, FLOW_COOKIE);
  return value !== null && SECRET_PATTERN.test(value) ? value : null;
}

export function newFlowSecret(): string {
  return randomBase62(32);
}

/**
 * Set-Cookie of the flow secret: only this flow's path — `/onboarding/{token}` under the path of
 * PUBLIC_BASE_URL, where the browser sees it (`basePath`, '' at the root) — gone when the intent expires.
 */
export function flowCookieHeader(secret: string, basePath: string, token: string, expiresAt: Date, now: Date, secure: boolean): string {
  return scopedCookie(FLOW_COOKIE, secret, { path: `${basePath}/onboarding/${token}`, maxAgeSeconds: (expiresAt.getTime() - now.getTime()) / 1000, secure });
}

/** The hidden form field: HMAC-SHA256 of the flow's token under the flow secret. */
export function csrfTokenOf(secret: string, token: string): string {
  return createHmac('sha256', secret).update(`csrf\n${token}`).digest('base64url');
}

export function isValidCsrfToken(secret: string | null, token: string, submitted: unknown): boolean {
  if (secret === null || typeof submitted !== 'string') return false;
  const expected = Buffer.from(csrfTokenOf(secret, token));
  const given = Buffer.from(submitted);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
