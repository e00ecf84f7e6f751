import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQrWithPurpose, type QrRow } from '../../src/qr/service.ts';
import type { PaymentPurposeHandler } from '../../src/qr/purposes.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { centavos } from '../../src/money.ts';

async function balanceOf(t: TestApp, merchant: Merchant): Promise<number> {
  return (await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available;
}

async function movementsOf(t: TestApp, businessCode: number) {
  const { rows } = await t.db.query<{ id: number; type: string; amount_centavos: number; status: string; reference: string | null; snapshot: Record<string, unknown> }>(
    'select id, type, amount_centavos, status, reference, snapshot from movement_history where business_code = $1::bigint order by id', [businessCode]);
  return rows;
}

describe.each(databaseKinds())('simple QR payments on %s', (kind) => {
  let t: TestApp;
  /** What the test_fee purpose handler saw (the purpose-hook test). */
  const seen: Array<{ qr: QrRow; paymentId: number }> = [];
  const testPurposes: Record<string, PaymentPurposeHandler> = {
    test_fee: async (tx, { qr, payment }) => {
      const { rows } = await tx.query<{ n: number }>('select count(*)::int8 as n from qr_payments where id = $1::bigint', [payment.id]);
      expect(rows[0]!.n).toBe(1); // visible inside the same transaction
      seen.push({ qr, paymentId: payment.id });
    },
    test_failing: async () => { throw new Error('handler refused'); },
  };
  beforeAll(async () => {
    t = await startTestApp({ kind, purposes: testPurposes });
  });
  afterAll(() => t.close());

  it('pays a single-use QR once: payment, movement, balance, PAID, and two events in one go', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 150.5, description: 'Order 42' });
    const paid = await pay(t, merchant, qr.id, { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' });
    expect(paid.status).toBe(201);
    expect(paid.body).toMatchObject({
      qr_id: qr.id, business_code: merchant.businessCode, amount: 150.5, currency: 'BOB', status: 'COMPLETED',
      payer: { source_bank: 'Banco Unión', account_number: '**********4321', account_titular: 'Ana Pérez' },
      paid_at: '2026-11-22T16:00:00.000Z',
    });
    expect(paid.text).not.toContain('10000123454321');
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ status: 'PAID', payments_count: 1, amount_collected: 150.5, paid_at: '2026-11-22T16:00:00.000Z', last_payment: paid.body });
    expect(await balanceOf(t, merchant)).toBe(150.5);
    const movements = await movementsOf(t, merchant.businessCode);
    expect(movements).toHaveLength(1);
    expect(movements[0]).toMatchObject({
      id: paid.body.movement_id, type: 'payment', amount_centavos: 15050, status: 'COMPLETED', reference: 'Order 42',
      snapshot: { details: { source_bank: 'Banco Unión', account_number: '**********4321', account_titular: 'Ana Pérez' }, qr_id: qr.id },
    });
    const owned = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(owned.map((e) => e.type).sort()).toEqual(['simple_qr.paid', 'simple_qr.payment_received']);
    const received = owned.find((e) => e.type === 'simple_qr.payment_received')!;
    expect(received.data).toEqual({ qr: expect.objectContaining({ id: qr.id, status: 'PAID' }), payment: paid.body });
    expect((received.data as { qr: object }).qr).not.toHaveProperty('qr_image');
    expect(JSON.stringify(owned)).not.toContain('10000123454321');
    const second = await pay(t, merchant, qr.id);
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('QR_NOT_PAYABLE');
    expect(await balanceOf(t, merchant)).toBe(150.5);
    const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey });
    expect(payments.body).toEqual({ data: [paid.body], meta: { current_page: 1, last_page: 1, per_page: 15, total: 1 } });
  });

  it('takes many payments on a multi-use QR, each with its own movement and event, and stays ACTIVE', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 10, is_multi_use: true });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000);
      const paid = await pay(t, merchant, qr.id, { account_titular: `Payer ${i}` });
      expect(paid.status).toBe(201);
      ids.push(paid.body.id);
    }
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ status: 'ACTIVE', payments_count: 3, amount_collected: 30, paid_at: null });
    expect(read.body.last_payment.id).toBe(ids[2]);
    expect(await balanceOf(t, merchant)).toBe(30);
    expect(await movementsOf(t, merchant.businessCode)).toHaveLength(3);
    const owned = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(owned.filter((e) => e.type === 'simple_qr.payment_received')).toHaveLength(3);
    expect(owned.filter((e) => e.type === 'simple_qr.paid')).toHaveLength(0);
    const page = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments?per_page=2`, { apiKey: merchant.apiKey });
    expect(page.body.data.map((p: { id: number }) => p.id)).toEqual([ids[2], ids[1]]);
    expect(page.body.meta).toEqual({ current_page: 1, last_page: 2, per_page: 2, total: 3 });
  });

  it('requires a fixed amount to match, with nothing moved when it does not', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 25 });
    const wrong = await pay(t, merchant, qr.id, { amount: 24.99 });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([expect.objectContaining({ field: 'amount', code: 'invalid_value' })]);
    expect(await balanceOf(t, merchant)).toBe(0);
    expect((await pay(t, merchant, qr.id, { amount: '25.00' })).status).toBe(201);
    expect(await balanceOf(t, merchant)).toBe(25);
  });

  it('lets the payer choose an editable amount, defaulting to the suggestion, else requiring one', async () => {
    const merchant = await t.createMerchant();
    const suggested = await createQr(t, merchant, { amount: 15, modify_amount: true, is_multi_use: true });
    expect((await pay(t, merchant, suggested.id)).body.amount).toBe(15);
    expect((await pay(t, merchant, suggested.id, { amount: 99.9 })).body.amount).toBe(99.9);
    const open = await createQr(t, merchant, { amount: undefined, modify_amount: true });
    const missing = await pay(t, merchant, open.id);
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: 'amount', code: 'required' })]);
    expect((await pay(t, merchant, open.id, { amount: 0.09 })).body.errors[0].code).toBe('too_small');
    expect((await pay(t, merchant, open.id, { amount: 100000.01 })).body.errors[0].code).toBe('too_large');
    expect((await pay(t, merchant, open.id, { amount: 0.1 })).status).toBe(201);
    expect(await balanceOf(t, merchant)).toBe(15 + 99.9 + 0.1);
  });

  it('runs the handler of a QR purpose inside the payment transaction, and rolls everything back when it throws', async () => {
    const merchant = await t.createMerchant();
    const [ok, failing] = await t.db.transaction(async (tx) => [
      await createQrWithPurpose(tx, t.context, 1000, { amountCentavos: centavos(1000), modifyAmount: false, isMultiUse: false, description: 'Activation fee', qrExpiration: '+2h' }, 'test_fee', t.clock.now()),
      await createQrWithPurpose(tx, t.context, merchant.businessCode, { amountCentavos: centavos(500), modifyAmount: false, isMultiUse: false, description: null, qrExpiration: null }, 'test_failing', t.clock.now()),
    ]);
    expect(ok.qr.business_code).toBe(1000);
    const { receivePayment } = await import('../../src/qr/service.ts');
    const { sandboxPayer } = await import('../../src/rails/sandbox/pay-in.ts');
    await receivePayment(t.context, sandboxPayer.toNotice({ qrId: ok.qr.id, businessCode: null, amountCentavos: null }), t.clock.now());
    expect(seen).toHaveLength(1);
    expect(seen[0]!.qr.id).toBe(ok.qr.id);
    const response = await pay(t, merchant, failing.qr.id);
    expect(response.status).toBe(500);
    expect(await balanceOf(t, merchant)).toBe(0);
    const read = await t.request('GET', `/api/v2/simple-qrs/${failing.qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ status: 'ACTIVE', payments_count: 0 });
    expect((await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode })).length).toBe(0);
  });

  it('answers 404 to the sandbox endpoint in live mode', async () => {
    const live = await startLiveApp({ kind, database: t.database });
    try {
      const merchant = await live.createMerchant();
      const qr = await createQr(live, merchant);
      expect(qr.rail).toBe('baneco'); // a live QR is the bank's (here its simulator's)
      const response = await pay(live, merchant, qr.id);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    } finally {
      await live.close();
    }
  });
});

describeOnPostgres('simple QR payment race on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t.close());

  it('lets exactly one of 20 concurrent payers pay a single-use QR', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 42 });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(t, merchant, qr.id, { account_titular: `Payer ${i}` })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    for (const r of responses.filter((r) => r.status === 409)) expect(r.body.code).toBe('QR_NOT_PAYABLE');
    expect(await balanceOf(t, merchant)).toBe(42);
    expect(await movementsOf(t, merchant.businessCode)).toHaveLength(1);
    const owned = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(owned.filter((e) => e.type === 'simple_qr.payment_received')).toHaveLength(1);
  });

  it('takes all 20 concurrent payments of a multi-use QR', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 1.5, is_multi_use: true });
    const responses = await Promise.all(Array.from({ length: 20 }, () => pay(t, merchant, qr.id)));
    expect(responses.every((r) => r.status === 201)).toBe(true);
    expect(await balanceOf(t, merchant)).toBe(30);
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ payments_count: 20, amount_collected: 30 });
  });
});
