// Guessing the operator's and the metrics token (src/http/token-lockout.ts): every wrong bearer token
// spends one of a client network's ten chances, and a network without chances is refused 429 — even with
// the right token — while other networks are not. It holds with RATE_LIMIT=off and PUBLIC_RATE_LIMIT=off,
// which the test harness sets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { TOKEN_FAILURES_ALLOWED, TOKEN_LOCKOUT_MS } from '../../src/http/token-lockout.ts';

const METRICS_TOKEN = 'metrics-token-for-the-lockout-test-0123456789';

describe.each(databaseKinds())('wrong operator and metrics tokens on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    // Requests say which client they come from through X-Forwarded-For, believed from the test's own address.
    t = await startTestApp({ kind, env: { METRICS_TOKEN, TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(() => t?.close());

  const admin = (client: string, token: string) =>
    t.request('GET', '/admin/v1/ledger/check', { adminToken: token, headers: { 'x-forwarded-for': client } });
  const metrics = (client: string, token: string) =>
    t.request('GET', '/metrics', { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': client } });

  it(`locks a network out after ${TOKEN_FAILURES_ALLOWED} wrong tokens, the right one included, and leaves other networks alone`, async () => {
    const guesser = '203.0.113.7';
    for (let i = 0; i < TOKEN_FAILURES_ALLOWED; i++) {
      const wrong = await admin(guesser, `guess-${i}-${'x'.repeat(32)}`);
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('ADMIN_TOKEN_INVALID');
    }
    const locked = await admin(guesser, `guess-last-${'x'.repeat(32)}`);
    expect(locked.status).toBe(429);
    expect(locked.body).toEqual({ type: 'rate_limit_error', code: 'RATE_LIMITED', message: expect.any(String) });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The right token does not open the door either: a guesser learns nothing from the answer.
    expect((await admin(guesser, ADMIN_TOKEN)).status).toBe(429);
    // The same chances guard /metrics.
    expect((await metrics(guesser, METRICS_TOKEN)).status).toBe(429);
    // Another network still gets in with the right token.
    expect((await admin('198.51.100.9', ADMIN_TOKEN)).status).toBe(200);
    expect((await metrics('198.51.100.9', METRICS_TOKEN)).status).toBe(200);
  });

  it('counts wrong metrics tokens like wrong operator tokens', async () => {
    const guesser = '203.0.113.8';
    for (let i = 0; i < TOKEN_FAILURES_ALLOWED; i++) expect((await metrics(guesser, `wrong-${i}-${'y'.repeat(32)}`)).status).toBe(401);
    expect((await admin(guesser, ADMIN_TOKEN)).status).toBe(429);
  });

  it('spends no chance on a request that sends no token at all (a scraper set up without one)', async () => {
    const scraper = '203.0.113.10';
    for (let i = 0; i < TOKEN_FAILURES_ALLOWED * 2; i++) {
      expect((await t.request('GET', '/metrics', { headers: { 'x-forwarded-for': scraper } })).status).toBe(401);
    }
    expect((await admin(scraper, ADMIN_TOKEN)).status).toBe(200);
  });

  it('spends no chance on the right token', async () => {
    const operator = '203.0.113.9';
    for (let i = 0; i < TOKEN_FAILURES_ALLOWED * 2; i++) expect((await admin(operator, ADMIN_TOKEN)).status).toBe(200);
    expect((await admin(operator, `one-wrong-${'z'.repeat(32)}`)).status).toBe(401);
  });

  it('gives a locked-out network a chance back every 90 s of the app\'s clock, and all of them in 15 minutes', async () => {
    const guesser = '203.0.113.11';
    const chanceMs = TOKEN_LOCKOUT_MS / TOKEN_FAILURES_ALLOWED;
    for (let i = 0; i < TOKEN_FAILURES_ALLOWED; i++) expect((await admin(guesser, `guess-${i}-${'w'.repeat(32)}`)).status).toBe(401);
    const locked = await admin(guesser, ADMIN_TOKEN);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe(String(chanceMs / 1000));
    t.clock.advance(chanceMs - 1_000);
    expect((await admin(guesser, ADMIN_TOKEN)).status).toBe(429);
    t.clock.advance(1_000);
    // One chance: the right token spends nothing, a wrong one spends it.
    expect((await admin(guesser, ADMIN_TOKEN)).status).toBe(200);
    expect((await admin(guesser, `one-more-${'w'.repeat(32)}`)).status).toBe(401);
    expect((await admin(guesser, ADMIN_TOKEN)).status).toBe(429);
    t.clock.advance(TOKEN_LOCKOUT_MS);
    for (let i = 0; i < TOKEN_FAILURES_ALLOWED; i++) expect((await admin(guesser, `again-${i}-${'w'.repeat(32)}`)).status).toBe(401);
    expect((await admin(guesser, ADMIN_TOKEN)).status).toBe(429);
  });
});
