// The owner's QR pages on the Banco Económico rail (RAIL=baneco, against the bank simulator): a QR the bank
// issued shows the bank's reference on its page, and its cancel from the console is the API's — the QR reads
// CANCELED and its cancel at the bank is queued (rail_qr_cancels), as POST /api/v2/simple-qrs/{id}/cancel does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/databases.ts';
import { startBankedApp, type BankedApp } from '../bank/helpers.ts';
import { newOwner, type ConsoleBrowser } from './helpers.ts';

describe.each(databaseKinds())('the console\'s QR pages on the bank\'s rail on %s', (kind) => {
  let s: BankedApp;
  let owner: ConsoleBrowser;
  let merchant: { businessCode: number; apiKey: string };
  beforeAll(async () => {
    s = await startBankedApp(kind);
    merchant = await s.t.createMerchant({ name: 'Café del Banco' });
    owner = await newOwner(s.t, merchant.businessCode, 'qrs.bank.owner@example.com');
  });
  afterAll(() => s?.close());

  it('a bank\'s QR shows its bank reference; its cancel from the page is queued at the bank', async () => {
    const made = await s.t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 21, description: 'Mesa 2' } });
    expect(made.status).toBe(201);
    const { id, rail_reference: railReference } = made.body;
    expect(railReference).toEqual(expect.any(String));
    const page = await owner.get(`/console/qrs/${id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<dd>${railReference}</dd>`);
    const canceled = await owner.post(`/console/qrs/${id}/cancel`);
    expect(canceled.status).toBe(303);
    expect((await s.t.request('GET', `/api/v2/simple-qrs/${id}`, { apiKey: merchant.apiKey })).body).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant' });
    const { rows } = await s.t.db.query<{ n: number }>('select count(*)::int as n from rail_qr_cancels where rail = $1 and rail_reference = $2', ['baneco', railReference]);
    expect(rows[0]!.n).toBe(1);
  });
});
