// Webhook fairness between owners: a cap on endpoints per owner, sending slots shared per owner, a delivery
// never sent twice at once, and a bound on redeliveries of one event (docs/webhooks.md).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENDPOINTS_PER_OWNER, REDELIVERIES_PER_EVENT } from '../../src/webhooks/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint, startReceiver, webhookJobs, type Receiver } from './harness.ts';

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  // A bound for a failing run only: the assertions are on what arrived, never on how fast.
  const deadline = performance.now() + 10_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const firstEventOf = async (t: TestApp, apiKey: string): Promise<string> =>
  (await t.request('GET', '/api/v2/events', { apiKey })).body.data[0].id;

describe.each(databaseKinds())('webhook fairness on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterEach(async () => {
    await receiver?.close();
  });
  afterAll(() => t.close());

  it(`caps an owner at ${MAX_ENDPOINTS_PER_OWNER} endpoints: one more is a 422 on url; deleting one makes room; other owners are not affected`, async () => {
    const merchant = await t.createMerchant();
    const created = [];
    for (let i = 0; i < MAX_ENDPOINTS_PER_OWNER; i++) created.push(await createEndpoint(t, merchant.apiKey, { url: `https://shop.example.com/${i}` }));
    const refused = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url: 'https://shop.example.com/more' } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ type: 'validation_error', code: 'VALIDATION_FAILED' });
    expect(refused.body.errors).toEqual([{ field: 'url', code: 'invalid_value', message: expect.stringContaining(`${MAX_ENDPOINTS_PER_OWNER} webhook endpoints`) }]);
    // A disabled endpoint still counts; a deleted one does not.
    await t.request('PATCH', `/api/v2/webhook-endpoints/${created[0]!.id}`, { apiKey: merchant.apiKey, body: { status: 'disabled' } });
    expect((await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url: 'https://shop.example.com/more' } })).status).toBe(422);
    await t.request('DELETE', `/api/v2/webhook-endpoints/${created[1]!.id}`, { apiKey: merchant.apiKey });
    expect((await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url: 'https://shop.example.com/more' } })).status).toBe(201);
    const other = await t.createMerchant();
    expect((await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: other.apiKey, body: { url: 'https://other.example.com/' } })).status).toBe(201);
  });

  it('sends another owner\'s webhook while one owner\'s many endpoints hang: slots are shared per owner', async () => {
    receiver = await startReceiver();
    receiver.answer = (webhook) => (webhook.path.startsWith('/stuck') ? 'hang' : 200); // hangs until the receiver closes
    const stuck = await t.createMerchant();
    const other = await t.createMerchant();
    for (let i = 0; i < MAX_ENDPOINTS_PER_OWNER; i++) await createEndpoint(t, stuck.apiKey, { url: `${receiver.url}/stuck/${i}` });
    await createEndpoint(t, other.apiKey, { url: `${receiver.url}/other` });
    await commitPayment(t, stuck); // 16 deliveries, due before the other owner's
    await commitPayment(t, other);

    // 8 slots, at most 4 per owner. Before slots were shared per owner, the stuck owner's 16 endpoints took all 8.
    const jobs = webhookJobs(t, { maxInFlight: 8, maxInFlightPerOwner: 4, timeoutMs: 60_000 });
    jobs.dispatcher.wake();
    await waitFor(() => receiver.received.some((w) => w.path === '/other'), 'the other owner\'s webhook arrives');
    expect(receiver.received.filter((w) => w.path.startsWith('/stuck'))).toHaveLength(4);
    // Every stuck send is still hanging: none of them has finished.
    const attempts = await t.db.query<{ n: number }>(
      "select count(*)::bigint as n from webhook_attempts a join webhook_endpoints w on w.id = a.endpoint_id where w.url like '%/stuck/%'",
    );
    expect(attempts.rows[0]!.n).toBe(0);
    await receiver.close(); // ends the hanging sends (failed attempts), so the dispatcher can stop
    await jobs.stop();
  });

  it('never sends a delivery twice at once: a redelivery leaves a delivery in flight alone', async () => {
    receiver = await startReceiver();
    receiver.answer = () => (receiver.received.length === 1 ? 'hang' : 200);
    const merchant = await t.createMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/slow` });
    await commitPayment(t, merchant);
    const first = webhookJobs(t, { timeoutMs: 60_000, workerId: 'first' });
    await first.dispatcher.runOnce();
    await waitFor(() => receiver.received.length === 1, 'the first send arrives');

    const redelivered = await t.request('POST', `/api/v2/events/${await firstEventOf(t, merchant.apiKey)}/redeliver`, { apiKey: merchant.apiKey });
    expect(redelivered.status).toBe(202);
    expect(redelivered.body.endpoint_ids).toEqual([]); // its delivery is being sent: nothing re-armed
    const second = webhookJobs(t, { workerId: 'second' });
    await second.deliverAll();
    await second.stop();
    expect(receiver.received).toHaveLength(1);

    await receiver.close();
    await first.stop();
  });

  it(`allows ${REDELIVERIES_PER_EVENT} redeliveries of an event per hour, then 429 with Retry-After until the hour is over`, async () => {
    const merchant = await t.createMerchant();
    await createEndpoint(t, merchant.apiKey, { url: 'https://shop.example.com/hooks' });
    await commitPayment(t, merchant);
    const eventId = await firstEventOf(t, merchant.apiKey);
    const redeliver = () => t.request('POST', `/api/v2/events/${eventId}/redeliver`, { apiKey: merchant.apiKey });
    for (let i = 0; i < REDELIVERIES_PER_EVENT; i++) {
      expect((await redeliver()).status).toBe(202);
      t.clock.advance(60_000);
    }
    const limited = await redeliver();
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ type: 'rate_limit_error', code: 'RATE_LIMITED', message: expect.stringContaining('redelivered') });
    expect(limited.headers.get('retry-after')).toBe(String(3600 - 60 * REDELIVERIES_PER_EVENT));
    // Another event of the same owner has its own count.
    await commitPayment(t, merchant);
    expect((await t.request('POST', `/api/v2/events/${await firstEventOf(t, merchant.apiKey)}/redeliver`, { apiKey: merchant.apiKey })).status).toBe(202);
    t.clock.advance((3600 - 60 * REDELIVERIES_PER_EVENT) * 1000);
    expect((await redeliver()).status).toBe(202);
  });
});

describeOnPostgres('concurrent webhook requests on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t.close());

  it('answers rounds of 20 simultaneous redeliveries of an event fanned out to 8 endpoints, with a dispatcher sending them, by 202 or 429: never a deadlock\'s 500', async () => {
    const receiver = await startReceiver();
    const merchant = await t.createMerchant();
    for (let i = 0; i < 8; i++) await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/${i}` });
    // The dispatcher completes deliveries of the same event while the redeliveries lock them: before the
    // rows were locked in one order (and redeliveries of one event serialized), about 1 in 200 answered 500 (40P01).
    const jobs = webhookJobs(t, { batchSize: 3 });
    let sending = true;
    const dispatching = (async () => {
      while (sending) if (!(await jobs.dispatcher.runOnce())) await new Promise((resolve) => setTimeout(resolve, 1));
    })();
    const statuses: number[][] = [];
    for (let round = 0; round < 15; round++) {
      await commitPayment(t, merchant);
      const eventId = await firstEventOf(t, merchant.apiKey);
      const answers = await Promise.all(Array.from({ length: 20 }, () =>
        t.request('POST', `/api/v2/events/${eventId}/redeliver`, { apiKey: merchant.apiKey })));
      statuses.push(answers.map((answer) => answer.status));
    }
    sending = false;
    await dispatching;
    await jobs.stop();
    await receiver.close();
    expect(statuses.flat().filter((status) => status >= 500)).toEqual([]);
    for (const round of statuses) {
      expect(round.filter((status) => status === 202)).toHaveLength(REDELIVERIES_PER_EVENT);
      expect(round.filter((status) => status === 429)).toHaveLength(20 - REDELIVERIES_PER_EVENT);
    }
  });

  it(`lets simultaneous creations pass the cap of ${MAX_ENDPOINTS_PER_OWNER} endpoints by none`, async () => {
    const merchant = await t.createMerchant();
    const answers = await Promise.all(Array.from({ length: MAX_ENDPOINTS_PER_OWNER + 8 }, (_, i) =>
      t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url: `https://shop.example.com/${i}` } })));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(MAX_ENDPOINTS_PER_OWNER);
    expect(answers.filter((answer) => answer.status === 422)).toHaveLength(8);
  });
});
