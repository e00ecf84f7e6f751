// Keys bound to their mode and terminal keys (docs/api-reference.md#authentication,
// docs/api-reference.md#terminal-keys): a sandbox key never works on a live service, and a POS or kiosk
// holds a key that can take payments but never move money out.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';
import { postTransfer, transferBody } from '../transfers/helpers.ts';

const errorBody = (type: string, code: string) => ({ type, code, message: expect.any(String) });

describe.each(databaseKinds())('keys and their mode on %s', (kind) => {
  let sandbox: TestApp;
  let live: TestApp;
  beforeAll(async () => {
    sandbox = await startTestApp({ kind });
    // The same database, restarted in live mode: what an operator who once ran a sandbox would get.
    live = await startLiveApp({ kind, database: sandbox.database, clock: sandbox.clock });
  });
  afterAll(async () => {
    await live?.close();
    await sandbox?.close();
  });

  it('mints _test_ keys in sandbox and _live_ keys in live', async () => {
    expect((await sandbox.createMerchant()).apiKey).toMatch(/^mk_test_[0-9A-Za-z]{32}$/);
    expect((await live.createMerchant()).apiKey).toMatch(/^mk_live_[0-9A-Za-z]{32}$/);
    expect((await sandbox.createPartner()).masterKey).toMatch(/^pk_master_test_/);
    expect((await live.createPartner()).masterKey).toMatch(/^pk_master_live_/);
  });

  it('refuses a sandbox key on the live service with 401 naming the mode, and writes nothing', async () => {
    const merchant = await sandbox.createMerchant({ ach_enabled: true });
    const qr = await createQr(sandbox, merchant, { amount: 100 });
    expect((await pay(sandbox, merchant, qr.id)).status).toBe(201);

    const balance = await live.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
    expect(balance.status).toBe(401);
    expect(balance.body).toEqual(errorBody('authentication_error', 'API_KEY_INVALID'));
    expect(balance.body.message).toMatch(/sandbox.*live/);

    const transfer = await postTransfer(live, merchant, transferBody(merchant.businessCode, { amount: '10.00' }));
    expect(transfer.status).toBe(401);
    const transfers = await sandbox.request('GET', '/api/v2/transfers', { apiKey: merchant.apiKey });
    expect(transfers.body.meta.total).toBe(0);
  });

  it('refuses a live key on the sandbox service, naming the mode', async () => {
    const merchant = await live.createMerchant();
    const response = await sandbox.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
    expect(response.status).toBe(401);
    expect(response.body.message).toMatch(/live.*sandbox/);
  });
});

describe.each(databaseKinds())('terminal keys on %s', (kind) => {
  let t: TestApp;
  let merchant: { businessCode: number; apiKey: string; keyPrefix: string };
  let terminal: { businessCode: number; apiKey: string; keyPrefix: string };
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant({ ach_enabled: true });
    const created = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`, { body: { kind: 'terminal' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ api_key: expect.stringMatching(/^tk_test_[0-9A-Za-z]{32}$/), key_prefix: expect.stringMatching(/^tk_test_[0-9A-Za-z]{8}$/), kind: 'terminal' });
    terminal = { businessCode: merchant.businessCode, apiKey: created.body.api_key, keyPrefix: created.body.key_prefix };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('creates, reads, lists, pays in the sandbox and cancels QRs, and reads their payments', async () => {
    const qr = await createQr(t, terminal, { amount: 25 });
    expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: terminal.apiKey })).status).toBe(200);
    expect((await t.request('GET', '/api/v2/simple-qrs', { apiKey: terminal.apiKey })).body.meta.total).toBeGreaterThan(0);
    expect((await pay(t, terminal, qr.id)).status).toBe(201);
    const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: terminal.apiKey });
    expect(payments.status).toBe(200);
    expect(payments.body.meta.total).toBe(1);
    const other = await createQr(t, terminal, { amount: 5 });
    const canceled = await t.request('POST', `/api/v2/simple-qrs/${other.id}/cancel`, { apiKey: terminal.apiKey });
    expect(canceled.status).toBe(200);
    // The merchant's own key sees the terminal's QRs: they are the merchant's.
    expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.status).toBe('PAID');
  });

  it('is refused with 403 KEY_SCOPE_INSUFFICIENT everywhere else, before its body is read', async () => {
    const outside: Array<[string, string, unknown?]> = [
      ['POST', '/api/v2/transfers', { not: 'even valid' }],
      ['GET', '/api/v2/transfers'],
      ['GET', '/api/v2/balance'],
      ['GET', '/api/v2/balance/movements'],
      ['GET', '/api/v2/banks'],
      ['GET', '/api/v2/webhook-endpoints'],
      ['POST', '/api/v2/webhook-endpoints', { url: 'https://shop.example/hook' }],
      ['GET', '/api/v2/events'],
      ['POST', '/api/v2/onboarding/intent', {}],
      ['POST', '/api/v2/sandbox/transfers/1/advance', { to: 'COMPLETED' }],
    ];
    for (const [method, path, body] of outside) {
      const response = await t.request(method, path, { apiKey: terminal.apiKey, body, headers: { 'idempotency-key': randomUUID() } });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body, `${method} ${path}`).toEqual(errorBody('permission_error', 'KEY_SCOPE_INSUFFICIENT'));
    }
    const endpoints = await t.request('GET', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey });
    expect(endpoints.body.meta.total).toBe(0);
  });

  it('is listed with its kind and revoked like any key', async () => {
    const keys = await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
    expect(keys.body.data).toContainEqual(expect.objectContaining({ key_prefix: terminal.keyPrefix, kind: 'terminal', revoked_at: null }));
    expect(keys.body.data).toContainEqual(expect.objectContaining({ key_prefix: merchant.keyPrefix, kind: 'merchant' }));
    const revoked = await t.request('DELETE', `/admin/v1/api-keys/${terminal.keyPrefix}`);
    expect(revoked.status).toBe(204);
    await expect.poll(async () => (await t.request('GET', '/api/v2/simple-qrs', { apiKey: terminal.apiKey })).status, { timeout: 5_500 }).toBe(401);
  });

  it('the kind defaults to merchant, and any other kind is a 422', async () => {
    const plain = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
    expect(plain.status).toBe(201);
    expect(plain.body.kind).toBe('merchant');
    expect(plain.body.api_key).toMatch(/^mk_test_/);
    const partner = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`, { body: { kind: 'partner' } });
    expect(partner.status).toBe(422);
    expect(partner.body.errors).toEqual([expect.objectContaining({ field: 'kind', code: 'invalid_value' })]);
  });
});
