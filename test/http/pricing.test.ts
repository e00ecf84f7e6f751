// Price plans through the operator API (docs/api-reference.md#price-plans, docs/fees.md#price-plans): a new
// merchant gets the plan of FEE_QR and FEE_TRANSFER on every way a merchant is made, the operator sets its
// fields on creation and changes any of them later (validated field by field, nothing changed on a 422), and
// a change waits for the payments holding the plan, so it applies forward only.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxAccountsIfEmpty } from '../../src/merchants/sandbox-setup.ts';
import { paymentStanding } from '../../src/merchants/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { backendWaitingForLock } from '../helpers/row-locks.ts';

const UNKNOWN_BUSINESS_CODE = 987_654;
const PLATFORM_BUSINESS_CODE = 1000;
/** What FEE_QR=1.5%+0.30 and FEE_TRANSFER=0.50 give a new merchant. */
const DEFAULT_PRICING = { qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 0.5 };
const FREE_PRICING = { qr_percent: 0, qr_fixed: 0, transfer_fixed: 0 };

describe.each(databaseKinds())('price plans through the operator API on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { FEE_QR: '1.5%+0.30', FEE_TRANSFER: '0.50' } });
  });
  afterAll(() => t?.close());

  const show = async (businessCode: number) => (await t.request('GET', `/admin/v1/merchants/${businessCode}`)).body;
  const patch = (businessCode: number, body: unknown) => t.request('PATCH', `/admin/v1/merchants/${businessCode}`, { body });
  const countMerchants = async () => (await t.request('GET', '/admin/v1/merchants')).body.data.length;

  // Declared first: the sandbox accounts are made only on a database that holds no merchant yet.
  it("the first run's sandbox merchant gets the default plan", async () => {
    const sandbox = await createSandboxAccountsIfEmpty(t.context);
    expect(sandbox).not.toBeNull();
    expect((await show(sandbox!.businessCode)).pricing).toEqual(DEFAULT_PRICING);
  });

  it('POST /merchants without pricing gives FEE_QR and FEE_TRANSFER, in the answer, GET and the list', async () => {
    const created = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Tienda Con Tarifa' } });
    expect(created.status).toBe(201);
    expect(created.body.pricing).toEqual(DEFAULT_PRICING);
    expect(await show(created.body.business_code)).toMatchObject({ name: 'Tienda Con Tarifa', pricing: DEFAULT_PRICING });
    const listed = (await t.request('GET', '/admin/v1/merchants')).body.data;
    expect(listed).toContainEqual(expect.objectContaining({ business_code: created.body.business_code, pricing: DEFAULT_PRICING }));
  });

  it("the platform's own merchant keeps the free plan whatever FEE_QR says: its activation fees carry no fee", async () => {
    expect((await show(PLATFORM_BUSINESS_CODE)).pricing).toEqual(FREE_PRICING);
  });

  it('POST /merchants with pricing sets the fields it names over the default, numbers or numeric strings alike', async () => {
    const some = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Tarifa Propia', pricing: { qr_percent: 2.25 } } });
    expect(some.status).toBe(201);
    expect(some.body.pricing).toEqual({ ...DEFAULT_PRICING, qr_percent: 2.25 });
    const all = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Sin Comisión', pricing: { qr_percent: '0', qr_fixed: '1.00', transfer_fixed: 0 } } });
    expect(all.status).toBe(201);
    expect(all.body.pricing).toEqual({ qr_percent: 0, qr_fixed: 1, transfer_fixed: 0 });
    expect((await show(all.body.business_code)).pricing).toEqual({ qr_percent: 0, qr_fixed: 1, transfer_fixed: 0 });
  });

  it('PATCH /merchants/{business_code} with pricing changes only the fields it names, and nothing else', async () => {
    const merchant = await t.createMerchant({ ach_enabled: true });
    t.clock.advance(1_000);
    const percent = await patch(merchant.businessCode, { pricing: { qr_percent: 2.9 } });
    expect(percent.status).toBe(200);
    expect(percent.body).toMatchObject({
      business_code: merchant.businessCode, status: 'active', ach_enabled: true,
      pricing: { ...DEFAULT_PRICING, qr_percent: 2.9 }, updated_at: t.clock.now().toISOString(),
    });
    const fixed = await patch(merchant.businessCode, { pricing: { qr_fixed: 0.05, transfer_fixed: '1.5' } });
    expect(fixed.body.pricing).toEqual({ qr_percent: 2.9, qr_fixed: 0.05, transfer_fixed: 1.5 });
    const none = await patch(merchant.businessCode, { pricing: {} });
    expect(none.status).toBe(200);
    expect(none.body.pricing).toEqual({ qr_percent: 2.9, qr_fixed: 0.05, transfer_fixed: 1.5 });
    // Beside the other settings, in one request.
    const together = await patch(merchant.businessCode, { status: 'suspended', pricing: { transfer_fixed: 0 } });
    expect(together.body).toMatchObject({ status: 'suspended', ach_enabled: true, pricing: { qr_percent: 2.9, qr_fixed: 0.05, transfer_fixed: 0 } });
    // A PATCH without pricing leaves the plan as it is.
    const achOff = await patch(merchant.businessCode, { ach_enabled: false });
    expect(achOff.body.pricing).toEqual({ qr_percent: 2.9, qr_fixed: 0.05, transfer_fixed: 0 });
    expect(await show(merchant.businessCode)).toEqual(achOff.body);
  });

  it('takes the bounds: 0 to 10.00 % and 0 to 100.00 BOB', async () => {
    const merchant = await t.createMerchant();
    const highest = await patch(merchant.businessCode, { pricing: { qr_percent: 10, qr_fixed: 100, transfer_fixed: '100.00' } });
    expect(highest.status).toBe(200);
    expect(highest.body.pricing).toEqual({ qr_percent: 10, qr_fixed: 100, transfer_fixed: 100 });
    const lowest = await patch(merchant.businessCode, { pricing: { qr_percent: 0, qr_fixed: 0, transfer_fixed: 0 } });
    expect(lowest.body.pricing).toEqual(FREE_PRICING);
    const smallest = await patch(merchant.businessCode, { pricing: { qr_percent: 0.01, qr_fixed: 0.01, transfer_fixed: 0.01 } });
    expect(smallest.body.pricing).toEqual({ qr_percent: 0.01, qr_fixed: 0.01, transfer_fixed: 0.01 });
  });

  it('PATCH with wrong pricing answers 422 listing each failing field with its code, and changes nothing', async () => {
    const merchant = await t.createMerchant();
    const before = await show(merchant.businessCode);
    const wrong = await patch(merchant.businessCode, {
      status: 'suspended',
      pricing: { qr_percent: 10.01, qr_fixed: 0.001, transfer_fixed: -1, fixed: 1 },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.code).toBe('VALIDATION_FAILED');
    const byField = Object.fromEntries(wrong.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]));
    expect(byField).toEqual({
      'pricing.qr_percent': 'too_large',
      'pricing.qr_fixed': 'too_many_decimals',
      'pricing.transfer_fixed': 'too_small',
      'pricing.fixed': 'unknown_field',
    });
    expect(wrong.body.errors).toHaveLength(4);

    const types = await patch(merchant.businessCode, { pricing: { qr_percent: '1.5%', qr_fixed: true, transfer_fixed: 100.01 } });
    expect(types.status).toBe(422);
    expect(Object.fromEntries(types.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]))).toEqual({
      'pricing.qr_percent': 'invalid_format',
      'pricing.qr_fixed': 'invalid_type',
      'pricing.transfer_fixed': 'too_large',
    });

    const notAnObject = await patch(merchant.businessCode, { pricing: '1.5%+0.30' });
    expect(notAnObject.status).toBe(422);
    expect(notAnObject.body.errors).toEqual([{ field: 'pricing', code: 'invalid_type', message: expect.any(String) }]);

    expect(await show(merchant.businessCode)).toEqual(before);
  });

  it('POST /merchants with wrong pricing answers 422 on each field and creates nothing', async () => {
    const before = await countMerchants();
    const response = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Mal Precio', pricing: { qr_percent: 1.234, transfer_fixed: 'free' } } });
    expect(response.status).toBe(422);
    expect(Object.fromEntries(response.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]))).toEqual({
      'pricing.qr_percent': 'too_many_decimals',
      'pricing.transfer_fixed': 'invalid_format',
    });
    expect(await countMerchants()).toBe(before);
  });

  it('PATCH with pricing answers 404 for an unknown merchant', async () => {
    const response = await patch(UNKNOWN_BUSINESS_CODE, { pricing: { qr_percent: 1 } });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ type: 'invalid_request_error', code: 'NOT_FOUND' });
  });
});

