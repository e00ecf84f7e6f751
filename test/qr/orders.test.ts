// QR orders through HTTP (docs/api-reference.md#create-a-qr): external_reference returned everywhere and
// filterable, min_amount/max_amount bounding an editable amount, max_payments closing a multi-use QR, and
// the rules that tie them to the QR's other fields.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, twoInstances, type TestApp } from '../helpers/app.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';

const createRaw = (t: TestApp, merchant: Merchant, body: Record<string, unknown>) =>
  t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, ...body } });

const fieldCodes = (body: { errors: Array<{ field: string; code: string }> }) => Object.fromEntries(body.errors.map((e) => [e.field, e.code]));

describe.each(databaseKinds())('QR orders on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t.close());

  it('returns external_reference in the QR, its events, its payment\'s and refund\'s movements, and filters by it', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 50, external_reference: 'order-2026:000042' });
    await createQr(t, merchant, { amount: 10, external_reference: 'order-2026:000043' });
    await createQr(t, merchant, { amount: 10 });
    expect(qr).toMatchObject({ external_reference: 'order-2026:000042', min_amount: null, max_amount: null, max_payments: null });
    const paid = await pay(t, merchant, qr.id);
    const events = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect((events.find((e) => e.type === 'simple_qr.payment_received')!.data as { qr: { external_reference: string } }).qr.external_reference).toBe('order-2026:000042');
    const refund = await t.request('POST', '/api/v2/refunds', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() }, body: { payment_id: paid.body.id, amount: 5 },
    });
    expect(refund.status).toBe(201);
    const movements = (await t.request('GET', '/api/v2/balance/movements', { apiKey: merchant.apiKey })).body.data;
    expect(movements.map((m: { type: string; external_reference: string | null }) => [m.type, m.external_reference])).toEqual([
      ['refund', 'order-2026:000042'], ['payment', 'order-2026:000042'],
    ]);
    const listed = await t.request('GET', '/api/v2/simple-qrs?external_reference=order-2026:000042', { apiKey: merchant.apiKey });
    expect(listed.body.meta.total).toBe(1);
    expect(listed.body.data.map((q: { id: string }) => q.id)).toEqual([qr.id]);
    expect((await t.request('GET', '/api/v2/simple-qrs?external_reference=order-2026:000042&status=PAID', { apiKey: merchant.apiKey })).body.meta.total).toBe(1);
    expect((await t.request('GET', '/api/v2/simple-qrs?external_reference=order-2026:000042&status=ACTIVE', { apiKey: merchant.apiKey })).body.meta.total).toBe(0);
    // Another merchant's orders are not found by the filter.
    const other = await t.createMerchant();
    expect((await t.request('GET', '/api/v2/simple-qrs?external_reference=order-2026:000042', { apiKey: other.apiKey })).body.meta.total).toBe(0);
    const csv = await t.request('GET', '/api/v2/balance/entries.csv?from=2026-11-22&to=2026-11-22', { apiKey: merchant.apiKey });
    expect(csv.text).toContain(',order-2026:000042,');
  });

  it('refuses a malformed external_reference (422) and an unknown filter value shape', async () => {
    const merchant = await t.createMerchant();
    const bad = await createRaw(t, merchant, { amount: 10, external_reference: 'order 42/ñ' });
    expect(bad.status).toBe(422);
    expect(fieldCodes(bad.body)).toEqual({ external_reference: 'invalid_format' });
    expect(fieldCodes((await createRaw(t, merchant, { amount: 10, external_reference: 'x'.repeat(65) })).body)).toEqual({ external_reference: 'too_long' });
    expect((await t.request('GET', '/api/v2/simple-qrs?external_reference=a%20b', { apiKey: merchant.apiKey })).status).toBe(422);
  });

  it('bounds an editable amount: too_small / too_large for the payer, and the bounds in the resource', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { modify_amount: true, is_multi_use: true, amount: 20, min_amount: '10.00', max_amount: 50 });
    expect(qr).toMatchObject({ amount: 20, min_amount: 10, max_amount: 50 });
    const low = await pay(t, merchant, qr.id, { amount: 9.99 });
    expect(low.status).toBe(422);
    expect(low.body.errors).toEqual([{ field: 'amount', code: 'too_small', message: expect.stringContaining('10.00') }]);
    const high = await pay(t, merchant, qr.id, { amount: 50.01 });
    expect(high.body.errors).toEqual([{ field: 'amount', code: 'too_large', message: expect.stringContaining('50.00') }]);
    expect((await pay(t, merchant, qr.id, { amount: 10 })).status).toBe(201);
    expect((await pay(t, merchant, qr.id, { amount: 50 })).status).toBe(201);
    expect((await pay(t, merchant, qr.id)).body.amount).toBe(20);
    const balance = await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
    expect(balance.body.available).toBe(80);
    // A min alone, a max alone.
    const atLeast = await createQr(t, merchant, { modify_amount: true, amount: undefined, min_amount: 5 });
    expect((await pay(t, merchant, atLeast.id, { amount: 4 })).body.errors[0].code).toBe('too_small');
    const atMost = await createQr(t, merchant, { modify_amount: true, amount: undefined, max_amount: 5 });
    expect((await pay(t, merchant, atMost.id, { amount: 6 })).body.errors[0].code).toBe('too_large');
  });

  it('refuses bounds that contradict the QR: without modify_amount, min above max, a suggestion outside them', async () => {
    const merchant = await t.createMerchant();
    expect(fieldCodes((await createRaw(t, merchant, { amount: 10, min_amount: 1, max_amount: 20 })).body))
      .toEqual({ min_amount: 'invalid_value', max_amount: 'invalid_value' });
    expect(fieldCodes((await createRaw(t, merchant, { modify_amount: true, min_amount: 30, max_amount: 20 })).body)).toEqual({ max_amount: 'invalid_value' });
    expect(fieldCodes((await createRaw(t, merchant, { modify_amount: true, amount: 5, min_amount: 10 })).body)).toEqual({ amount: 'invalid_value' });
    expect(fieldCodes((await createRaw(t, merchant, { modify_amount: true, amount: 60, max_amount: 50 })).body)).toEqual({ amount: 'invalid_value' });
    expect(fieldCodes((await createRaw(t, merchant, { modify_amount: true, min_amount: 0.05, max_amount: 100000.01 })).body))
      .toEqual({ min_amount: 'too_small', max_amount: 'too_large' });
  });

  it('closes a multi-use QR after max_payments: PAID with simple_qr.paid, then 409 QR_NOT_PAYABLE', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 5, is_multi_use: true, max_payments: 3 });
    expect(qr).toMatchObject({ max_payments: 3, status: 'ACTIVE' });
    for (let i = 0; i < 2; i++) expect((await pay(t, merchant, qr.id)).status).toBe(201);
    expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body).toMatchObject({ status: 'ACTIVE', payments_count: 2, paid_at: null });
    t.clock.advance(1_000);
    expect((await pay(t, merchant, qr.id)).status).toBe(201);
    const read = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body;
    expect(read).toMatchObject({ status: 'PAID', payments_count: 3, amount_collected: 15, paid_at: '2026-11-22T16:00:01.000Z' });
    const fourth = await pay(t, merchant, qr.id);
    expect(fourth.status).toBe(409);
    expect(fourth.body.code).toBe('QR_NOT_PAYABLE');
    const types = (await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode })).map((e) => e.type);
    expect(types.filter((type) => type === 'simple_qr.paid')).toHaveLength(1);
    expect(types.filter((type) => type === 'simple_qr.payment_received')).toHaveLength(3);
    expect((await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey })).status).toBe(409);
    // Late money for it is refunded in full.
    const late = await t.request('POST', `/api/v2/sandbox/simple-qrs/${qr.id}/late-payments`, { apiKey: merchant.apiKey, body: {} });
    expect(late.body.refund).toMatchObject({ reason: 'qr_not_payable', amount: 5 });
    t.clock.set('2026-11-22T16:00:00.000Z');
  });

  it('refuses max_payments without is_multi_use, and out of 1–1,000,000', async () => {
    const merchant = await t.createMerchant();
    expect(fieldCodes((await createRaw(t, merchant, { amount: 5, max_payments: 2 })).body)).toEqual({ max_payments: 'invalid_value' });
    expect(fieldCodes((await createRaw(t, merchant, { amount: 5, is_multi_use: true, max_payments: 0 })).body)).toEqual({ max_payments: 'too_small' });
    expect(fieldCodes((await createRaw(t, merchant, { amount: 5, is_multi_use: true, max_payments: 1_000_001 })).body)).toEqual({ max_payments: 'too_large' });
    expect(fieldCodes((await createRaw(t, merchant, { amount: 5, is_multi_use: true, max_payments: '2' })).body)).toEqual({ max_payments: 'invalid_type' });
  });

  it('keeps the EMV payload an editable, multi-use one (no tag 54) and shows the bounds on the pay page', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { modify_amount: true, is_multi_use: true, amount: undefined, min_amount: 10, max_amount: 50, max_payments: 10 });
    expect(qr.qr_payload).toContain('010211');
    expect(qr.qr_payload).not.toMatch(/5406\d{3}\.\d{2}/);
    const page = await t.request('GET', new URL(qr.qr_url).pathname);
    expect(page.text.replace(/\u00a0/g, ' ')).toContain('Entre Bs 10,00 y Bs 50,00.');
  });

  it('a suspended merchant\'s QR refuses payment (409) and moves nothing', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 5 });
    await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'suspended' } });
    const { sandboxPayer } = await import('../../src/rails/sandbox/pay-in.ts');
    const { receivePayment } = await import('../../src/qr/service.ts');
    const refused = await receivePayment(t.context, sandboxPayer.toNotice({ qrId: qr.id, businessCode: null, amountCentavos: null }), t.clock.now())
      .then(() => null, (error: unknown) => error);
    expect(refused).toMatchObject({ code: 'QR_NOT_PAYABLE', message: expect.stringContaining('suspended') });
    await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'active' } });
    expect((await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available).toBe(0);
  });
});

describeOnPostgres('QR orders under concurrency on %s', (kind) => {
  const instances = twoInstances(kind);

  it('20 payers at once on a multi-use QR with max_payments 5, over two instances: exactly 5 are paid', async () => {
    const [t, second] = [instances.first(), instances.second()];
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 3, is_multi_use: true, max_payments: 5 });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(i % 2 === 0 ? t : second, merchant, qr.id)));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(5);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(15);
    const read = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body;
    expect(read).toMatchObject({ status: 'PAID', payments_count: 5, amount_collected: 15 });
    expect((await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available).toBe(15);
  });
});
