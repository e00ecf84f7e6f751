import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';

describe.each(databaseKinds())('service on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t.close());

  it('a new merchant reads a zero balance with its key', async () => {
    const merchant = await t.createMerchant({ name: 'Tienda' });
    const response = await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ business_code: merchant.businessCode, currency: 'BOB', available: 0, pending_out: 0 });
  });
});