describe.each(databaseKinds())('the default plan is only for new merchants on %s', (kind) => {
  let before: TestApp;
  let after: TestApp;
  beforeAll(async () => {
    before = await startTestApp({ kind });
    after = await startTestApp({ kind, database: before.database, clock: before.clock, env: { FEE_QR: '3%+1', FEE_TRANSFER: '2' } });
  });
  afterAll(async () => {
    await after?.close();
    await before?.close();
  });

  it('a service restarted with another FEE_QR and FEE_TRANSFER leaves the plans of existing merchants as they are', async () => {
    const existing = await before.createMerchant();
    const added = await after.createMerchant();
    expect((await after.request('GET', `/admin/v1/merchants/${existing.businessCode}`)).body.pricing).toEqual(FREE_PRICING);
    expect((await after.request('GET', `/admin/v1/merchants/${added.businessCode}`)).body.pricing).toEqual({ qr_percent: 3, qr_fixed: 1, transfer_fixed: 2 });
  });
});

describeOnPostgres('a plan change against the payments in flight, on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { FEE_QR: '1%+0.10' } });
  });
  afterAll(() => t?.close());

  const patch = (businessCode: number, body: unknown) => t.request('PATCH', `/admin/v1/merchants/${businessCode}`, { body });

  it('waits for a payment that read the plan, then applies to the payments after it', async () => {
    const merchant = await t.createMerchant();
    const otherPool = await t.database.openAnother();
    const observer = new pg.Client({ connectionString: t.database.url });
    await observer.connect();
    try {
      // A payment being recorded holds its merchant's row under the share lock it read the plan with.
      let commitPayment!: () => void;
      const paymentHeld = new Promise<void>((resolve) => { commitPayment = resolve; });
      let readByPayment: unknown;
      let planRead!: () => void;
      const planWasRead = new Promise<void>((resolve) => { planRead = resolve; });
      const payment = otherPool.transaction(async (tx) => {
        readByPayment = (await paymentStanding(tx, merchant.businessCode)).plan;
        planRead();
        await paymentHeld;
      });
      await planWasRead;
      const change = patch(merchant.businessCode, { pricing: { qr_percent: 2 } });
      await backendWaitingForLock(observer);
      commitPayment();
      await payment;
      expect((await change).status).toBe(200);
      expect(readByPayment).toEqual({ qrBasisPoints: 100, qrFixed: 10, transferFixed: 0 });
      const readAfter = await t.db.transaction(async (tx) => (await paymentStanding(tx, merchant.businessCode)).plan);
      expect(readAfter).toEqual({ qrBasisPoints: 200, qrFixed: 10, transferFixed: 0 });
    } finally {
      await observer.end();
      await otherPool.close();
    }
  });
});
