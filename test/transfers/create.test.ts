import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ledger from '../../src/ledger/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { balanceOf, fund, fundedMerchant, postTransfer, transferBody, type Merchant } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

describe.each(databaseKinds())('creating transfers on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
    merchant = await fundedMerchant(t, '1000.00');
  });
  afterAll(() => t.close());

  it('answers 201 with a PENDING transfer, its account number masked, and debits the balance', async () => {
    const before = await balanceOf(t, merchant);
    const response = await postTransfer(t, merchant, transferBody(merchant.businessCode));
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      business_code: merchant.businessCode,
      status: 'PENDING',
      amount: 100.25,
      currency: 'BOB',
      reference: 'Payroll Nov',
      destination: { type: 'bank_account', bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Pérez' },
      failure_code: null,
    });
    expect(Number.isInteger(response.body.id)).toBe(true);
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(response.text).not.toContain('20150123455678');
    const after = await balanceOf(t, merchant);
    expect(after.available).toBeCloseTo(before.available - 100.25, 2);
    expect(after.pending_out).toBeCloseTo(before.pending_out + 100.25, 2);
  });

  it('writes a PENDING transfer movement with the masked destination and a transfer.created event', async () => {
    const response = await postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: '7.50', reference: 'Movement check' }));
    expect(response.status).toBe(201);
    const movements = await t.db.query<{ id: number; type: string; amount_centavos: number; status: string; reference: string; snapshot: unknown }>(
      'select id, type, amount_centavos, status, reference, snapshot from movement_history where id = $1::bigint', [response.body.movement_id]);
    expect(movements.rows[0]).toMatchObject({
      type: 'transfer', amount_centavos: -750, status: 'PENDING', reference: 'Movement check',
      snapshot: { destination: { type: 'bank_account', bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Pérez' } },
    });
    const created = (await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode }))
      .filter((event) => event.type === 'transfer.created' && event.data.id === response.body.id);
    expect(created).toHaveLength(1);
    expect(created[0]!.data).toEqual(response.body);
  });

  it('accepts 0.1, "0.10", 20000 and a reference-less body', async () => {
    const rich = await fundedMerchant(t, '20000.00');
    await fund(t, rich, '10000.00');
    for (const amount of [0.1, '0.10', 20000, '20000.00']) {
      const response = await postTransfer(t, rich, transferBody(rich.businessCode, { amount, reference: undefined }));
      if (amount === '20000.00') {
        expect(response.status).toBe(400); // 30000.20 - 20000 leaves less than 20000
        expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
        continue;
      }
      expect(response.status).toBe(201);
      expect(response.body.reference).toBeNull();
    }
  });

  it('reads a transfer back by id, masked', async () => {
    const created = await postTransfer(t, merchant, transferBody(merchant.businessCode));
    const response = await t.request('GET', `/api/v2/transfers/${created.body.id}`, { apiKey: merchant.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(created.body);
  });

  it('answers 404 for an unknown id and for a path that is not a transfer id', async () => {
    expect((await t.request('GET', '/api/v2/transfers/999999999', { apiKey: merchant.apiKey })).body.code).toBe('NOT_FOUND');
    const bad = await t.request('GET', '/api/v2/transfers/abc', { apiKey: merchant.apiKey });
    expect(bad.status).toBe(404);
    expect(bad.body.code).toBe('NOT_FOUND');
  });

  it('lists the configured banks', async () => {
    const response = await t.request('GET', '/api/v2/banks', { apiKey: merchant.apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data).toContainEqual({ bank_code: 1001, name: 'Banco Nacional de Bolivia' });
    expect(response.body.data.length).toBeGreaterThan(10);
    expect((await t.request('GET', '/api/v2/banks')).status).toBe(401);
  });

  it('keeps the ledger invariant', async () => {
    const report = await ledger.checkLedger(t.db);
    expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
  });
});
