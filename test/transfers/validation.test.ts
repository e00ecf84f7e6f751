import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { balanceOf, fundedMerchant, postTransfer, transferBody, type Merchant } from './helpers.ts';

type Mutation = (body: Record<string, any>) => void;

const set = (path: string, value: unknown): Mutation => (body) => {
  const keys = path.split('.');
  let target = body;
  for (const key of keys.slice(0, -1)) target = target[key];
  if (value === undefined) delete target[keys.at(-1)!];
  else target[keys.at(-1)!] = value;
};

/** docs/api-reference.md#create-a-transfer field by field: [what is wrong, mutation, field, code]. */
const MATRIX: Array<[string, Mutation, string, string]> = [
  ['business_code missing', set('business_code', undefined), 'business_code', 'required'],
  ['business_code as a string', set('business_code', '1001'), 'business_code', 'invalid_type'],
  ['business_code with decimals', set('business_code', 1001.5), 'business_code', 'invalid_type'],
  ['amount missing', set('amount', undefined), 'amount', 'required'],
  ['amount below 0.10', set('amount', 0.09), 'amount', 'too_small'],
  ['amount zero', set('amount', 0), 'amount', 'too_small'],
  ['amount negative', set('amount', -5), 'amount', 'too_small'],
  ['amount above 20000.00', set('amount', 20000.01), 'amount', 'too_large'],
  ['amount string above 20000.00', set('amount', '20000.01'), 'amount', 'too_large'],
  ['amount with three decimals', set('amount', 10.001), 'amount', 'too_many_decimals'],
  ['amount string with three decimals', set('amount', '10.001'), 'amount', 'too_many_decimals'],
  ['amount in exponent text', set('amount', '1e3'), 'amount', 'invalid_format'],
  ['amount NaN text', set('amount', 'NaN'), 'amount', 'invalid_format'],
  ['amount empty text', set('amount', ''), 'amount', 'invalid_format'],
  ['amount boolean', set('amount', true), 'amount', 'invalid_type'],
  ['amount null', set('amount', null), 'amount', 'invalid_type'],
  ['currency missing', set('currency', undefined), 'currency', 'required'],
  ['currency USD', set('currency', 'USD'), 'currency', 'unsupported_currency'],
  ['currency lower case', set('currency', 'bob'), 'currency', 'unsupported_currency'],
  ['currency a number', set('currency', 68), 'currency', 'invalid_type'],
  ['reference over 50', set('reference', 'x'.repeat(51)), 'reference', 'too_long'],
  ['reference a number', set('reference', 5), 'reference', 'invalid_type'],
  ['destination missing', set('destination', undefined), 'destination', 'required'],
  ['destination a string', set('destination', 'bank'), 'destination', 'invalid_type'],
  ['destination.type missing', set('destination.type', undefined), 'destination.type', 'required'],
  ['destination.type other', set('destination.type', 'wallet'), 'destination.type', 'invalid_value'],
  ['bank_code missing', set('destination.bank_code', undefined), 'destination.bank_code', 'required'],
  ['bank_code not in the list', set('destination.bank_code', 9999), 'destination.bank_code', 'unknown_bank'],
  ['bank_code as a string', set('destination.bank_code', '1001'), 'destination.bank_code', 'invalid_type'],
  ['account_number missing', set('destination.account_number', undefined), 'destination.account_number', 'required'],
  ['account_number empty', set('destination.account_number', ''), 'destination.account_number', 'required'],
  ['account_number with letters', set('destination.account_number', '1234A678'), 'destination.account_number', 'invalid_format'],
  ['account_number with spaces', set('destination.account_number', '1234 5678'), 'destination.account_number', 'invalid_format'],
  ['account_number only hyphens', set('destination.account_number', '---'), 'destination.account_number', 'invalid_format'],
  ['account_number over 34', set('destination.account_number', '1'.repeat(35)), 'destination.account_number', 'too_long'],
  ['account_number a number', set('destination.account_number', 12345678), 'destination.account_number', 'invalid_type'],
  ['account_titular missing', set('destination.account_titular', undefined), 'destination.account_titular', 'required'],
  ['account_titular empty', set('destination.account_titular', ''), 'destination.account_titular', 'required'],
  ['account_titular blank', set('destination.account_titular', '   '), 'destination.account_titular', 'invalid_format'],
  ['account_titular over 100', set('destination.account_titular', 'a'.repeat(101)), 'destination.account_titular', 'too_long'],
  ['unknown top-level field', set('memo', 'x'), 'memo', 'unknown_field'],
  ['unknown destination field', set('destination.iban', 'x'), 'destination.iban', 'unknown_field'],
];

