// webhooks/service.ts redeliverFailed ("redeliver every failed event", the console's button): the owner's newest
// failed events, at most REDELIVER_FAILED_MAX_EVENTS a call (the rest on the next call), only their failed
// deliveries to enabled endpoints, each event counted against its hourly redelivery limit (an event at the
// limit is left out and counted), another owner's failed deliveries untouched. On PGlite, and on PostgreSQL
// when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as webhooks from '../../src/webhooks/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint } from './harness.ts';

describe.each(databaseKinds())('redeliverFailed on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t?.close());

  const owner = (businessCode: number) => ({ kind: 'merchant' as const, businessCode });
  /** Marks every delivery of the merchant's endpoint failed, as the dispatcher leaves them after the last retry. */
  const failAll = (endpointId: string) =>
    t.db.query(`update webhook_deliveries set status = 'failed', last_error = 'HTTP 500', updated_at = now() where endpoint_id = $1`, [endpointId]);
  const statusesOf = async (endpointId: string) =>
    (await t.db.query<{ status: string; n: number }>('select status, count(*)::int as n from webhook_deliveries where endpoint_id = $1 group by status order by status', [endpointId]))
      .rows.map((row) => `${row.status}:${row.n}`);

  it('re-arms at most REDELIVER_FAILED_MAX_EVENTS events a call; the next call takes the rest', async () => {
    expect(webhooks.REDELIVER_FAILED_MAX_EVENTS).toBe(50);
    const merchant = await t.createMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://shop.example.com/hooks' });
    for (let n = 0; n < 52; n++) await commitPayment(t, merchant);
    await failAll(endpoint.id);
    const first = await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), t.clock.now());
    expect(first).toEqual({ events: 50, deliveries: 50, limited: 0, more: true });
    expect(await statusesOf(endpoint.id)).toEqual(['failed:2', 'pending:50']);
    const second = await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), t.clock.now());
    expect(second).toEqual({ events: 2, deliveries: 2, limited: 0, more: false });
    expect(await statusesOf(endpoint.id)).toEqual(['pending:52']);
    expect(await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), t.clock.now())).toEqual({ events: 0, deliveries: 0, limited: 0, more: false });
  });

  it('re-arms only the failed deliveries of enabled endpoints of this owner, and starts a new round due now', async () => {
    const merchant = await t.createMerchant();
    const stranger = await t.createMerchant();
    const failing = await createEndpoint(t, merchant.apiKey, { url: 'https://shop.example.com/failing' });
    const fine = await createEndpoint(t, merchant.apiKey, { url: 'https://shop.example.com/fine' });
    const disabled = await createEndpoint(t, merchant.apiKey, { url: 'https://shop.example.com/disabled' });
    const theirs = await createEndpoint(t, stranger.apiKey, { url: 'https://other.example.com/hooks' });
    await commitPayment(t, merchant);
    await commitPayment(t, stranger);
    await failAll(failing.id);
    await failAll(disabled.id);
    await failAll(theirs.id);
    await t.db.query(`update webhook_deliveries set status = 'succeeded' where endpoint_id = $1`, [fine.id]);
    await t.request('PATCH', `/api/v2/webhook-endpoints/${disabled.id}`, { apiKey: merchant.apiKey, body: { status: 'disabled' } });
    await t.db.query(`update webhook_deliveries set attempts = 3, attempts_total = 3 where endpoint_id = $1`, [failing.id]);

    const now = t.clock.now();
    expect(await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), now)).toEqual({ events: 1, deliveries: 1, limited: 0, more: false });
    const rearmed = (await t.db.query<{ status: string; attempts: number; attempts_total: number; next_attempt_at: Date }>(
      'select status, attempts, attempts_total, next_attempt_at from webhook_deliveries where endpoint_id = $1', [failing.id])).rows[0]!;
    expect(rearmed).toEqual({ status: 'pending', attempts: 0, attempts_total: 3, next_attempt_at: now });
    expect(await statusesOf(fine.id)).toEqual(['succeeded:1']);
    expect(await statusesOf(disabled.id)).toEqual(['failed:1']);
    expect(await statusesOf(theirs.id)).toEqual(['failed:1']);
  });

  it('honours the per-event limit: an event redelivered REDELIVERIES_PER_EVENT times this hour is left out and counted', async () => {
    const merchant = await t.createMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://shop.example.com/limited' });
    await commitPayment(t, merchant);
    await commitPayment(t, merchant);
    const events = (await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey })).body.data as Array<{ id: string }>;
    for (let n = 0; n < webhooks.REDELIVERIES_PER_EVENT; n++) await webhooks.redeliver(t.db, owner(merchant.businessCode), events[0]!.id, t.clock.now());
    await failAll(endpoint.id);
    expect(await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), t.clock.now())).toEqual({ events: 1, deliveries: 1, limited: 1, more: false });
    const left = (await t.db.query<{ status: string }>('select status from webhook_deliveries where event_id = $1', [events[0]!.id])).rows;
    expect(left).toEqual([{ status: 'failed' }]);
    // The call counted a redelivery of the other event: nine more fit this hour, then it is limited too.
    await failAll(endpoint.id);
    for (let n = 0; n < webhooks.REDELIVERIES_PER_EVENT - 1; n++) await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), t.clock.now()).then(() => failAll(endpoint.id));
    expect(await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), t.clock.now())).toEqual({ events: 0, deliveries: 0, limited: 2, more: false });
    // An hour later the window is new.
    t.clock.advance(webhooks.REDELIVERY_WINDOW_MS);
    expect(await webhooks.redeliverFailed(t.db, owner(merchant.businessCode), t.clock.now())).toEqual({ events: 2, deliveries: 2, limited: 0, more: false });
  });

  it('issues a constant number of statements whatever the number of events (no statement per event)', async () => {
    const merchant = await t.createMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://shop.example.com/counted' });
    for (let n = 0; n < 12; n++) await commitPayment(t, merchant);
    await failAll(endpoint.id);
    const counted = countingQueries(t);
    expect((await webhooks.redeliverFailed(counted.db, owner(merchant.businessCode), t.clock.now())).events).toBe(12);
    // find, count windows, lock, read the events' types, re-arm: five, for 12 events as for one.
    expect(counted.statements()).toBe(5);
  });
});

/** The test app's database with its transactions' statements counted (begin/commit aside). */
function countingQueries(t: TestApp) {
  let count = 0;
  const db = t.db;
  const original = db.transaction.bind(db);
  const wrapped = (<T>(work: (tx: Parameters<Parameters<typeof db.transaction>[0]>[0]) => Promise<T>) => original((tx) => work(new Proxy(tx, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'query') return (...args: unknown[]) => { count++; return (value as (...a: unknown[]) => unknown).apply(target, args); };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  })))) as typeof db.transaction;
  const counted = Object.create(db, { transaction: { value: wrapped } }) as typeof db;
  return { db: counted, statements: () => count };
}
