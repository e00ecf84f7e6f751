// Rate limiting per API key and request ids (docs/api-reference.md#request-ids, docs/api-reference.md#rate-limits), through HTTP against the real app.
// RATE_LIMIT '2/s,3': a bucket of 3 tokens per key, refilled at 2 tokens a second.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';

const BURST = 3;
const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

const wholeSeconds = (response: TestResponse, header: string) => {
  const value = response.headers.get(header);
  expect(value, header).toMatch(/^\d+$/);
  return Number(value);
};

describe.each(databaseKinds())('rate limit on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes], env: { RATE_LIMIT: '2/s,3' } });
  });
  afterAll(() => t?.close());

  /** Sends requests with `apiKey` until one is limited (at most burst + 3); returns every response. */
  const exhaust = async (apiKey: string) => {
    const responses: TestResponse[] = [];
    for (let i = 0; i < BURST + 3; i++) {
      const response = await t.request('GET', '/test/merchant-only', { apiKey });
      responses.push(response);
      if (response.status === 429) break;
    }
    return responses;
  };

  it('every response to an API key carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset', async () => {
    const merchant = await t.createMerchant();
    const first = await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey });
    expect(first.status).toBe(200);
    expect(wholeSeconds(first, 'ratelimit-limit')).toBe(BURST);
    expect(wholeSeconds(first, 'ratelimit-remaining')).toBe(BURST - 1);
    // One token used at 2 tokens/s: full again within a second.
    expect(wholeSeconds(first, 'ratelimit-reset')).toBe(1);

    const second = await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
    expect(second.status).toBe(200);
    expect(wholeSeconds(second, 'ratelimit-limit')).toBe(BURST);
    // The app's clock stands still between the two: no token came back.
    expect(wholeSeconds(second, 'ratelimit-remaining')).toBe(BURST - 2);
    expect(wholeSeconds(second, 'ratelimit-reset')).toBe(1);
  });

  it('an error answered to a valid key also carries the RateLimit headers', async () => {
    const partner = await t.createPartner();
    const response = await t.request('GET', '/test/merchant-only', { apiKey: partner.masterKey });
    expect(response.status).toBe(403);
    for (const header of RATE_LIMIT_HEADERS) expect(response.headers.get(header), header).toMatch(/^\d+$/);
    expect(wholeSeconds(response, 'ratelimit-limit')).toBe(BURST);
  });

  it('the request after the burst is answered 429 RATE_LIMITED with Retry-After in whole seconds', async () => {
    const merchant = await t.createMerchant();
    const responses = await exhaust(merchant.apiKey);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429]);

    const limited = responses.at(-1)!;
    expect(limited.body).toEqual({ type: 'rate_limit_error', code: 'RATE_LIMITED', message: expect.any(String) });
    // Empty at 2 tokens a second: one back in half a second (rounded up), all three in 1.5.
    expect(wholeSeconds(limited, 'retry-after')).toBe(1);
    expect(wholeSeconds(limited, 'ratelimit-limit')).toBe(BURST);
    expect(wholeSeconds(limited, 'ratelimit-remaining')).toBe(0);
    expect(wholeSeconds(limited, 'ratelimit-reset')).toBe(2);
    expect(limited.headers.get('x-request-id')).toMatch(SAFE_REQUEST_ID);
  });

  it('the limit is checked before key-level permissions: a key past its burst gets 429 even where it would get 403', async () => {
    const partner = await t.createPartner();
    const statuses: number[] = [];
    for (let i = 0; i < BURST + 1; i++) statuses.push((await t.request('GET', '/test/merchant-only', { apiKey: partner.masterKey })).status);
    expect(statuses).toEqual([403, 403, 403, 429]);
  });

  it('a limited key passes again once Retry-After has passed', async () => {
    const merchant = await t.createMerchant();
    const limited = (await exhaust(merchant.apiKey)).at(-1)!;
    expect(limited.status).toBe(429);

    // The buckets refill on the app's clock, moved here by hand: 0.8 of a token after 400 ms at 2 a second.
    t.clock.advance(400);
    expect((await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey })).status).toBe(429);
    t.clock.advance(wholeSeconds(limited, 'retry-after') * 1000 - 400);

    const response = await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey });
    expect(response.status).toBe(200);
  });

  it('buckets are per key: another key of the same merchant, and another merchant, still pass', async () => {
    const merchant = await t.createMerchant();
    const secondKey = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
    expect(secondKey.status).toBe(201);
    const otherMerchant = await t.createMerchant();
    expect((await exhaust(merchant.apiKey)).at(-1)!.status).toBe(429);

    const sameMerchant = await t.request('GET', '/test/merchant-only', { apiKey: secondKey.body.api_key });
    expect(sameMerchant.status).toBe(200);
    expect(sameMerchant.body).toEqual({ business_code: merchant.businessCode });
    expect(wholeSeconds(sameMerchant, 'ratelimit-remaining')).toBe(BURST - 1);

    const other = await t.request('GET', '/test/merchant-only', { apiKey: otherMerchant.apiKey });
    expect(other.status).toBe(200);
    expect(wholeSeconds(other, 'ratelimit-remaining')).toBe(BURST - 1);
  });

  it('an unknown key is answered 401, never 429, however often it is sent', async () => {
    const unknownKey = `mk_test_${'U'.repeat(32)}`;
    for (let i = 0; i < BURST + 3; i++) {
      const response = await t.request('GET', '/test/merchant-only', { apiKey: unknownKey });
      expect(response.status, `request ${i + 1}`).toBe(401);
      expect(response.body.code).toBe('API_KEY_INVALID');
      for (const header of RATE_LIMIT_HEADERS) expect(response.headers.get(header), header).toBeNull();
    }
  });

  it('a request without a key is answered 401 API_KEY_MISSING, never 429', async () => {
    for (let i = 0; i < BURST + 3; i++) {
      const response = await t.request('GET', '/api/v2/balance');
      expect(response.status, `request ${i + 1}`).toBe(401);
      expect(response.body.code).toBe('API_KEY_MISSING');
    }
  });

  it('routes without an API key (health, operator API) carry no RateLimit headers', async () => {
    const health = await t.request('GET', '/healthz');
    const admin = await t.request('GET', '/admin/v1/merchants');
    expect([health.status, admin.status]).toEqual([200, 200]);
    for (const header of RATE_LIMIT_HEADERS) {
      expect(health.headers.get(header), header).toBeNull();
      expect(admin.headers.get(header), header).toBeNull();
    }
  });

  describe('X-Request-Id', () => {
    it('a safe X-Request-Id is echoed', async () => {
      for (const requestId of ['order-42.retry:1', 'pos_7', 'A', 'x'.repeat(64), '550e8400-e29b-41d4-a716-446655440000']) {
        const response = await t.request('GET', '/healthz', { headers: { 'x-request-id': requestId } });
        expect(response.headers.get('x-request-id'), requestId).toBe(requestId);
      }
    });

    it('an unsafe or too long X-Request-Id is replaced by a generated one', async () => {
      for (const requestId of ['x'.repeat(65), 'has spaces in it', '../../etc/passwd', '<script>', 'a,b', 'semi;colon']) {
        const response = await t.request('GET', '/healthz', { headers: { 'x-request-id': requestId } });
        const echoed = response.headers.get('x-request-id');
        expect(echoed, requestId).not.toBe(requestId);
        expect(echoed, requestId).toMatch(SAFE_REQUEST_ID);
      }
    });

    it('a request without X-Request-Id gets a generated one, different for each request', async () => {
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push((await t.request('GET', '/healthz')).headers.get('x-request-id'));
      for (const id of ids) expect(id).toMatch(SAFE_REQUEST_ID);
      expect(new Set(ids).size).toBe(3);
    });

    it('errors and unknown routes carry X-Request-Id, echoed when safe', async () => {
      const merchant = await t.createMerchant();
      const cases: Array<[string, () => Promise<TestResponse>]> = [
        ['404 unknown route', () => t.request('GET', '/api/v2/no-such-thing', { headers: { 'x-request-id': 'rid-404' } })],
        ['401 missing key', () => t.request('GET', '/api/v2/balance', { headers: { 'x-request-id': 'rid-401' } })],
        ['403 wrong kind', () => t.request('GET', '/test/partner-only', { apiKey: merchant.apiKey, headers: { 'x-request-id': 'rid-403' } })],
        ['422 validation', () => t.request('POST', '/admin/v1/partners', { body: { name: '' }, headers: { 'x-request-id': 'rid-422' } })],
        ['400 malformed JSON', () => t.request('POST', '/admin/v1/partners', { rawBody: '{"name":', headers: { 'content-type': 'application/json', 'x-request-id': 'rid-400' } })],
      ];
      for (const [label, send] of cases) {
        const response = await send();
        const expectedStatus = Number(label.slice(0, 3));
        expect(response.status, label).toBe(expectedStatus);
        expect(response.headers.get('x-request-id'), label).toBe(`rid-${expectedStatus}`);
      }

      const unsafe = await t.request('GET', '/no/such/route', { headers: { 'x-request-id': 'not safe!' } });
      expect(unsafe.status).toBe(404);
      expect(unsafe.headers.get('x-request-id')).toMatch(SAFE_REQUEST_ID);
      expect(unsafe.headers.get('x-request-id')).not.toBe('not safe!');
    });
  });

  describe('with RATE_LIMIT=off', () => {
    let unlimited: TestApp;
    beforeAll(async () => {
      // A second app on the same database, configured without rate limiting.
      unlimited = await startTestApp({ kind, database: t.database, plugins: [fixtureRoutes], env: { RATE_LIMIT: 'off' } });
    });
    afterAll(() => unlimited?.close());

    it('no response carries RateLimit headers and no request is limited', async () => {
      const merchant = await unlimited.createMerchant();
      for (let i = 0; i < 3 * BURST; i++) {
        const response = await unlimited.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey });
        expect(response.status, `request ${i + 1}`).toBe(200);
        for (const header of RATE_LIMIT_HEADERS) expect(response.headers.get(header), header).toBeNull();
      }
    });
  });
});