describe.each(databaseKinds())('transfer validation and order of checks on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
    merchant = await fundedMerchant(t, '1000.00');
  });
  afterAll(() => t.close());

  it.each(MATRIX)('422 when %s', async (_what, mutate, field, code) => {
    const body = structuredClone(transferBody(merchant.businessCode));
    mutate(body);
    const response = await postTransfer(t, merchant, body);
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ type: 'validation_error', code: 'VALIDATION_FAILED' });
    expect(response.body.errors).toEqual([{ field, code, message: expect.any(String) }]);
  });

  it('accepts the longest values allowed', async () => {
    const response = await postTransfer(t, merchant, transferBody(merchant.businessCode, {
      reference: 'r'.repeat(50),
      destination: { type: 'bank_account', bank_code: 1001, account_number: '1'.repeat(34), account_titular: 'n'.repeat(100) },
    }));
    expect(response.status).toBe(201);
  });

  it('lists every failing field in one 422, the unknown bank among them', async () => {
    const response = await postTransfer(t, merchant, {
      business_code: 'x',
      amount: 10.001,
      currency: 'USD',
      reference: 'r'.repeat(51),
      destination: { type: 'bank_account', bank_code: 4242, account_number: 'abc', account_titular: '' },
      extra: true,
    });
    expect(response.status).toBe(422);
    const found = Object.fromEntries(response.body.errors.map((error: { field: string; code: string }) => [error.field, error.code]));
    expect(found).toEqual({
      business_code: 'invalid_type',
      amount: 'too_many_decimals',
      currency: 'unsupported_currency',
      reference: 'too_long',
      'destination.bank_code': 'unknown_bank',
      'destination.account_number': 'invalid_format',
      'destination.account_titular': 'required',
      extra: 'unknown_field',
    });
  });

  it('answers a __proto__ key as 422 unknown_field', async () => {
    const raw = JSON.stringify(transferBody(merchant.businessCode)).replace('{', '{"__proto__":{"admin":true},');
    const response = await t.request('POST', '/api/v2/transfers', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID(), 'content-type': 'application/json' }, rawBody: raw,
    });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual([expect.objectContaining({ field: '__proto__', code: 'unknown_field' })]);
  });

  it('checks the key first: 401 without one, whatever the body', async () => {
    const response = await t.request('POST', '/api/v2/transfers', { body: { nonsense: true } });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('API_KEY_MISSING');
    const wrong = await t.request('POST', '/api/v2/transfers', { apiKey: 'mk_test_nope', body: {} });
    expect(wrong.body.code).toBe('API_KEY_INVALID');
  });

  it('answers 403 MODULE_NOT_ENABLED before the Idempotency-Key and the body are looked at', async () => {
    const noAch = await t.createMerchant({ ach_enabled: false });
    const response = await postTransfer(t, noAch, { nonsense: true }, null);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ type: 'permission_error', code: 'MODULE_NOT_ENABLED' });
  });

  it('answers 400 for a missing or invalid Idempotency-Key before validating the body', async () => {
    const missing = await postTransfer(t, merchant, { nonsense: true }, null);
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('IDEMPOTENCY_KEY_MISSING');
    for (const key of ['abc', '6ba7b810-9dad-11d1-80b4-00c04fd430c8' /* v1 */]) {
      const invalid = await postTransfer(t, merchant, { nonsense: true }, key);
      expect(invalid.status).toBe(400);
      expect(invalid.body.code).toBe('IDEMPOTENCY_KEY_INVALID');
    }
  });

  it('answers 400 MALFORMED_JSON and 415 for a body that is not JSON', async () => {
    const malformed = await t.request('POST', '/api/v2/transfers', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID(), 'content-type': 'application/json' }, rawBody: '{"amount":',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('MALFORMED_JSON');
    const text = await t.request('POST', '/api/v2/transfers', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID(), 'content-type': 'text/plain' }, rawBody: 'hello',
    });
    expect(text.status).toBe(415);
  });

  it('validates before comparing business_code: an invalid body of another merchant is a 422', async () => {
    const response = await postTransfer(t, merchant, transferBody(merchant.businessCode + 1, { amount: 0 }));
    expect(response.status).toBe(422);
  });

  it('answers 403 BUSINESS_CODE_MISMATCH for another merchant\'s code and does not store it: the corrected retry executes', async () => {
    const key = randomUUID();
    const before = await balanceOf(t, merchant);
    const mismatch = await postTransfer(t, merchant, transferBody(merchant.businessCode + 1), key);
    expect(mismatch.status).toBe(403);
    expect(mismatch.body).toMatchObject({ type: 'permission_error', code: 'BUSINESS_CODE_MISMATCH' });
    expect(await balanceOf(t, merchant)).toEqual(before);
    const corrected = await postTransfer(t, merchant, transferBody(merchant.businessCode), key);
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
  });

  it('answers INSUFFICIENT_FUNDS only after validation and business_code pass', async () => {
    const poor = await fundedMerchant(t, '1.00');
    const invalid = await postTransfer(t, poor, transferBody(poor.businessCode, { amount: 5, currency: 'USD' }));
    expect(invalid.status).toBe(422);
    const mismatch = await postTransfer(t, poor, transferBody(merchant.businessCode, { amount: 5 }));
    expect(mismatch.status).toBe(403);
    const refused = await postTransfer(t, poor, transferBody(poor.businessCode, { amount: 5 }));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ type: 'business_logic_error', code: 'INSUFFICIENT_FUNDS', message: expect.any(String) });
  });
});
