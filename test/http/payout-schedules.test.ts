// The operator's payout schedules (docs/api-reference.md#payout-schedules, docs/payouts.md): PUT and GET
// /admin/v1/merchants/{business_code}/payout-schedule through HTTP — what is stored and shown (masked), the
// defaults, the destination kept or required, the 422 matrix, 403 without the ACH module, 404 and 401.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';

const DESTINATION = { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' };
const MASKED_DESTINATION = { ...DESTINATION, account_number: '**********5678' };
const UNKNOWN_BUSINESS_CODE = 987_654;

const errorBody = (type: string, code: string) => ({ type, code, message: expect.any(String) });
const fieldError = (field: string, code: string) => ({ field, code, message: expect.any(String) });

describe.each(databaseKinds())('payout schedules in the operator API on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t?.close());

  const path = (businessCode: number) => `/admin/v1/merchants/${businessCode}/payout-schedule`;
  const put = (businessCode: number, body: unknown) => t.request('PUT', path(businessCode), { body });
  const get = (businessCode: number) => t.request('GET', path(businessCode));
  const achMerchant = async () => (await t.createMerchant({ ach_enabled: true })).businessCode;

  it('GET of a merchant that never had a schedule: manual, the defaults, nothing stored, no run', async () => {
    const businessCode = await achMerchant();
    const response = await get(businessCode);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      business_code: businessCode, interval: 'manual', weekday: null, destination: null, minimum: 10, keep: 0,
      effective_from: null, last_run: null, updated_at: null,
    });
  });

  it('PUT daily stores the schedule and answers it with the destination masked; GET reads the same; it takes effect from the next PAYOUT_TIME', async () => {
    const businessCode = await achMerchant();
    // 2026-11-22T16:00Z is 12:00 in La Paz: today's 18:00 is still to come.
    t.clock.set('2026-11-22T16:00:00.000Z');
    const response = await put(businessCode, { interval: 'daily', destination: DESTINATION, minimum: '25.50', keep: 100 });
    expect(response.status).toBe(200);
    const schedule = {
      business_code: businessCode, interval: 'daily', weekday: null, destination: MASKED_DESTINATION, minimum: 25.5, keep: 100,
      effective_from: '2026-11-22', last_run: null, updated_at: '2026-11-22T16:00:00.000Z',
    };
    expect(response.body).toEqual(schedule);
    expect(response.text).not.toContain('20150123455678');
    const read = await get(businessCode);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(schedule);
    expect(read.text).not.toContain('20150123455678');
    // The full number is kept, like a transfer's, to pay to.
    const { rows } = await t.db.query<{ account_number: string }>('select account_number from payout_schedules where business_code = $1::bigint', [businessCode]);
    expect(rows[0]!.account_number).toBe('20150123455678');
  });

  it('a schedule set after today\'s PAYOUT_TIME takes effect tomorrow; weekly keeps its weekday', async () => {
    const businessCode = await achMerchant();
    t.clock.set('2026-11-22T22:00:00.000Z'); // 18:00 in La Paz
    const response = await put(businessCode, { interval: 'weekly', weekday: 5, destination: DESTINATION });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ interval: 'weekly', weekday: 5, minimum: 10, keep: 0, effective_from: '2026-11-23' });
  });

  it('{"interval": "manual"} alone keeps the stored destination and switches payouts off; minimum and keep left out go back to their defaults', async () => {
    const businessCode = await achMerchant();
    t.clock.set('2026-11-22T16:00:00.000Z');
    expect((await put(businessCode, { interval: 'daily', destination: DESTINATION, minimum: 50, keep: 5 })).status).toBe(200);
    const off = await put(businessCode, { interval: 'manual' });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ interval: 'manual', weekday: null, destination: MASKED_DESTINATION, minimum: 10, keep: 0, effective_from: null });
    // Switched on again without a destination: the stored one.
    const on = await put(businessCode, { interval: 'weekly', weekday: 1 });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ interval: 'weekly', weekday: 1, destination: MASKED_DESTINATION });
    // A new destination replaces it.
    const moved = await put(businessCode, { interval: 'weekly', weekday: 1, destination: { ...DESTINATION, bank_code: 1001, account_number: '1234-5678-90' } });
    expect(moved.body.destination).toEqual({ ...DESTINATION, bank_code: 1001, account_number: '**********90' });
  });

  it('the payout account of a merchant onboarded before schedules existed counts as stored', async () => {
    const businessCode = await achMerchant();
    // As onboarding stored it for merchants created before migration 024 (no schedule row).
    await t.db.query(
      `insert into merchant_payout_accounts (business_code, bank_code, account_number, account_holder, created_at)
       values ($1::bigint, 1001, '1000-2000-3456', 'Ana Pérez', now())`,
      [businessCode],
    );
    const read = await get(businessCode);
    expect(read.body).toMatchObject({ interval: 'manual', destination: { type: 'bank_account', bank_code: 1001, account_number: '**********3456', account_titular: 'Ana Pérez' }, updated_at: null });
    const response = await put(businessCode, { interval: 'daily' });
    expect(response.status).toBe(200);
    expect(response.body.destination).toEqual({ type: 'bank_account', bank_code: 1001, account_number: '**********3456', account_titular: 'Ana Pérez' });
  });

  it('a destination is required when none is stored (422 required), also to switch off', async () => {
    const businessCode = await achMerchant();
    for (const body of [{ interval: 'daily' }, { interval: 'manual' }]) {
      const response = await put(businessCode, body);
      expect(response.status).toBe(422);
      expect(response.body).toEqual({ ...errorBody('validation_error', 'VALIDATION_FAILED'), errors: [fieldError('destination', 'required')] });
    }
    expect((await get(businessCode)).body.updated_at).toBeNull(); // nothing stored
  });

  it('weekday is required with weekly and refused (invalid_value) otherwise, in the same 422 as a missing destination', async () => {
    const businessCode = await achMerchant();
    const weeklyAlone = await put(businessCode, { interval: 'weekly' });
    expect(weeklyAlone.status).toBe(422);
    expect(weeklyAlone.body.errors).toEqual([fieldError('weekday', 'required'), fieldError('destination', 'required')]);
    for (const interval of ['daily', 'manual']) {
      const response = await put(businessCode, { interval, weekday: 3, destination: DESTINATION });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual([fieldError('weekday', 'invalid_value')]);
    }
  });

  it.each([
    ['an unknown interval', { interval: 'monthly' }, [fieldError('interval', 'invalid_value')]],
    ['no interval', { destination: DESTINATION }, [fieldError('interval', 'required')]],
    ['weekday 0', { interval: 'weekly', weekday: 0 }, [fieldError('weekday', 'too_small')]],
    ['weekday 8', { interval: 'weekly', weekday: 8 }, [fieldError('weekday', 'too_large')]],
    ['weekday as text', { interval: 'weekly', weekday: '1' }, [fieldError('weekday', 'invalid_type')]],
    ['minimum 0.09', { interval: 'daily', minimum: 0.09 }, [fieldError('minimum', 'too_small')]],
    ['minimum 20000.01', { interval: 'daily', minimum: '20000.01' }, [fieldError('minimum', 'too_large')]],
    ['minimum 10.001', { interval: 'daily', minimum: 10.001 }, [fieldError('minimum', 'too_many_decimals')]],
    ['keep -1', { interval: 'daily', keep: -1 }, [fieldError('keep', 'too_small')]],
    ['keep 1000000.01', { interval: 'daily', keep: 1_000_000.01 }, [fieldError('keep', 'too_large')]],
    ['keep as 1e3 text', { interval: 'daily', keep: '1e3' }, [fieldError('keep', 'invalid_format')]],
    ['an unknown bank', { interval: 'daily', destination: { ...DESTINATION, bank_code: 9999 } }, [fieldError('destination.bank_code', 'unknown_bank')]],
    ['a bad account number', { interval: 'daily', destination: { ...DESTINATION, account_number: '12ab' } }, [fieldError('destination.account_number', 'invalid_format')]],
    ['no account holder', { interval: 'daily', destination: { ...DESTINATION, account_titular: undefined } }, [fieldError('destination.account_titular', 'required')]],
    ['another destination type', { interval: 'daily', destination: { ...DESTINATION, type: 'wallet' } }, [fieldError('destination.type', 'invalid_value')]],
    ['an unknown field', { interval: 'daily', destination: DESTINATION, day: 1 }, [fieldError('day', 'unknown_field')]],
  ])('422 for %s, naming the field', async (_case, body, errors) => {
    const businessCode = await achMerchant();
    const response = await put(businessCode, body);
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ ...errorBody('validation_error', 'VALIDATION_FAILED'), errors });
  });

  it('accepts the bounds: minimum 0.10 and 20000.00, keep 0 and 1000000.00', async () => {
    const businessCode = await achMerchant();
    for (const [minimum, keep] of [['0.10', 0], [20_000, '1000000.00']] as const) {
      const response = await put(businessCode, { interval: 'daily', destination: DESTINATION, minimum, keep });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ minimum: Number(minimum), keep: Number(keep) });
    }
  });

  it('daily or weekly without the ACH module: 403 MODULE_NOT_ENABLED, nothing stored; manual is allowed', async () => {
    const { businessCode } = await t.createMerchant({ ach_enabled: false });
    for (const body of [{ interval: 'daily', destination: DESTINATION }, { interval: 'weekly', weekday: 2, destination: DESTINATION }]) {
      const response = await put(businessCode, body);
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody('permission_error', 'MODULE_NOT_ENABLED'));
    }
    expect((await get(businessCode)).body.updated_at).toBeNull();
    const manual = await put(businessCode, { interval: 'manual', destination: DESTINATION });
    expect(manual.status).toBe(200);
    expect(manual.body).toMatchObject({ interval: 'manual', destination: MASKED_DESTINATION });
  });

  it('404 for an unknown merchant, 401 without the operator token', async () => {
    for (const response of [await get(UNKNOWN_BUSINESS_CODE), await put(UNKNOWN_BUSINESS_CODE, { interval: 'daily', destination: DESTINATION })]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody('invalid_request_error', 'NOT_FOUND'));
    }
    const businessCode = await achMerchant();
    const anonymous = await t.request('GET', path(businessCode), { adminToken: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual(errorBody('authentication_error', 'ADMIN_TOKEN_INVALID'));
  });
});
