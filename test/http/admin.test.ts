// The operator API under /admin/v1 (docs/api-reference.md#operator-api), every route of src/merchants/admin-routes.ts, through HTTP
// against the real app: partners, merchants, keys (SHA-256 at rest, shown once), suspension, the ACH module
// and the ledger check.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';

const MERCHANT_KIND_PREFIX = 'mk_test_';
const PARTNER_KIND_PREFIX = 'pk_master_test_';
/** ≥ 128 random bits: at least 22 base62 characters after the kind prefix. */
const MERCHANT_KEY = /^mk_test_[0-9A-Za-z]{22,}$/;
const MASTER_KEY = /^pk_master_test_[0-9A-Za-z]{22,}$/;
const UNKNOWN_BUSINESS_CODE = 987_654;

const errorBody = (type: string, code: string) => ({ type, code, message: expect.any(String) });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each(databaseKinds())('operator API on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes], env: { TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(() => t?.close());

  // Declared first, so it runs before any other test of this file has created anything.
  describe('on a fresh database', () => {
    it('GET /ledger/check answers ok, having checked the balance of every merchant', async () => {
      const merchants = await t.request('GET', '/admin/v1/merchants');
      const response = await t.request('GET', '/admin/v1/ledger/check');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ balances_checked: merchants.body.data.length, entries_checked: expect.any(Number), ok: true, violations: [], problems: [] });
    });
  });

  describe('console users (docs/api-reference.md#invite-a-console-user)', () => {
    it('POST /merchants/{business_code}/users invites the owner: a single-use link for 72 hours; invited again, a new link; a bad body 422, an unknown merchant 404', async () => {
      const merchant = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Tienda con consola' } });
      const code = merchant.body.business_code as number;
      const invited = await t.request('POST', `/admin/v1/merchants/${code}/users`, { body: { email: `duena-${code}@example.com` } });
      expect(invited.status).toBe(201);
      expect(invited.body).toEqual({
        user: { id: expect.any(Number), business_code: code, email: `duena-${code}@example.com`, role: 'owner', status: 'invited', created_at: expect.any(String) },
        invitation_url: expect.stringMatching(/\/console\/invitations\/[A-Za-z0-9_-]{20,}$/),
        expires_at: new Date(Date.parse(invited.body.user.created_at) + 72 * 3_600_000).toISOString(),
      });
      const cashier = await t.request('POST', `/admin/v1/merchants/${code}/users`, { body: { email: `cajero-${code}@example.com`, role: 'cashier' } });
      expect(cashier.status).toBe(201);
      expect(cashier.body.user.role).toBe('cashier');

      // Invited again before accepting, whatever the case of the email: a new link replaces the old one
      // (an account already in use is 409 USER_EXISTS: test/console/users.test.ts).
      const again = await t.request('POST', `/admin/v1/merchants/${code}/users`, { body: { email: `Cajero-${code}@Example.com`, role: 'cashier' } });
      expect(again.status).toBe(201);
      expect(again.body.invitation_url).not.toBe(cashier.body.invitation_url);
      const malformed = await t.request('POST', `/admin/v1/merchants/${code}/users`, { body: { email: 'not an email', role: 'manager' } });
      expect(malformed.status).toBe(422);
      expect(malformed.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(['email', 'role']);
      const unknown = await t.request('POST', `/admin/v1/merchants/${UNKNOWN_BUSINESS_CODE}/users`, { body: { email: 'nadie@example.com' } });
      expect(unknown.status).toBe(404);
    });
  });

  describe('partners', () => {
    it('POST /partners creates a partner and shows its master key once, with its key_prefix', async () => {
      const response = await t.request('POST', '/admin/v1/partners', { body: { name: 'Banco Socio' } });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ id: expect.any(Number), name: 'Banco Socio', master_key: expect.stringMatching(MASTER_KEY), key_prefix: expect.any(String) });
      const { master_key: masterKey, key_prefix: keyPrefix } = response.body;
      expect(keyPrefix).toBe(masterKey.slice(0, PARTNER_KIND_PREFIX.length + 8));
      expect(keyPrefix).toHaveLength(PARTNER_KIND_PREFIX.length + 8);

      const use = await t.request('GET', '/test/partner-only', { apiKey: masterKey });
      expect(use.status).toBe(200);
      expect(use.body).toEqual({ partner_id: response.body.id });
    });

    it('POST /partners with a blank, missing or unknown field answers 422 naming each field', async () => {
      const blank = await t.request('POST', '/admin/v1/partners', { body: { name: '   ' } });
      expect(blank.status).toBe(422);
      expect(blank.body).toEqual({ ...errorBody('validation_error', 'VALIDATION_FAILED'), errors: [{ field: 'name', code: 'invalid_format', message: expect.any(String) }] });

      const missing = await t.request('POST', '/admin/v1/partners', { body: { nickname: 'x' } });
      expect(missing.status).toBe(422);
      expect(missing.body.errors).toEqual(expect.arrayContaining([
        { field: 'name', code: 'required', message: expect.any(String) },
        { field: 'nickname', code: 'unknown_field', message: expect.any(String) },
      ]));
      expect(missing.body.errors).toHaveLength(2);
    });

    it('GET /partners lists partners without their keys', async () => {
      const created = await t.createPartner('Listed Partner');
      const response = await t.request('GET', '/admin/v1/partners');
      expect(response.status).toBe(200);
      expect(response.body.data).toContainEqual({ id: created.partnerId, name: 'Listed Partner', created_at: t.clock.now().toISOString() });
      expect(response.text).not.toContain(created.masterKey);
      expect(response.text).not.toContain(created.keyPrefix);
    });

    it('POST /partners/{id}/master-keys creates another working master key', async () => {
      const partner = await t.createPartner();
      const response = await t.request('POST', `/admin/v1/partners/${partner.partnerId}/master-keys`);
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ master_key: expect.stringMatching(MASTER_KEY), key_prefix: response.body.master_key.slice(0, PARTNER_KIND_PREFIX.length + 8) });
      expect(response.body.master_key).not.toBe(partner.masterKey);

      const use = await t.request('GET', '/test/partner-only', { apiKey: response.body.master_key });
      expect(use.body).toEqual({ partner_id: partner.partnerId });
    });

    it('GET /partners/{id}/api-keys lists the master keys by prefix only', async () => {
      const partner = await t.createPartner();
      const second = await t.request('POST', `/admin/v1/partners/${partner.partnerId}/master-keys`);
      const response = await t.request('GET', `/admin/v1/partners/${partner.partnerId}/api-keys`);
      expect(response.status).toBe(200);
      const now = t.clock.now().toISOString();
      expect(response.body).toEqual({
        data: [
          { key_prefix: partner.keyPrefix, kind: 'partner', created_at: now, last_used_at: null, revoked_at: null },
          { key_prefix: second.body.key_prefix, kind: 'partner', created_at: now, last_used_at: null, revoked_at: null },
        ],
      });
      expect(response.text).not.toContain(partner.masterKey);
      expect(response.text).not.toContain(sha256(partner.masterKey));
    });

    it('master-key routes answer 404 for an unknown partner', async () => {
      for (const [method, path] of [['POST', '/admin/v1/partners/987654/master-keys'], ['GET', '/admin/v1/partners/987654/api-keys']] as const) {
        const response = await t.request(method, path);
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(response.body, `${method} ${path}`).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
      }
    });
  });

  describe('merchants', () => {
    it('POST /merchants with only a name uses the defaults: La Paz, mcc 5999, ACH off, no partner, the free plan of FEE_QR and FEE_TRANSFER unset', async () => {
      const response = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Café Pérez' } });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        business_code: expect.any(Number),
        name: 'Café Pérez',
        city: 'La Paz',
        mcc: '5999',
        ach_enabled: false,
        pricing: { qr_percent: 0, qr_fixed: 0, transfer_fixed: 0 },
        api_key: expect.stringMatching(MERCHANT_KEY),
        key_prefix: response.body.api_key.slice(0, MERCHANT_KIND_PREFIX.length + 8),
      });
      expect(response.body.key_prefix).toHaveLength(MERCHANT_KIND_PREFIX.length + 8);

      const shown = await t.request('GET', `/admin/v1/merchants/${response.body.business_code}`);
      expect(shown.status).toBe(200);
      const now = t.clock.now().toISOString();
      expect(shown.body).toEqual({
        business_code: response.body.business_code, name: 'Café Pérez', city: 'La Paz', mcc: '5999',
        status: 'active', ach_enabled: false, partner_id: null, pricing: { qr_percent: 0, qr_fixed: 0, transfer_fixed: 0 }, created_at: now, updated_at: now,
      });
    });

    it("the new merchant's key works at once and reads a zero balance", async () => {
      const merchant = await t.createMerchant({ name: 'Zero Balance' });
      const response = await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ business_code: merchant.businessCode, currency: 'BOB', available: 0, pending_out: 0 });
    });

    it('POST /merchants keeps explicit city, mcc, ACH module and partner', async () => {
      const partner = await t.createPartner();
      const body = { name: 'Farmacia Central', city: 'Santa Cruz', mcc: '5912', ach_enabled: true, partner_id: partner.partnerId };
      const response = await t.request('POST', '/admin/v1/merchants', { body });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ name: 'Farmacia Central', city: 'Santa Cruz', mcc: '5912', ach_enabled: true });

      const shown = await t.request('GET', `/admin/v1/merchants/${response.body.business_code}`);
      expect(shown.body).toMatchObject({ city: 'Santa Cruz', mcc: '5912', ach_enabled: true, partner_id: partner.partnerId, status: 'active' });
      expect((await t.request('POST', '/test/ach-only', { apiKey: response.body.api_key })).status).toBe(200);
    });

    it('each merchant gets its own business_code', async () => {
      const first = await t.createMerchant();
      const second = await t.createMerchant();
      expect(Number.isInteger(first.businessCode)).toBe(true);
      expect(second.businessCode).not.toBe(first.businessCode);
    });

    it('POST /merchants with an unknown partner_id answers 404 and creates nothing', async () => {
      const before = (await t.request('GET', '/admin/v1/merchants')).body.data.length;
      const response = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Orphan', partner_id: 987_654 } });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
      expect((await t.request('GET', '/admin/v1/merchants')).body.data).toHaveLength(before);
    });

    it('POST /merchants with a blank name answers 422 on name', async () => {
      const response = await t.request('POST', '/admin/v1/merchants', { body: { name: ' \t ' } });
      expect(response.status).toBe(422);
      expect(response.body).toEqual({ ...errorBody('validation_error', 'VALIDATION_FAILED'), errors: [{ field: 'name', code: 'invalid_format', message: expect.any(String) }] });
    });

    it('POST /merchants with an mcc that is not 4 digits answers 422 on mcc', async () => {
      for (const mcc of ['59a9', '599', '59999', '']) {
        const response = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Bad MCC', mcc } });
        expect(response.status, mcc).toBe(422);
        expect(response.body.errors, mcc).toEqual([{ field: 'mcc', code: 'invalid_format', message: expect.any(String) }]);
      }
      const numeric = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Bad MCC', mcc: 5999 } });
      expect(numeric.status).toBe(422);
      expect(numeric.body.errors).toEqual([{ field: 'mcc', code: 'invalid_type', message: expect.any(String) }]);
    });

    it('POST /merchants with an unknown field answers 422 unknown_field and creates nothing', async () => {
      const before = (await t.request('GET', '/admin/v1/merchants')).body.data.length;
      const response = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Typo', ach_enabeld: true } });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual([{ field: 'ach_enabeld', code: 'unknown_field', message: expect.any(String) }]);
      expect((await t.request('GET', '/admin/v1/merchants')).body.data).toHaveLength(before);
    });

    it('POST /merchants never coerces types and lists every failing field', async () => {
      const response = await t.request('POST', '/admin/v1/merchants', { body: { name: 42, ach_enabled: 'true', partner_id: '1', city: '' } });
      expect(response.status).toBe(422);
      const byField = Object.fromEntries(response.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]));
      expect(byField).toEqual({ name: 'invalid_type', ach_enabled: 'invalid_type', partner_id: 'invalid_type', city: 'required' });
    });

    it('GET /merchants lists merchants without keys', async () => {
      const merchant = await t.createMerchant({ name: 'Listed Merchant' });
      const response = await t.request('GET', '/admin/v1/merchants');
      expect(response.status).toBe(200);
      expect(response.body.data).toContainEqual(expect.objectContaining({ business_code: merchant.businessCode, name: 'Listed Merchant', status: 'active' }));
      expect(response.text).not.toContain(merchant.apiKey);
    });

    it('GET /merchants/{business_code} answers 404 for an unknown merchant and for a path that is not a business_code', async () => {
      const unknown = await t.request('GET', `/admin/v1/merchants/${UNKNOWN_BUSINESS_CODE}`);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
      for (const path of ['abc', '0x3e9', '1e3', '1001.0', '+1001', '01001', '0', '99999999999999999999']) {
        const notABusinessCode = await t.request('GET', `/admin/v1/merchants/${path}`);
        expect(notABusinessCode.status, path).toBe(404);
        expect(notABusinessCode.body).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
      }
    });

    it('PATCH /merchants/{business_code} turns the ACH module on and off', async () => {
      const merchant = await t.createMerchant();
      t.clock.advance(1_000);
      const on = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { ach_enabled: true } });
      expect(on.status).toBe(200);
      expect(on.body).toMatchObject({ business_code: merchant.businessCode, ach_enabled: true, status: 'active', updated_at: t.clock.now().toISOString() });
      expect(on.body.created_at).not.toBe(on.body.updated_at);

      const off = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { ach_enabled: false } });
      expect(off.body).toMatchObject({ ach_enabled: false, status: 'active' });
      expect((await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}`)).body.ach_enabled).toBe(false);
    });

    it('PATCH /merchants/{business_code} suspends and reactivates, leaving the ACH module as it was', async () => {
      const merchant = await t.createMerchant({ ach_enabled: true });
      const suspended = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'suspended' } });
      expect(suspended.status).toBe(200);
      expect(suspended.body).toMatchObject({ status: 'suspended', ach_enabled: true });
      expect((await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}`)).body.status).toBe('suspended');

      const active = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'active' } });
      expect(active.body).toMatchObject({ status: 'active', ach_enabled: true });
    });

    it('PATCH /merchants/{business_code} with an unknown status or field answers 422 and changes nothing', async () => {
      const merchant = await t.createMerchant();
      const badStatus = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'frozen' } });
      expect(badStatus.status).toBe(422);
      expect(badStatus.body.errors).toEqual([{ field: 'status', code: 'invalid_value', message: expect.any(String) }]);

      const unknownField = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { name: 'Renamed' } });
      expect(unknownField.status).toBe(422);
      expect(unknownField.body.errors).toEqual([{ field: 'name', code: 'unknown_field', message: expect.any(String) }]);

      const notBoolean = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { ach_enabled: 1 } });
      expect(notBoolean.status).toBe(422);
      expect(notBoolean.body.errors).toEqual([{ field: 'ach_enabled', code: 'invalid_type', message: expect.any(String) }]);

      expect((await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}`)).body).toMatchObject({ name: 'Test Merchant', status: 'active', ach_enabled: false });
    });

    it('PATCH /merchants/{business_code} answers 404 for an unknown merchant', async () => {
      const response = await t.request('PATCH', `/admin/v1/merchants/${UNKNOWN_BUSINESS_CODE}`, { body: { status: 'suspended' } });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
    });
  });

  describe('API keys', () => {
    it('POST /merchants/{business_code}/api-keys creates another working key', async () => {
      const merchant = await t.createMerchant();
      const response = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ api_key: expect.stringMatching(MERCHANT_KEY), key_prefix: response.body.api_key.slice(0, MERCHANT_KIND_PREFIX.length + 8), kind: 'merchant' });
      expect(response.body.api_key).not.toBe(merchant.apiKey);

      const use = await t.request('GET', '/test/merchant-only', { apiKey: response.body.api_key });
      expect(use.body).toEqual({ business_code: merchant.businessCode });
    });

    it('GET /merchants/{business_code}/api-keys lists prefixes and dates, never a key or its hash', async () => {
      const merchant = await t.createMerchant();
      const second = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      const response = await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      expect(response.status).toBe(200);
      const now = t.clock.now().toISOString();
      expect(response.body).toEqual({
        data: [
          { key_prefix: merchant.keyPrefix, kind: 'merchant', created_at: now, last_used_at: null, revoked_at: null },
          { key_prefix: second.body.key_prefix, kind: 'merchant', created_at: now, last_used_at: null, revoked_at: null },
        ],
      });
      for (const secret of [merchant.apiKey, second.body.api_key, sha256(merchant.apiKey), sha256(second.body.api_key)]) {
        expect(response.text).not.toContain(secret);
      }
    });

    it("a merchant's key list shows only that merchant's keys", async () => {
      const merchant = await t.createMerchant();
      const other = await t.createMerchant();
      const response = await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      expect(response.body.data.map((k: { key_prefix: string }) => k.key_prefix)).toEqual([merchant.keyPrefix]);
      expect(response.text).not.toContain(other.keyPrefix);
    });

    it('key routes answer 404 for an unknown merchant', async () => {
      for (const method of ['POST', 'GET'] as const) {
        const response = await t.request(method, `/admin/v1/merchants/${UNKNOWN_BUSINESS_CODE}/api-keys`);
        expect(response.status, method).toBe(404);
        expect(response.body, method).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
      }
    });

    it('DELETE /api-keys/{key_prefix} revokes the key: 204, then listed with revoked_at', async () => {
      const merchant = await t.createMerchant();
      t.clock.advance(1_000);
      const response = await t.request('DELETE', `/admin/v1/api-keys/${merchant.keyPrefix}`);
      expect(response.status).toBe(204);
      expect(response.text).toBe('');

      const listing = await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      expect(listing.body.data).toEqual([expect.objectContaining({ key_prefix: merchant.keyPrefix, revoked_at: t.clock.now().toISOString() })]);
    });

    it('revoking a key a second time answers 404, and so does an unknown prefix', async () => {
      const merchant = await t.createMerchant();
      expect((await t.request('DELETE', `/admin/v1/api-keys/${merchant.keyPrefix}`)).status).toBe(204);
      const again = await t.request('DELETE', `/admin/v1/api-keys/${merchant.keyPrefix}`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));

      const unknown = await t.request('DELETE', '/admin/v1/api-keys/mk_test_00000000');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
    });

    it('DELETE /api-keys/{key_prefix} also revokes a partner master key', async () => {
      const partner = await t.createPartner();
      expect((await t.request('DELETE', `/admin/v1/api-keys/${partner.keyPrefix}`)).status).toBe(204);
      const listing = await t.request('GET', `/admin/v1/partners/${partner.partnerId}/api-keys`);
      expect(listing.body.data).toEqual([expect.objectContaining({ key_prefix: partner.keyPrefix, revoked_at: t.clock.now().toISOString() })]);
    });

    it('keys are stored as SHA-256 only: no column holds the plain key', async () => {
      const merchant = await t.createMerchant();
      const partner = await t.createPartner();
      for (const { key, prefix } of [{ key: merchant.apiKey, prefix: merchant.keyPrefix }, { key: partner.masterKey, prefix: partner.keyPrefix }]) {
        const { rows } = await t.db.query<Record<string, unknown>>('select * from api_keys where key_prefix = $1', [prefix]);
        expect(rows).toHaveLength(1);
        const row = rows[0]!;
        expect(row.key_hash).toBe(sha256(key));
        const secretPart = key.slice(prefix.length);
        for (const [column, value] of Object.entries(row)) {
          const text = value instanceof Date ? value.toISOString() : String(value);
          expect(text, column).not.toContain(key);
          expect(text, column).not.toContain(secretPart);
        }
      }
    });

    it('the plain key appears in no table of the database', async () => {
      const merchant = await t.createMerchant();
      const secretPart = merchant.apiKey.slice(merchant.keyPrefix.length);
      const { rows: tables } = await t.db.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'");
      expect(tables.map((row) => row.table_name)).toContain('api_keys');
      const rowsContaining = async (table: string, text: string) => (await t.db.query<{ hits: number }>(
        `select count(*)::int as hits from "${table.replace(/"/g, '""')}" as row_value where strpos(row_value::text, $1::text) > 0`, [text])).rows[0]!.hits;
      // The search does find what is stored in clear: the key's prefix.
      expect(await rowsContaining('api_keys', merchant.keyPrefix)).toBe(1);
      for (const { table_name: table } of tables) expect(await rowsContaining(table, secretPart), table).toBe(0);
    });
  });

  describe('ledger check', () => {
    it('GET /ledger/check answers ok with every balance checked and no violations', async () => {
      await t.createMerchant();
      const merchants = (await t.request('GET', '/admin/v1/merchants')).body.data;
      const response = await t.request('GET', '/admin/v1/ledger/check');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ balances_checked: merchants.length, entries_checked: expect.any(Number), ok: true, violations: [], problems: [] });
    });

  });

  describe('operator token on every route', () => {
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/admin/v1/partners', { name: 'X' }],
      ['GET', '/admin/v1/partners'],
      ['POST', '/admin/v1/partners/1/master-keys'],
      ['GET', '/admin/v1/partners/1/api-keys'],
      ['POST', '/admin/v1/merchants', { name: 'X' }],
      ['GET', '/admin/v1/merchants'],
      ['GET', '/admin/v1/merchants/1000'],
      ['PATCH', '/admin/v1/merchants/1000', { status: 'suspended' }],
      ['POST', '/admin/v1/merchants/1000/api-keys'],
      ['GET', '/admin/v1/merchants/1000/api-keys'],
      ['DELETE', '/admin/v1/api-keys/mk_test_abcdefgh'],
      ['GET', '/admin/v1/ledger/check'],
    ];

    it('every operator route answers 401 ADMIN_TOKEN_INVALID without the right bearer token', async () => {
      for (const [index, [method, path, body]] of routes.entries()) {
        for (const adminToken of [null, 'wrong-token-0123456789']) {
          // Each wrong token from its own network: ten from one would lock it out (429, test/http/token-lockout.test.ts).
          const response = await t.request(method, path, { body, adminToken, headers: { 'x-forwarded-for': `203.0.113.${index + 1}` } });
          expect(response.status, `${method} ${path} with ${adminToken}`).toBe(401);
          expect(response.body, `${method} ${path}`).toEqual(errorBody('authentication_error', 'ADMIN_TOKEN_INVALID'));
        }
      }
      // Nothing was changed by the refused requests.
      expect((await t.request('GET', '/admin/v1/merchants/1000')).body.status).toBe('active');
    });
  });
});
