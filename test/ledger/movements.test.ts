// GET /api/v2/balance/movements (docs/api-reference.md#movements): page arithmetic, ordering, filters, stable paging, 422s, tenancy.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { FIXTURE_DESTINATION, FIXTURE_PAYER, fixtureRoutes } from '../helpers/fixture-routes.ts';

describe.each(databaseKinds())('balance movements on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t.close());

  /** Records a movement through the ledger (fixture route); returns its id. */
  async function move(merchant: { businessCode: number; apiKey: string }, direction: 'credit' | 'debit', amount: number): Promise<number> {
    const response = await t.request('POST', '/test/movements', {
      apiKey: merchant.apiKey,
      headers: { 'idempotency-key': randomUUID() },
      body: { business_code: merchant.businessCode, amount, direction },
    });
    expect(response.status).toBe(201);
    return response.body.movement_id;
  }

  const history = (apiKey: string, query = '') => t.request('GET', `/api/v2/balance/movements${query}`, { apiKey });

  /** Every id on every page, in the order the pages show them. */
  async function allPages(apiKey: string, perPage: number, extra = ''): Promise<number[]> {
    const first = await history(apiKey, `?per_page=${perPage}${extra}`);
    const ids: number[] = first.body.data.map((m: { id: number }) => m.id);
    for (let page = 2; page <= first.body.meta.last_page; page++) {
      const next = await history(apiKey, `?per_page=${perPage}&page=${page}${extra}`);
      expect(next.status).toBe(200);
      ids.push(...next.body.data.map((m: { id: number }) => m.id));
    }
    return ids;
  }

  it.each([0, 1, 15, 16, 30, 31])('%i movements: last_page, total and every page in order', async (count) => {
    const merchant = await t.createMerchant();
    const ids: number[] = [];
    for (let i = 0; i < count; i++) ids.push(await move(merchant, 'credit', 1 + i));
    const response = await history(merchant.apiKey);
    expect(response.status).toBe(200);
    expect(response.body.meta).toEqual({ current_page: 1, last_page: Math.max(1, Math.ceil(count / 15)), per_page: 15, total: count });
    expect(response.body.data).toHaveLength(Math.min(15, count));
    // Pages join up into the whole history, newest first.
    expect(await allPages(merchant.apiKey, 15)).toEqual([...ids].reverse());
    expect(await allPages(merchant.apiKey, 4)).toEqual([...ids].reverse());
  });

  it('a page past the end is empty with the right meta', async () => {
    const merchant = await t.createMerchant();
    for (let i = 0; i < 3; i++) await move(merchant, 'credit', 5);
    const response = await history(merchant.apiKey, '?page=9&per_page=2');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], meta: { current_page: 9, last_page: 2, per_page: 2, total: 3 } });
  });

  it('shows payments with masked payer details and transfers with a negative amount, status and masked destination', async () => {
    const merchant = await t.createMerchant();
    const paymentId = await move(merchant, 'credit', 150.5);
    const transferId = await move(merchant, 'debit', 100.25);
    const response = await history(merchant.apiKey);
    expect(response.body.data).toEqual([
      { id: transferId, type: 'transfer', amount: -100.25, currency: 'BOB', status: 'PENDING', reference: null, date: t.clock.now().toISOString(), ...FIXTURE_DESTINATION },
      { id: paymentId, type: 'payment', amount: 150.5, fee: 0, net: 150.5, currency: 'BOB', status: 'COMPLETED', reference: null, date: t.clock.now().toISOString(), ...FIXTURE_PAYER, external_reference: null },
    ]);
  });

  it('orders by date, newest first, and by id among equal dates', async () => {
    const merchant = await t.createMerchant();
    const start = t.clock.now().toISOString();
    t.clock.advance(60_000);
    const later = await move(merchant, 'credit', 1);
    t.clock.set(start);
    const earlierA = await move(merchant, 'credit', 2); // a larger id, but an older date
    const earlierB = await move(merchant, 'credit', 3); // same date as earlierA
    const response = await history(merchant.apiKey);
    expect(response.body.data.map((m: { id: number }) => m.id)).toEqual([later, earlierB, earlierA]);
    expect(await allPages(merchant.apiKey, 1)).toEqual([later, earlierB, earlierA]);
  });

  it('filters by type, counting only that type', async () => {
    const merchant = await t.createMerchant();
    const payments = [await move(merchant, 'credit', 50), await move(merchant, 'credit', 60)];
    const transfers = [await move(merchant, 'debit', 10), await move(merchant, 'debit', 20), await move(merchant, 'debit', 5)];
    const onlyPayments = await history(merchant.apiKey, '?type=payment');
    expect(onlyPayments.body.meta.total).toBe(2);
    expect(onlyPayments.body.data.map((m: { id: number }) => m.id)).toEqual([...payments].reverse());
    expect(await allPages(merchant.apiKey, 2, '&type=transfer')).toEqual([...transfers].reverse());
    const all = await history(merchant.apiKey, '?type=all');
    expect(all.body.meta.total).toBe(5);
  });

  it('before_id pins the history: new movements change neither data nor meta', async () => {
    const merchant = await t.createMerchant();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await move(merchant, i % 2 ? 'debit' : 'credit', i % 2 ? 1 : 10));
    const pin = ids[4]! + 1;
    const before = await history(merchant.apiKey, `?per_page=2&page=2&before_id=${pin}`);
    await move(merchant, 'credit', 7);
    await move(merchant, 'debit', 1);
    const after = await history(merchant.apiKey, `?per_page=2&page=2&before_id=${pin}`);
    expect(after.body).toEqual(before.body);
    expect(after.body.meta).toEqual({ current_page: 2, last_page: 3, per_page: 2, total: 5 });
    expect(after.body.data.map((m: { id: number }) => m.id)).toEqual([ids[2], ids[1]]);
    // Pinned below the newest movements, only the older ones count; with a type filter too.
    const older = await history(merchant.apiKey, `?before_id=${ids[2]}`);
    expect(older.body.meta.total).toBe(2);
    expect(older.body.data.map((m: { id: number }) => m.id)).toEqual([ids[1], ids[0]]);
    const olderPayments = await history(merchant.apiKey, `?type=payment&before_id=${ids[2]}`);
    expect(olderPayments.body.meta.total).toBe(1);
    expect(olderPayments.body.data.map((m: { id: number }) => m.id)).toEqual([ids[0]]);
  });

  // Pages are found from per-day counts of the movements' dates (migration 011): a model check that every
  // page is the slice of the whole history sorted by (date desc, id desc), with the history written out of
  // date order (ids do not follow dates), page boundaries on day boundaries, equal dates, a day without
  // movements, and pins that take part of one day's movements and all of another's out of the count.
  it('every page, with and without type and before_id, is the slice of the history sorted by date and id', async () => {
    const merchant = await t.createMerchant();
    const started = t.clock.now().toISOString();
    // Written in this order, each batch newest date first; 2026-11-23 has no movements. Per day, newest
    // first: 6 on the 24th, 4 on the 22nd, 3 on the 21st (written last), 5 on the 20th — page sizes 1, 2,
    // 3, 6 … put page boundaries exactly on the ends of days.
    const plan: Array<[string, 'credit' | 'debit']> = [
      ['2026-11-24T23:59:59.999Z', 'credit'], ['2026-11-24T12:00:00.000Z', 'credit'], ['2026-11-24T12:00:00.000Z', 'debit'],
      ['2026-11-24T06:00:00.000Z', 'credit'], ['2026-11-24T00:00:00.000Z', 'debit'], ['2026-11-24T00:00:00.000Z', 'credit'],
      ['2026-11-22T23:59:59.999Z', 'debit'], ['2026-11-22T18:00:00.000Z', 'credit'], ['2026-11-22T09:30:00.000Z', 'credit'],
      ['2026-11-22T00:00:00.000Z', 'debit'],
      ['2026-11-20T23:59:59.999Z', 'credit'], ['2026-11-20T20:00:00.000Z', 'debit'], ['2026-11-20T20:00:00.000Z', 'debit'],
      ['2026-11-20T01:00:00.000Z', 'credit'], ['2026-11-20T00:00:00.000Z', 'credit'],
      ['2026-11-21T23:59:59.999Z', 'debit'], ['2026-11-21T10:00:00.000Z', 'credit'], ['2026-11-21T00:00:00.000Z', 'credit'],
    ];
    const written: Array<{ id: number; date: string; type: 'payment' | 'transfer' }> = [];
    try {
      for (const [date, direction] of plan) {
        t.clock.set(date);
        written.push({ id: await move(merchant, direction, direction === 'credit' ? 100 : 1), date, type: direction === 'credit' ? 'payment' : 'transfer' });
      }
    } finally {
      t.clock.set(started);
    }
    const ids = written.map((m) => m.id);
    const model = (type: string | null, beforeId: number | null) => written
      .filter((m) => (type === null || m.type === type) && (beforeId === null || m.id < beforeId))
      .sort((a, b) => b.date.localeCompare(a.date) || b.id - a.id)
      .map((m) => m.id);
    // Not the order of writing: the model would pass for a history read in id order otherwise.
    expect(model(null, null)).not.toEqual([...ids].reverse());

    const pins = [
      null,
      Math.max(...ids) + 1, // pins nothing out
      ids[15]!, // the 21st's three movements: a day whose count drops to 0
      ids[8]!, // the 22nd's oldest two, the 20th's and the 21st's: part of a day
      ids[1]!, // all but the newest movement
    ];
    for (const type of [null, 'payment', 'transfer', 'refund']) {
      for (const beforeId of pins) {
        const expected = model(type, beforeId);
        const query = `${type === null ? '' : `&type=${type}`}${beforeId === null ? '' : `&before_id=${beforeId}`}`;
        for (const perPage of [1, 2, 3, 4, 6, 7, 18]) {
          const lastPage = Math.max(1, Math.ceil(expected.length / perPage));
          for (let page = 1; page <= lastPage + 1; page++) {
            const response = await history(merchant.apiKey, `?per_page=${perPage}&page=${page}${query}`);
            const where = `type=${type} before_id=${beforeId} per_page=${perPage} page=${page}`;
            expect(response.status, where).toBe(200);
            expect(response.body.meta, where).toEqual({ current_page: page, last_page: lastPage, per_page: perPage, total: expected.length });
            expect(response.body.data.map((m: { id: number }) => m.id), where).toEqual(expected.slice((page - 1) * perPage, page * perPage));
          }
        }
      }
    }
  }, 120_000);

  it('answers 422 naming each bad parameter, and never coerces nonsense', async () => {
    const merchant = await t.createMerchant();
    const response = await history(merchant.apiKey, '?page=0&per_page=101&type=sideways&before_id=abc&sort=asc');
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    const byField = Object.fromEntries(response.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]));
    expect(byField).toEqual({ page: 'too_small', per_page: 'too_large', type: 'invalid_value', before_id: 'invalid_type', sort: 'unknown_field' });
    expect((await history(merchant.apiKey, '?page=1.5')).status).toBe(422);
    expect((await history(merchant.apiKey, '?per_page=0')).status).toBe(422);
  });

  it('shows a merchant only its own movements', async () => {
    const owner = await t.createMerchant();
    const other = await t.createMerchant();
    await move(owner, 'credit', 10);
    const response = await history(other.apiKey);
    expect(response.body).toEqual({ data: [], meta: { current_page: 1, last_page: 1, per_page: 15, total: 0 } });
  });

  it('needs a merchant key', async () => {
    expect((await t.request('GET', '/api/v2/balance/movements')).status).toBe(401);
    const partner = await t.createPartner();
    const response = await history(partner.masterKey);
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('MERCHANT_KEY_REQUIRED');
  });
});
