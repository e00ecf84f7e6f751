// The flow cookie and CSRF helpers of the hosted onboarding flow (no database).
import { describe, expect, it } from 'vitest';
import { readCookie } from '../../src/kernel/cookies.ts';
import { csrfTokenOf, flowCookieHeader, flowSecretOf, isValidCsrfToken, newFlowSecret } from '../../src/onboarding/pages/flow-cookie.ts';

describe('onboarding flow cookie', () => {
  it('reads one cookie out of a Cookie header', () => {
    expect(readCookie('a=1; mps_onboarding=xyz; b=2', 'mps_onboarding')).toBe('xyz');
    expect(readCookie('mps_onboarding_other=1', 'mps_onboarding')).toBeNull();
    expect(readCookie(undefined, 'mps_onboarding')).toBeNull();
    expect(readCookie('garbage', 'mps_onboarding')).toBeNull();
  });

  it('accepts only a well-formed secret', () => {
    const secret = newFlowSecret();
    expect(flowSecretOf(`mps_onboarding=${secret}`)).toBe(secret);
    expect(flowSecretOf('mps_onboarding=short')).toBeNull();
    expect(flowSecretOf(`mps_onboarding=${secret}"`)).toBeNull();
  });

  it('sets an HttpOnly, SameSite=Lax cookie on the flow path, Secure on https, living until the intent expires', () => {
    const now = new Date('2026-11-22T16:00:00Z');
    expect(flowCookieHeader('s', '', 'tok', new Date('2026-11-22T18:00:00Z'), now, true))
      .toBe('mps_onboarding=s; Path=/onboarding/tok; Max-Age=7200; HttpOnly; SameSite=Lax; Secure');
    expect(flowCookieHeader('s', '', 'tok', now, now, false)).toBe('mps_onboarding=s; Path=/onboarding/tok; Max-Age=0; HttpOnly; SameSite=Lax');
    // Under a PUBLIC_BASE_URL with a path, the browser sees the flow there.
    expect(flowCookieHeader('s', '/checkout', 'tok', now, now, false)).toBe('mps_onboarding=s; Path=/checkout/onboarding/tok; Max-Age=0; HttpOnly; SameSite=Lax');
  });

  it('derives the CSRF field from the secret and the flow token, and checks it in constant time', () => {
    const secret = newFlowSecret();
    const field = csrfTokenOf(secret, 'tokenA');
    expect(isValidCsrfToken(secret, 'tokenA', field)).toBe(true);
    expect(isValidCsrfToken(secret, 'tokenB', field)).toBe(false);
    expect(isValidCsrfToken(newFlowSecret(), 'tokenA', field)).toBe(false);
    expect(isValidCsrfToken(null, 'tokenA', field)).toBe(false);
    expect(isValidCsrfToken(secret, 'tokenA', undefined)).toBe(false);
    expect(isValidCsrfToken(secret, 'tokenA', `${field}x`)).toBe(false);
  });
});
