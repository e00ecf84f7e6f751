import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { fundedMerchant, postTransfer, transferBody, type Merchant } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { transferIdsOfMovements } from '../../src/transfers/service.ts';
import { pricePlanOf } from '../../src/merchants/service.ts';

describe.each(databaseKinds())('reading transfers, tenancy and masking on %s', (kind) => {
  let t: TestApp;
  let owner: Merchant;
  let stranger: Merchant;
  let ids: number[];
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
    owner = await fundedMerchant(t, '1000.00');
    stranger = await fundedMerchant(t, '1000.00');
    ids = [];
    for (let i = 1; i <= 5; i++) {
      t.clock.advance(1_000);
      const response = await postTransfer(t, owner, transferBody(owner.businessCode, { amount: i, reference: `T${i}` }));
      ids.push(response.body.id);
    }
    await t.request('POST', `/api/v2/transfers/${ids[0]}/cancel`, { apiKey: owner.apiKey });
  });
  afterAll(() => t.close());

  it('lists newest first with page-number pagination', async () => {
    const page1 = await t.request('GET', '/api/v2/transfers?per_page=2', { apiKey: owner.apiKey });
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((transfer: { id: number }) => transfer.id)).toEqual([ids[4], ids[3]]);
    expect(page1.body.meta).toEqual({ current_page: 1, last_page: 3, per_page: 2, total: 5 });
    const page3 = await t.request('GET', '/api/v2/transfers?per_page=2&page=3', { apiKey: owner.apiKey });
    expect(page3.body.data.map((transfer: { id: number }) => transfer.id)).toEqual([ids[0]]);
    const past = await t.request('GET', '/api/v2/transfers?per_page=2&page=9', { apiKey: owner.apiKey });
    expect(past.body).toEqual({ data: [], meta: { current_page: 9, last_page: 3, per_page: 2, total: 5 } });
    const defaults = await t.request('GET', '/api/v2/transfers', { apiKey: owner.apiKey });
    expect(defaults.body.meta).toEqual({ current_page: 1, last_page: 1, per_page: 15, total: 5 });
  });

  it('filters by status', async () => {
    const canceled = await t.request('GET', '/api/v2/transfers?status=CANCELED', { apiKey: owner.apiKey });
    expect(canceled.body.data.map((transfer: { id: number }) => transfer.id)).toEqual([ids[0]]);
    expect(canceled.body.meta.total).toBe(1);
    const pending = await t.request('GET', '/api/v2/transfers?status=PENDING', { apiKey: owner.apiKey });
    expect(pending.body.meta.total).toBe(4);
    const completed = await t.request('GET', '/api/v2/transfers?status=COMPLETED', { apiKey: owner.apiKey });
    expect(completed.body).toEqual({ data: [], meta: { current_page: 1, last_page: 1, per_page: 15, total: 0 } });
  });

  it.each([
    ['status=DONE', 'status', 'invalid_value'],
    ['page=0', 'page', 'too_small'],
    ['page=two', 'page', 'invalid_type'],
    ['per_page=101', 'per_page', 'too_large'],
    ['sort=asc', 'sort', 'unknown_field'],
  ])('answers 422 for the query %s', async (query, field, code) => {
    const response = await t.request('GET', `/api/v2/transfers?${query}`, { apiKey: owner.apiKey });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual([expect.objectContaining({ field, code })]);
  });

  it('never shows one merchant\'s transfers to another: 404 on read, cancel and advance, absent from lists', async () => {
    for (const [method, path] of [
      ['GET', `/api/v2/transfers/${ids[1]}`],
      ['POST', `/api/v2/transfers/${ids[1]}/cancel`],
      ['POST', `/api/v2/sandbox/transfers/${ids[1]}/advance`],
    ] as const) {
      const response = await t.request(method, path, { apiKey: stranger.apiKey, body: method === 'POST' && path.includes('advance') ? { to: 'COMPLETED' } : undefined });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    }
    const list = await t.request('GET', '/api/v2/transfers', { apiKey: stranger.apiKey });
    expect(list.body.meta.total).toBe(0);
    const mine = await t.request('GET', `/api/v2/transfers/${ids[1]}`, { apiKey: owner.apiKey });
    expect(mine.body.status).toBe('PENDING');
  });

  it('needs a merchant key for transfer reads', async () => {
    expect((await t.request('GET', '/api/v2/transfers')).status).toBe(401);
    const partner = await t.createPartner();
    const response = await t.request('GET', '/api/v2/transfers', { apiKey: partner.masterKey });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('MERCHANT_KEY_REQUIRED');
  });

  it.each([
    ['1234', '****'],
    ['123456', '****56'],
    ['1234-5678-90', '**********90'],
    ['20150123456789', '**********6789'],
    ['1-2', '***'],
    ['12345-1', '******1'],
    ['000-123-4567-8901', '*************8901'],
  ])('masks %s as %s in the response, reads, lists, event and movement; the full number stays in the transfers table', async (accountNumber, masked) => {
    const created = await postTransfer(t, owner, transferBody(owner.businessCode, {
      destination: { type: 'bank_account', bank_code: 1001, account_number: accountNumber, account_titular: 'Ana' },
    }));
    expect(created.status).toBe(201);
    expect(created.body.destination.account_number).toBe(masked);
    const read = await t.request('GET', `/api/v2/transfers/${created.body.id}`, { apiKey: owner.apiKey });
    expect(read.body.destination.account_number).toBe(masked);
    const list = await t.request('GET', '/api/v2/transfers?per_page=1', { apiKey: owner.apiKey });
    expect(list.body.data[0].destination.account_number).toBe(masked);
    const canceled = await t.request('POST', `/api/v2/transfers/${created.body.id}/cancel`, { apiKey: owner.apiKey });
    expect(canceled.body.destination.account_number).toBe(masked);
    const ownEvents = (await eventsOfOwner(t.db, { kind: 'merchant', businessCode: owner.businessCode }))
      .filter((event) => event.data.id === created.body.id);
    expect(ownEvents.map((event) => event.type).sort()).toEqual(['transfer.canceled', 'transfer.created']);
    for (const event of ownEvents) expect((event.data.destination as { account_number: string }).account_number).toBe(masked);
    const movement = await t.db.query<{ snapshot: { destination: { account_number: string } } }>(
      'select snapshot from movements where id = $1::bigint', [created.body.movement_id]);
    expect(movement.rows[0]!.snapshot.destination.account_number).toBe(masked);
    const row = await t.db.query<{ account_number: string }>('select account_number from transfers where id = $1::bigint', [created.body.id]);
    expect(row.rows[0]!.account_number).toBe(accountNumber);
    if (accountNumber.length > 4) {
      const stored = await t.db.query<{ hits: number }>(
        `select (select count(*) from events where data::text like '%' || $1::text || '%')
              + (select count(*) from movements where snapshot::text like '%' || $1::text || '%')
              + (select count(*) from idempotency_keys where response_body::text like '%' || $1::text || '%') as hits`,
        [accountNumber]);
      expect(stored.rows[0]!.hits).toBe(0);
    }
  });
  it('finds the transfers behind a page of the merchant\'s movements (the console\'s links), never another merchant\'s', async () => {
    const transfers = await Promise.all(ids.map(async (id) => (await t.request('GET', `/api/v2/transfers/${id}`, { apiKey: owner.apiKey })).body));
    const movementIds = transfers.map((transfer: { movement_id: number }) => transfer.movement_id);
    const found = await transferIdsOfMovements(t.db, owner.businessCode, [...movementIds, 999_999_999]);
    expect([...found.entries()].sort((x, y) => x[0] - y[0])).toEqual(transfers.map((transfer: { id: number; movement_id: number }) => [transfer.movement_id, transfer.id]).sort((x, y) => x[0]! - y[0]!));
    expect((await transferIdsOfMovements(t.db, stranger.businessCode, movementIds)).size).toBe(0);
    expect((await transferIdsOfMovements(t.db, owner.businessCode, [])).size).toBe(0);
  });

  it('reads the price plan in force for a merchant (what the console\'s confirmation shows as the fee)', async () => {
    expect((await t.request('PATCH', `/admin/v1/merchants/${stranger.businessCode}`, { body: { pricing: { qr_percent: 2, qr_fixed: 0.5, transfer_fixed: 3.25 } } })).status).toBe(200);
    expect(await pricePlanOf(t.db, stranger.businessCode)).toEqual({ qrBasisPoints: 200, qrFixed: 50, transferFixed: 325 });
    await expect(pricePlanOf(t.db, 987_654_321)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
