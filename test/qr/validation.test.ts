import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';

describe.each(databaseKinds())('simple QR validation on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant();
  });
  afterAll(() => t.close());

  const create = (body: Record<string, unknown>) =>
    t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, ...body } });

  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['amount missing on a fixed QR', {}, 'amount', 'required'],
    ['amount missing with modify_amount false', { modify_amount: false }, 'amount', 'required'],
    ['amount below 0.10', { amount: 0.09 }, 'amount', 'too_small'],
    ['amount above 100000.00', { amount: 100000.01 }, 'amount', 'too_large'],
    ['amount with three decimals', { amount: 10.001 }, 'amount', 'too_many_decimals'],
    ['amount negative', { amount: -5 }, 'amount', 'too_small'],
    ['amount as exponent text', { amount: '1e3' }, 'amount', 'invalid_format'],
    ['amount as NaN text', { amount: 'NaN' }, 'amount', 'invalid_format'],
    ['amount as empty text', { amount: '' }, 'amount', 'invalid_format'],
    ['amount as boolean', { amount: true }, 'amount', 'invalid_type'],
    ['business_code as text', { business_code: '1001', amount: 5 }, 'business_code', 'invalid_type'],
    ['modify_amount as 1', { amount: 5, modify_amount: 1 }, 'modify_amount', 'invalid_type'],
    ['is_multi_use as "true"', { amount: 5, is_multi_use: 'true' }, 'is_multi_use', 'invalid_type'],
    ['description over 140 characters', { amount: 5, description: 'x'.repeat(141) }, 'description', 'too_long'],
    ['description as number', { amount: 5, description: 5 }, 'description', 'invalid_type'],
    ['currency other than BOB', { amount: 5, currency: 'USD' }, 'currency', 'unsupported_currency'],
    ['unknown field', { amount: 5, amout: 5 }, 'amout', 'unknown_field'],
    ['qr_expiration in a wrong format', { amount: 5, qr_expiration: '2026/12/01 10:00' }, 'qr_expiration', 'invalid_format'],
    ['qr_expiration with an unknown unit', { amount: 5, qr_expiration: '+5 weeks' }, 'qr_expiration', 'invalid_format'],
    ['qr_expiration not a calendar date', { amount: 5, qr_expiration: '2026-02-30 10:00:00' }, 'qr_expiration', 'invalid_format'],
    ['qr_expiration in the past', { amount: 5, qr_expiration: '2026-11-22 11:59:59' }, 'qr_expiration', 'expiration_in_past'],
    ['qr_expiration now', { amount: 5, qr_expiration: '2026-11-22 12:00:00' }, 'qr_expiration', 'expiration_in_past'],
    ['qr_expiration relative zero', { amount: 5, qr_expiration: '+0m' }, 'qr_expiration', 'expiration_in_past'],
    ['qr_expiration over 365 days', { amount: 5, qr_expiration: '+366d' }, 'qr_expiration', 'too_large'],
    ['qr_expiration absolute over 365 days', { amount: 5, qr_expiration: '2027-11-22 12:00:01' }, 'qr_expiration', 'too_large'],
    ['qr_expiration as number', { amount: 5, qr_expiration: 5 }, 'qr_expiration', 'invalid_type'],
  ];

  it.each(cases)('422 for %s', async (_name, body, field, code) => {
    const response = await create(body);
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.errors).toContainEqual(expect.objectContaining({ field, code }));
  });

  it('lists every failing field of one request', async () => {
    const response = await create({ amount: 10.001, description: 'x'.repeat(141), currency: 'EUR', extra: 1, is_multi_use: 0 });
    expect(response.status).toBe(422);
    expect(response.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['amount', 'currency', 'description', 'extra', 'is_multi_use']);
  });

  it('lists amount and qr_expiration together when both fail after the schema', async () => {
    const response = await create({ qr_expiration: '+0 minutes' });
    expect(response.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort()).toEqual(['amount:required', 'qr_expiration:expiration_in_past']);
  });

  it('rejects __proto__ keys as unknown fields', async () => {
    const response = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, rawBody: `{"business_code":${merchant.businessCode},"amount":5,"__proto__":{"x":1}}`, headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(422);
    expect(response.body.errors).toContainEqual(expect.objectContaining({ field: '__proto__', code: 'unknown_field' }));
  });

  it('accepts the valid edge forms of amount', async () => {
    for (const amount of [0.1, '0.10', 20000, '100000.00', 1e3]) expect((await create({ amount })).status).toBe(201);
  });

  it('rejects unknown and malformed query parameters with 422', async () => {
    const qr = await createQr(t, merchant);
    for (const path of ['/api/v2/simple-qrs?pag=1', '/api/v2/simple-qrs?status=EXPIRED', '/api/v2/simple-qrs?per_page=101', '/api/v2/simple-qrs?page=0',
      `/api/v2/simple-qrs/${qr.id}?wait=31`, `/api/v2/simple-qrs/${qr.id}?wait=0`, `/api/v2/simple-qrs/${qr.id}?foo=1`, `/api/v2/simple-qrs/${qr.id}/payments?status=x`]) {
      const response = await t.request('GET', path, { apiKey: merchant.apiKey });
      expect(response.status, path).toBe(422);
    }
  });

  it('validates sandbox payment fields', async () => {
    const qr = await createQr(t, merchant);
    const response = await pay(t, merchant, qr.id, { amount: 'x', account_number: '12ab', source_bank: '', account_titular: 'y'.repeat(141), color: 'red' });
    expect(response.status).toBe(422);
    expect(response.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['account_number', 'account_titular', 'amount', 'color', 'source_bank']);
  });

  it('answers 415 for a non-JSON body and 400 for malformed JSON', async () => {
    const wrongType = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, rawBody: 'amount=5', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(wrongType.status).toBe(415);
    const malformed = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, rawBody: '{"amount":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('MALFORMED_JSON');
  });

  it('takes an empty cancel body with or without Content-Type', async () => {
    const a = await createQr(t, merchant);
    expect((await t.request('POST', `/api/v2/simple-qrs/${a.id}/cancel`, { apiKey: merchant.apiKey })).status).toBe(200);
    const b = await createQr(t, merchant);
    expect((await t.request('POST', `/api/v2/simple-qrs/${b.id}/cancel`, { apiKey: merchant.apiKey, body: {} })).status).toBe(200);
    const c = await createQr(t, merchant);
    const extra = await t.request('POST', `/api/v2/simple-qrs/${c.id}/cancel`, { apiKey: merchant.apiKey, body: { reason: 'x' } });
    expect(extra.status).toBe(422);
  });
});
