import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { balanceOf, fund, fundedMerchant, postTransfer, transferBody } from './helpers.ts';

describe.each(databaseKinds())('transfer idempotency on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t.close());

  const transfersOf = async (merchant: { apiKey: string }) =>
    (await t.request('GET', '/api/v2/transfers?per_page=100', { apiKey: merchant.apiKey })).body;

  it('replays the same key and body with the stored 201 and Idempotent-Replayed, moving no money again', async () => {
    const merchant = await fundedMerchant(t, '500.00');
    const key = randomUUID();
    const first = await postTransfer(t, merchant, transferBody(merchant.businessCode), key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const balanceAfterFirst = await balanceOf(t, merchant);
    const second = await postTransfer(t, merchant, transferBody(merchant.businessCode), key);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await balanceOf(t, merchant)).toEqual(balanceAfterFirst);
    const list = await transfersOf(merchant);
    expect(list.meta.total).toBe(1);
    const movements = await t.db.query('select id from movements where business_code = $1::bigint and type = $2::text', [merchant.businessCode, 'transfer']);
    expect(movements.rows).toHaveLength(1);
  });

  it('treats 0.1 and "0.10", and any key order, as the same request', async () => {
    const merchant = await fundedMerchant(t, '500.00');
    const key = randomUUID();
    const body = transferBody(merchant.businessCode, { amount: 0.1 });
    const first = await postTransfer(t, merchant, body, key);
    expect(first.status).toBe(201);
    const reordered = { destination: { account_titular: 'Juan Pérez', account_number: '20150123455678', bank_code: 1014, type: 'bank_account' }, reference: 'Payroll Nov', currency: 'BOB', amount: '0.10', business_code: merchant.businessCode };
    const second = await postTransfer(t, merchant, reordered, key);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the same key with a different body', async () => {
    const merchant = await fundedMerchant(t, '500.00');
    const key = randomUUID();
    expect((await postTransfer(t, merchant, transferBody(merchant.businessCode), key)).status).toBe(201);
    for (const change of [{ amount: 100.26 }, { reference: 'Other' }, { destination: { type: 'bank_account', bank_code: 1014, account_number: '20150123455679', account_titular: 'Juan Pérez' } }]) {
      const reused = await postTransfer(t, merchant, transferBody(merchant.businessCode, change), key);
      expect(reused.status).toBe(422);
      expect(reused.body).toEqual({ type: 'idempotency_error', code: 'IDEMPOTENCY_KEY_REUSED', message: expect.any(String) });
    }
    expect((await transfersOf(merchant)).meta.total).toBe(1);
  });

  it('does not store a 422: the corrected retry with the same key executes', async () => {
    const merchant = await fundedMerchant(t, '500.00');
    const key = randomUUID();
    const invalid = await postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: 0.01 }), key);
    expect(invalid.status).toBe(422);
    const corrected = await postTransfer(t, merchant, transferBody(merchant.businessCode), key);
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
  });

  it('stores a 400 INSUFFICIENT_FUNDS: the same key replays it even after funding, a new key executes', async () => {
    const merchant = await fundedMerchant(t, '5.00');
    const key = randomUUID();
    const refused = await postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: 10 }), key);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(await balanceOf(t, merchant)).toEqual({ available: 5, pending_out: 0 });
    await fund(t, merchant, '20.00');
    const replay = await postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: 10 }), key);
    expect(replay.status).toBe(400);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(refused.body);
    expect(await balanceOf(t, merchant)).toEqual({ available: 25, pending_out: 0 });
    const fresh = await postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: 10 }));
    expect(fresh.status).toBe(201);
    expect(await balanceOf(t, merchant)).toEqual({ available: 15, pending_out: 10 });
  });

  it('scopes keys per merchant: two merchants may use the same key', async () => {
    const a = await fundedMerchant(t, '500.00');
    const b = await fundedMerchant(t, '500.00');
    const key = randomUUID();
    const first = await postTransfer(t, a, transferBody(a.businessCode), key);
    const second = await postTransfer(t, b, transferBody(b.businessCode), key);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
  });
});
