// Fees end to end through HTTP (docs/fees.md; contract §15): a plan set by the operator charges each QR
// payment and each transfer; payments, transfers, events, movements, the statement, the journal export and
// the revenue report show the same fees; a canceled transfer gives its fee back; late payments carry none;
// a plan change applies forward only; the books close.
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { createQr, pay, type Merchant } from '../qr/qr-helpers.ts';

const PAYER = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
const DESTINATION = { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' };

describe.each(databaseKinds())('fees on %s', (kind) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ kind });
    t.clock.set('2026-11-18T12:00:00.000Z');
  });
  afterAll(() => t.close());

  const setPricing = async (merchant: Merchant, pricing: Record<string, number>) => {
    const response = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { pricing } });
    expect(response.status).toBe(200);
    return response.body;
  };
  const transfer = (merchant: Merchant, amount: number) => t.request('POST', '/api/v2/transfers', {
    apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() },
    body: { business_code: merchant.businessCode, amount, currency: 'BOB', destination: DESTINATION },
  });
  const balance = async (merchant: Merchant) => (await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body;
  const movements = async (merchant: Merchant, type = 'all') =>
    (await t.request('GET', `/api/v2/balance/movements?type=${type}&per_page=100`, { apiKey: merchant.apiKey })).body.data;

  it('charges a payment its plan\'s fee, shown as fee and net on the payment, its event and its movement, and as a fee movement', async () => {
    const merchant = await t.createMerchant({ ach_enabled: true });
    await setPricing(merchant, { qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 1.5 });
    const qr = await createQr(t, merchant, { amount: 100 });
    const paid = await pay(t, merchant, qr.id, PAYER);
    expect(paid.status).toBe(201);
    // 1.5 % of 100.00 is 1.50, plus 0.30.
    expect(paid.body).toMatchObject({ amount: 100, fee: 1.8, net: 98.2 });
    const [received] = (await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode }))
      .filter((event) => event.type === 'simple_qr.payment_received');
    expect((received!.data as { payment: unknown }).payment).toMatchObject({ amount: 100, fee: 1.8, net: 98.2 });
    expect(await balance(merchant)).toMatchObject({ available: 98.2, pending_out: 0 });
    const listed = await movements(merchant);
    // Newest first: the fee was recorded with its payment, after it.
    expect(listed.map((m: { type: string; amount: number; status: string }) => [m.type, m.amount, m.status])).toEqual([
      ['fee', -1.8, 'COMPLETED'],
      ['payment', 100, 'COMPLETED'],
    ]);
    expect(listed.find((m: { type: string }) => m.type === 'payment')).toMatchObject({ fee: 1.8, net: 98.2 });
    expect(listed.find((m: { type: string }) => m.type === 'fee')).toMatchObject({ details: { of: 'payment', payment_id: paid.body.id } });
    expect(await movements(merchant, 'fee')).toHaveLength(1);
  });

  it('caps a payment\'s fee at its amount, and charges none on a late payment', async () => {
    const merchant = await t.createMerchant();
    await setPricing(merchant, { qr_percent: 1.5, qr_fixed: 0.3 });
    const small = await createQr(t, merchant, { amount: 0.1 });
    expect((await pay(t, merchant, small.id, PAYER)).body).toMatchObject({ amount: 0.1, fee: 0.1, net: 0 });
    const canceled = await createQr(t, merchant, { amount: 50 });
    await t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
    const late = await t.request('POST', `/api/v2/sandbox/simple-qrs/${canceled.id}/late-payments`, { apiKey: merchant.apiKey, body: PAYER });
    expect(late.status).toBe(201);
    expect(late.body).toMatchObject({ amount: 50, fee: 0, net: 50, late: true });
    expect(await movements(merchant, 'fee')).toHaveLength(1);
  });

  it('debits a transfer its amount and fee, refuses one whose fee does not fit, and gives the fee back when it is canceled', async () => {
    const merchant = await t.createMerchant({ ach_enabled: true });
    await setPricing(merchant, { transfer_fixed: 1.5 });
    const qr = await createQr(t, merchant, { amount: 20 });
    await pay(t, merchant, qr.id, PAYER);
    const refused = await transfer(merchant, 19);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INSUFFICIENT_FUNDS');
    const created = await transfer(merchant, 10);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ amount: 10, fee: 1.5, origin: 'api' });
    // pending_out counts the transfer's amount only.
    expect(await balance(merchant)).toMatchObject({ available: 8.5, pending_out: 10 });
    const fee = (await movements(merchant, 'fee'))[0];
    expect(fee).toMatchObject({ amount: -1.5, status: 'PENDING', details: { of: 'transfer', transfer_id: created.body.id } });
    expect((await t.request('POST', `/api/v2/transfers/${created.body.id}/cancel`, { apiKey: merchant.apiKey, body: {} })).status).toBe(200);
    expect(await balance(merchant)).toMatchObject({ available: 20, pending_out: 0 });
    expect((await movements(merchant, 'fee'))[0]).toMatchObject({ amount: -1.5, status: 'CANCELED' });
    // The contract's example: a 10.00 transfer with a 1.50 fee, canceled — transfers 10.00, fees 1.50, returns 11.50.
    const today = '2026-11-18';
    const statement = await t.request('GET', `/api/v2/balance/statement?from=${today}&to=${today}`, { apiKey: merchant.apiKey });
    expect(statement.body.days[0]).toMatchObject({
      payments: { count: 1, amount: 20 }, transfers: { count: 1, amount: -10 }, fees: { count: 1, amount: -1.5 },
      returns: { count: 1, amount: 11.5 }, closing_balance: 20,
    });
    const csv = await t.request('GET', `/api/v2/balance/entries.csv?from=${today}&to=${today}`, { apiKey: merchant.apiKey });
    const rows: Array<Record<string, string>> = parse(csv.text, { columns: true, record_delimiter: '\r\n' });
    expect(rows.map((r) => [r.kind, r.amount, r.transfer_id, r.business_date])).toEqual([
      ['payment', '20.00', '', today],
      ['transfer', '-10.00', String(created.body.id), today],
      ['fee', '-1.50', String(created.body.id), today],
      ['transfer_return', '11.50', String(created.body.id), today],
    ]);
  });

  it('needs the fee\'s worth of other funds for a full refund: refunds do not give fees back', async () => {
    const merchant = await t.createMerchant();
    await setPricing(merchant, { qr_percent: 2 });
    const qr = await createQr(t, merchant, { amount: 50 });
    const paid = await pay(t, merchant, qr.id, PAYER);
    const refund = () => t.request('POST', '/api/v2/refunds', { apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() }, body: { payment_id: paid.body.id } });
    expect((await refund()).body.code).toBe('INSUFFICIENT_FUNDS');
    // 0.98 more is not enough: its own fee (0.02) leaves 49.96 for a refund of 50.00.
    await pay(t, merchant, (await createQr(t, merchant, { amount: 0.98 })).id, PAYER);
    expect((await refund()).body.code).toBe('INSUFFICIENT_FUNDS');
    await pay(t, merchant, (await createQr(t, merchant, { amount: 0.1 })).id, PAYER);
    expect((await refund()).status).toBe(201);
    // 50.00 − 1.00 + 0.98 − 0.02 + 0.10 − 0.00 (2 % of 0.10 rounds to 0.00) − 50.00 refunded.
    expect(await balance(merchant)).toMatchObject({ available: 0.06 });
  });

  it('applies a plan change to payments recorded after it only; earlier fees never change', async () => {
    const merchant = await t.createMerchant();
    await setPricing(merchant, { qr_percent: 1 });
    const qr = await createQr(t, merchant, { amount: 10, is_multi_use: true });
    const first = await pay(t, merchant, qr.id, PAYER);
    await setPricing(merchant, { qr_percent: 3 });
    const second = await pay(t, merchant, qr.id, PAYER);
    expect([first.body.fee, second.body.fee]).toEqual([0.1, 0.3]);
    const payments = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey })).body.data;
    expect(payments.map((p: { fee: number }) => p.fee).sort()).toEqual([0.1, 0.3]);
  });

  it('reports the revenue by day and by merchant, net of transfer fees given back, and the books close', async () => {
    t.clock.set('2026-11-19T15:00:00.000Z');
    const shop = await t.createMerchant({ ach_enabled: true, name: 'Tienda Revenue' });
    const cafe = await t.createMerchant({ name: 'Café Revenue' });
    await setPricing(shop, { qr_percent: 1, qr_fixed: 0.5, transfer_fixed: 2 });
    await setPricing(cafe, { qr_fixed: 0.25 });
    await pay(t, shop, (await createQr(t, shop, { amount: 200 })).id, PAYER); // fee 2.50
    await pay(t, cafe, (await createQr(t, cafe, { amount: 8 })).id, PAYER); // fee 0.25
    const kept = await transfer(shop, 50); // fee 2.00
    const returned = await transfer(shop, 20); // fee 2.00, given back below
    expect([kept.status, returned.status]).toEqual([201, 201]);
    t.clock.set('2026-11-20T15:00:00.000Z');
    await t.request('POST', `/api/v2/transfers/${returned.body.id}/cancel`, { apiKey: shop.apiKey, body: {} });

    const report = await t.request('GET', '/admin/v1/revenue?from=2026-11-19&to=2026-11-20');
    expect(report.status).toBe(200);
    const mine = report.body.merchants.filter((m: { business_code: number }) => [shop.businessCode, cafe.businessCode].includes(m.business_code));
    expect(mine).toEqual([
      { business_code: shop.businessCode, name: 'Tienda Revenue', count: 2, amount: 4.5 },
      { business_code: cafe.businessCode, name: 'Café Revenue', count: 1, amount: 0.25 },
    ]);
    expect(report.body.days.map((d: { date: string }) => d.date)).toEqual(['2026-11-19', '2026-11-20']);
    // The 20th gave one transfer fee back: −1 fee, −2.00.
    expect(report.body.days[1]).toEqual({ date: '2026-11-20', count: -1, amount: -2 });
    const sum = report.body.merchants.reduce((total: number, m: { amount: number }) => total + Math.round(m.amount * 100), 0);
    expect(Math.round(report.body.total.amount * 100)).toBe(sum);
    expect(report.body).toMatchObject({ from: '2026-11-19', to: '2026-11-20', currency: 'BOB', activations: { count: 0, amount: 0 } });

    const bad = await t.request('GET', '/admin/v1/revenue?from=2026-11-20&to=2026-11-19');
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'to', code: 'invalid_value' })]);

    expect((await t.request('GET', '/admin/v1/ledger/check')).body).toMatchObject({ ok: true, violations: [], problems: [] });
  });
});
