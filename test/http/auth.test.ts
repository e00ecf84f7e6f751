// Authentication and key-level permissions (docs/api-reference.md#authentication, docs/api-reference.md#errors, docs/api-reference.md#operator-api), through HTTP against the real app: API keys,
// master keys, suspension, the ACH module, the operator token, key use tracking, and revocation seen by a
// second instance on the same PostgreSQL database.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';

/** docs/api-reference.md#authentication: revocation and suspension take effect within 5 s; the poll allows a little over that. */
const PROPAGATION_LIMIT_MS = 5_500;

/** Repeats `probe` until `done` accepts its answer or `limitMs` passes; returns the last answer. */
async function eventually(probe: () => Promise<TestResponse>, done: (response: TestResponse) => boolean, limitMs = PROPAGATION_LIMIT_MS): Promise<TestResponse> {
  const deadline = Date.now() + limitMs;
  let response = await probe();
  while (!done(response) && Date.now() < deadline) {
    await sleep(100);
    response = await probe();
  }
  return response;
}

const errorBody = (type: string, code: string) => ({ type, code, message: expect.any(String) });
const WELL_FORMED_UNKNOWN_KEY = `mk_test_${'Z'.repeat(32)}`;

describe.each(databaseKinds())('authentication on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t?.close());

  const keysOf = async (businessCode: number) => {
    const response = await t.request('GET', `/admin/v1/merchants/${businessCode}/api-keys`);
    expect(response.status).toBe(200);
    return response.body.data as Array<{ key_prefix: string; created_at: string; last_used_at: string | null; revoked_at: string | null }>;
  };
  const keyListing = async (businessCode: number, keyPrefix: string) => (await keysOf(businessCode)).find((k) => k.key_prefix === keyPrefix);

  describe('API keys', () => {
    it('a request without X-API-KEY is answered 401 API_KEY_MISSING', async () => {
      const absent = await t.request('GET', '/test/merchant-only');
      expect(absent.status).toBe(401);
      expect(absent.body).toEqual(errorBody('authentication_error', 'API_KEY_MISSING'));

      const empty = await t.request('GET', '/api/v2/balance', { headers: { 'x-api-key': '' } });
      expect(empty.status).toBe(401);
      expect(empty.body).toEqual(errorBody('authentication_error', 'API_KEY_MISSING'));
    });

    it('a malformed key is answered 401 API_KEY_INVALID', async () => {
      for (const apiKey of ['hello', 'mk_test_short', 'Bearer mk_test_abc', `${WELL_FORMED_UNKNOWN_KEY}x`]) {
        const response = await t.request('GET', '/test/merchant-only', { apiKey });
        expect(response.status, apiKey).toBe(401);
        expect(response.body, apiKey).toEqual(errorBody('authentication_error', 'API_KEY_INVALID'));
      }
    });

    it('an unknown key of the right shape is answered 401 API_KEY_INVALID', async () => {
      const merchant = await t.createMerchant();
      const lastCharacter = merchant.apiKey.at(-1);
      const altered = merchant.apiKey.slice(0, -1) + (lastCharacter === 'a' ? 'b' : 'a');
      for (const apiKey of [WELL_FORMED_UNKNOWN_KEY, altered, `pk_master_test_${'Q'.repeat(32)}`]) {
        const response = await t.request('GET', '/test/merchant-only', { apiKey });
        expect(response.status, apiKey).toBe(401);
        expect(response.body, apiKey).toEqual(errorBody('authentication_error', 'API_KEY_INVALID'));
      }
    });

    it("a merchant's key reaches merchant routes as that merchant", async () => {
      const merchant = await t.createMerchant();
      const response = await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ business_code: merchant.businessCode });
    });

    it('a revoked key is answered 401 API_KEY_INVALID within 5 seconds', async () => {
      const merchant = await t.createMerchant();
      // The key is verified (and cached) before it is revoked.
      expect((await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey })).status).toBe(200);

      expect((await t.request('DELETE', `/admin/v1/api-keys/${merchant.keyPrefix}`)).status).toBe(204);

      const response = await eventually(() => t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey }), (r) => r.status !== 200);
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody('authentication_error', 'API_KEY_INVALID'));
    });

    it("revoking one key leaves the merchant's other keys working", async () => {
      const merchant = await t.createMerchant();
      const second = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      expect(second.status).toBe(201);
      expect((await t.request('GET', '/test/merchant-only', { apiKey: second.body.api_key })).status).toBe(200);

      expect((await t.request('DELETE', `/admin/v1/api-keys/${merchant.keyPrefix}`)).status).toBe(204);
      const revoked = await eventually(() => t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey }), (r) => r.status !== 200);
      expect(revoked.status).toBe(401);

      const other = await t.request('GET', '/test/merchant-only', { apiKey: second.body.api_key });
      expect(other.status).toBe(200);
      expect(other.body).toEqual({ business_code: merchant.businessCode });
    });

    it('a revoked partner master key is answered 401 API_KEY_INVALID within 5 seconds', async () => {
      const partner = await t.createPartner();
      expect((await t.request('GET', '/test/partner-only', { apiKey: partner.masterKey })).status).toBe(200);

      expect((await t.request('DELETE', `/admin/v1/api-keys/${partner.keyPrefix}`)).status).toBe(204);

      const response = await eventually(() => t.request('GET', '/test/partner-only', { apiKey: partner.masterKey }), (r) => r.status !== 200);
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody('authentication_error', 'API_KEY_INVALID'));
    });
  });

  describe('suspension', () => {
    it("a suspended merchant's key is answered 403 MERCHANT_SUSPENDED within 5 seconds", async () => {
      const merchant = await t.createMerchant();
      expect((await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).status).toBe(200);

      const patched = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'suspended' } });
      expect(patched.status).toBe(200);

      const response = await eventually(() => t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey }), (r) => r.status !== 200);
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody('permission_error', 'MERCHANT_SUSPENDED'));
    });

    it("a reactivated merchant's key works again within 5 seconds", async () => {
      const merchant = await t.createMerchant();
      await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'suspended' } });
      const suspended = await eventually(() => t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey }), (r) => r.status === 403);
      expect(suspended.status).toBe(403);

      const patched = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'active' } });
      expect(patched.status).toBe(200);

      const response = await eventually(() => t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey }), (r) => r.status !== 403);
      expect(response.status).toBe(200);
      expect(response.body.business_code).toBe(merchant.businessCode);
    });

    it("suspending one merchant leaves other merchants' keys working", async () => {
      const suspended = await t.createMerchant({ name: 'Suspended' });
      const other = await t.createMerchant({ name: 'Unaffected' });
      await t.request('PATCH', `/admin/v1/merchants/${suspended.businessCode}`, { body: { status: 'suspended' } });
      const refused = await eventually(() => t.request('GET', '/test/merchant-only', { apiKey: suspended.apiKey }), (r) => r.status === 403);
      expect(refused.status).toBe(403);

      const response = await t.request('GET', '/test/merchant-only', { apiKey: other.apiKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ business_code: other.businessCode });
    });
  });

  describe('kinds of key', () => {
    it('a merchant key on a partner route is answered 403 MASTER_KEY_REQUIRED', async () => {
      const merchant = await t.createMerchant();
      const response = await t.request('GET', '/test/partner-only', { apiKey: merchant.apiKey });
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody('permission_error', 'MASTER_KEY_REQUIRED'));
    });

    it('a master key on a merchant route is answered 403 MERCHANT_KEY_REQUIRED', async () => {
      const partner = await t.createPartner();
      for (const path of ['/test/merchant-only', '/api/v2/balance']) {
        const response = await t.request('GET', path, { apiKey: partner.masterKey });
        expect(response.status, path).toBe(403);
        expect(response.body, path).toEqual(errorBody('permission_error', 'MERCHANT_KEY_REQUIRED'));
      }
    });

    it('a master key reaches partner routes as its partner', async () => {
      const partner = await t.createPartner();
      const response = await t.request('GET', '/test/partner-only', { apiKey: partner.masterKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ partner_id: partner.partnerId });
    });

    it('a route open to merchants and partners takes both kinds of key', async () => {
      const merchant = await t.createMerchant();
      const partner = await t.createPartner();
      const asMerchant = await t.request('GET', '/test/either', { apiKey: merchant.apiKey });
      const asPartner = await t.request('GET', '/test/either', { apiKey: partner.masterKey });
      expect([asMerchant.status, asMerchant.body]).toEqual([200, { kind: 'merchant' }]);
      expect([asPartner.status, asPartner.body]).toEqual([200, { kind: 'partner' }]);
    });

    it('an unknown key is answered 401 before any permission check', async () => {
      const response = await t.request('GET', '/test/partner-only', { apiKey: WELL_FORMED_UNKNOWN_KEY });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('API_KEY_INVALID');
    });
  });

  describe('ACH module', () => {
    it('a merchant without the ACH module is answered 403 MODULE_NOT_ENABLED on an ACH route', async () => {
      const merchant = await t.createMerchant();
      const response = await t.request('POST', '/test/ach-only', { apiKey: merchant.apiKey });
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody('permission_error', 'MODULE_NOT_ENABLED'));
    });

    it('a merchant created with the ACH module reaches an ACH route', async () => {
      const merchant = await t.createMerchant({ ach_enabled: true });
      const response = await t.request('POST', '/test/ach-only', { apiKey: merchant.apiKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ ok: true });
    });

    it('turning the ACH module on lets the merchant through within 5 seconds', async () => {
      const merchant = await t.createMerchant();
      expect((await t.request('POST', '/test/ach-only', { apiKey: merchant.apiKey })).status).toBe(403);

      const patched = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { ach_enabled: true } });
      expect(patched.status).toBe(200);

      const response = await eventually(() => t.request('POST', '/test/ach-only', { apiKey: merchant.apiKey }), (r) => r.status !== 403);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ ok: true });
    });

    it('turning the ACH module off refuses the merchant within 5 seconds', async () => {
      const merchant = await t.createMerchant({ ach_enabled: true });
      expect((await t.request('POST', '/test/ach-only', { apiKey: merchant.apiKey })).status).toBe(200);

      await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { ach_enabled: false } });

      const response = await eventually(() => t.request('POST', '/test/ach-only', { apiKey: merchant.apiKey }), (r) => r.status !== 200);
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody('permission_error', 'MODULE_NOT_ENABLED'));
    });

    it('a merchant without the ACH module still reaches routes that do not need it', async () => {
      const merchant = await t.createMerchant();
      expect((await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey })).status).toBe(200);
    });
  });

  describe('operator token', () => {
    it('a wrong bearer token is answered 401 ADMIN_TOKEN_INVALID', async () => {
      const wrongHeaders = ['Bearer wrong-token-0123456789', 'Bearer xtest-admin-token-0123456789', 'Bearer ', 'Basic dGVzdDp0ZXN0', 'test-admin-token-0123456789'];
      for (const authorization of wrongHeaders) {
        const response = await t.request('GET', '/admin/v1/merchants', { headers: { authorization } });
        expect(response.status, authorization).toBe(401);
        expect(response.body, authorization).toEqual(errorBody('authentication_error', 'ADMIN_TOKEN_INVALID'));
      }
    });

    it('a request without a bearer token is answered 401 ADMIN_TOKEN_INVALID', async () => {
      const response = await t.request('POST', '/admin/v1/partners', { adminToken: null, body: { name: 'Nobody' } });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody('authentication_error', 'ADMIN_TOKEN_INVALID'));
    });

    it('an API key is not an operator credential', async () => {
      const merchant = await t.createMerchant();
      const response = await t.request('GET', '/admin/v1/merchants', { adminToken: null, apiKey: merchant.apiKey });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe('ADMIN_TOKEN_INVALID');
    });

    it('with ADMIN_TOKEN unset the operator API answers 404', async () => {
      // A second app on the same database, configured without ADMIN_TOKEN.
      const withoutAdmin = await startTestApp({ kind, database: t.database, env: { ADMIN_TOKEN: '' } });
      try {
        expect(withoutAdmin.config.adminToken).toBeNull();
        for (const [method, path, body] of [
          ['GET', '/admin/v1/merchants', undefined],
          ['POST', '/admin/v1/partners', { name: 'Nobody' }],
          ['DELETE', '/admin/v1/api-keys/mk_test_abcdefgh', undefined],
        ] as const) {
          const withToken = await withoutAdmin.request(method, path, { body });
          expect(withToken.status, `${method} ${path}`).toBe(404);
          expect(withToken.body, `${method} ${path}`).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
          const withoutToken = await withoutAdmin.request(method, path, { body, adminToken: null });
          expect(withoutToken.status, `${method} ${path} without a token`).toBe(404);
        }
      } finally {
        await withoutAdmin.close();
      }
    });
  });

  describe('last_used_at', () => {
    it('a key that was never used lists last_used_at null', async () => {
      const merchant = await t.createMerchant();
      expect(await keyListing(merchant.businessCode, merchant.keyPrefix)).toMatchObject({ last_used_at: null, revoked_at: null });
    });

    it("using a key records the time of use in the merchant's key list", async () => {
      const merchant = await t.createMerchant();
      const unused = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      const usedAt = t.clock.now().toISOString();
      expect((await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey })).status).toBe(200);

      const listing = await eventually(() => t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`),
        (r) => r.body.data.find((k: { key_prefix: string }) => k.key_prefix === merchant.keyPrefix)?.last_used_at !== null);
      const byPrefix = new Map(listing.body.data.map((k: { key_prefix: string }) => [k.key_prefix, k]));
      expect(byPrefix.get(merchant.keyPrefix)).toMatchObject({ last_used_at: usedAt });
      expect(byPrefix.get(unused.body.key_prefix)).toMatchObject({ last_used_at: null });
    });

    it('further uses within a minute do not rewrite last_used_at', async () => {
      const merchant = await t.createMerchant();
      const firstUse = t.clock.now().toISOString();
      await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey });
      await eventually(() => t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`),
        (r) => r.body.data[0]?.last_used_at !== null);

      t.clock.advance(30_000);
      for (let i = 0; i < 3; i++) expect((await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey })).status).toBe(200);

      // A write the later uses might have issued is queued before this fresh key's first-use write: once
      // that one is visible, the other would be too.
      const witness = await t.createMerchant();
      await t.request('GET', '/test/merchant-only', { apiKey: witness.apiKey });
      const witnessed = await eventually(() => t.request('GET', `/admin/v1/merchants/${witness.businessCode}/api-keys`),
        (r) => r.body.data[0]?.last_used_at !== null);
      expect(witnessed.body.data[0].last_used_at).toBe(t.clock.now().toISOString());

      expect(await keyListing(merchant.businessCode, merchant.keyPrefix)).toMatchObject({ last_used_at: firstUse });
    });

    it('a use more than a minute after the recorded one updates last_used_at', async () => {
      const merchant = await t.createMerchant();
      await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey });
      const first = await eventually(() => t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`),
        (r) => r.body.data[0]?.last_used_at !== null);
      expect(first.body.data[0].last_used_at).toBe(t.clock.now().toISOString());

      t.clock.advance(61_000);
      const laterUse = t.clock.now().toISOString();
      expect((await t.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey })).status).toBe(200);

      const later = await eventually(() => t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`),
        (r) => r.body.data[0]?.last_used_at === laterUse, 2_000);
      expect(later.body.data[0].last_used_at).toBe(laterUse);
    });
  });
});

describeOnPostgres('two instances on one %s database', (kind) => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    first = await startTestApp({ kind, plugins: [fixtureRoutes] });
    second = await startTestApp({ kind, database: first.database, separatePool: true, plugins: [fixtureRoutes] });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('a key revoked through one instance is answered 401 by the other within 5 seconds', async () => {
    const merchant = await first.createMerchant();
    // The second instance has verified and cached the key.
    expect((await second.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey })).status).toBe(200);

    expect((await first.request('DELETE', `/admin/v1/api-keys/${merchant.keyPrefix}`)).status).toBe(204);

    const response = await eventually(() => second.request('GET', '/test/merchant-only', { apiKey: merchant.apiKey }), (r) => r.status !== 200);
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('authentication_error', 'API_KEY_INVALID'));
  });

  it('a merchant suspended through one instance is answered 403 MERCHANT_SUSPENDED by the other within 5 seconds', async () => {
    const merchant = await first.createMerchant();
    expect((await second.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).status).toBe(200);

    expect((await first.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);

    const response = await eventually(() => second.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey }), (r) => r.status !== 200);
    expect(response.status).toBe(403);
    expect(response.body).toEqual(errorBody('permission_error', 'MERCHANT_SUSPENDED'));
  });
});
