import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as events from '../../src/events/service.ts';
import { claimDueDeliveries, completeDeliveries } from '../../src/webhooks/store.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint, startReceiver, verifyWebhook, webhookJobs, type Receiver, type WebhookJobs } from './harness.ts';

describe.each(databaseKinds())('webhook delivery on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  let jobs: WebhookJobs;
  beforeAll(async () => {
    // Near the real time: the standardwebhooks library rejects timestamps more than 5 minutes off.
    t = await startTestApp({
      kind,
      plugins: [fixtureRoutes],
      clock: new TestClock(new Date().toISOString()),
      env: { WEBHOOK_RETRY_SCHEDULE: '5s,30s', WEBHOOK_TIMEOUT: '300ms' },
    });
    receiver = await startReceiver();
    jobs = webhookJobs(t);
  });
  afterEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
  });
  afterAll(async () => {
    await jobs.stop();
    await receiver.close();
    await t.close();
  });

  const newMerchant = () => t.createMerchant();

  it('delivers a committed payment event, signed so that the standardwebhooks library verifies it', async () => {
    const merchant = await newMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/hooks` });
    const movementId = await commitPayment(t, merchant);
    await jobs.deliverAll();

    expect(receiver.received).toHaveLength(1);
    const [webhook] = receiver.received;
    expect(webhook!.path).toBe('/hooks');
    expect(webhook!.headers['content-type']).toBe('application/json');
    const payload = new Webhook(endpoint.secret).verify(webhook!.body, webhook!.headers) as Record<string, unknown>;
    expect(payload).toMatchObject({ type: 'simple_qr.payment_received', data: { movement_id: movementId } });
    expect(Object.keys(payload)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(webhook!.headers['webhook-id']).toBe(payload.id);
    expect(Number(webhook!.headers['webhook-timestamp'])).toBe(Math.floor(t.clock.now().getTime() / 1000));

    const event = await t.request('GET', `/api/v2/events/${payload.id}`, { apiKey: merchant.apiKey });
    expect(event.status).toBe(200);
    expect(event.body).toMatchObject({ id: payload.id, type: 'simple_qr.payment_received', data: { movement_id: movementId } });
    expect(event.body.attempts).toEqual([
      { endpoint_id: endpoint.id, attempt: 1, status_code: 200, duration_ms: expect.any(Number), error: null, sent_at: t.clock.now().toISOString() },
    ]);
  });

  it('refuses a signature made with another secret (the library check is real)', async () => {
    const merchant = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/hooks` });
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    const other = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    expect(() => other.verify(receiver.received[0]!.body, receiver.received[0]!.headers)).toThrow();
  });

  it('sends one delivery per matching enabled endpoint of the owner, honouring event filters', async () => {
    const merchant = await newMerchant();
    const stranger = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/all` });
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/payments`, events: ['simple_qr.payment_received'] });
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/transfers`, events: ['transfer.completed'] });
    const disabled = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/disabled` });
    await t.request('PATCH', `/api/v2/webhook-endpoints/${disabled.id}`, { apiKey: merchant.apiKey, body: { status: 'disabled' } });
    await createEndpoint(t, stranger.apiKey, { url: `${receiver.url}/stranger` });
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(receiver.received.map((w) => w.path).sort()).toEqual(['/all', '/payments']);
  });

  it('retries after a 500 with the same webhook-id and a fresh timestamp and signature', async () => {
    const merchant = await newMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/flaky` });
    receiver.answer = () => (receiver.received.length === 1 ? 500 : 200);
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(1);

    t.clock.advance(4_999);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(1); // not due before the first delay of the schedule (5 s)
    t.clock.advance(1);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(2);

    const [first, second] = receiver.received;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(Number(second!.headers['webhook-timestamp']) - Number(first!.headers['webhook-timestamp'])).toBe(5);
    expect(second!.headers['webhook-signature']).not.toBe(first!.headers['webhook-signature']);
    expect(second!.body).toBe(first!.body);
    verifyWebhook(endpoint.secret, second!);

    const event = await t.request('GET', `/api/v2/events/${first!.headers['webhook-id']}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 200]]);
  });

  it('retries after a timeout with the same webhook-id, recording the error', async () => {
    const merchant = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/slow` });
    receiver.answer = () => (receiver.received.length === 1 ? 'hang' : 204);
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    t.clock.advance(5_000);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    const event = await t.request('GET', `/api/v2/events/${receiver.received[0]!.headers['webhook-id']}`, { apiKey: merchant.apiKey });
    const [timedOut, delivered] = event.body.attempts;
    expect(timedOut).toMatchObject({ attempt: 1, status_code: null, error: expect.stringContaining('timed out after 300 ms') });
    expect(timedOut.duration_ms).toBeGreaterThanOrEqual(290);
    expect(delivered).toMatchObject({ attempt: 2, status_code: 204, error: null });
  });

  it('marks a delivery failed after the last retry of the schedule, recording every attempt', async () => {
    const merchant = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/down` });
    receiver.answer = () => 503;
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    t.clock.advance(5_000);
    await jobs.deliverAll();
    t.clock.advance(30_000);
    await jobs.deliverAll();
    t.clock.advance(24 * 3600_000);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(3); // the first attempt and one retry per delay of 5s,30s
    const event = await t.request('GET', `/api/v2/events/${receiver.received[0]!.headers['webhook-id']}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 503]);
  });

  it('disables an endpoint that answers 410 Gone and sends it nothing more', async () => {
    const merchant = await newMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/gone` });
    receiver.answer = () => 410;
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    const read = await t.request('GET', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey });
    expect(read.body.status).toBe('disabled');
    await commitPayment(t, merchant);
    t.clock.advance(60_000);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(1);
  });

  it('stops retrying when the endpoint is disabled; after enabling it again a redelivery sends the event', async () => {
    const merchant = await newMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/paused` });
    receiver.answer = () => (receiver.received.length === 1 ? 500 : 200);
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    await t.request('PATCH', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey, body: { status: 'disabled' } });
    t.clock.advance(60_000);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(1);
    await t.request('PATCH', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey, body: { status: 'enabled' } });
    const eventId = receiver.received[0]!.headers['webhook-id'];
    await t.request('POST', `/api/v2/events/${eventId}/redeliver`, { apiKey: merchant.apiKey });
    await jobs.deliverAll();
    expect(receiver.received.map((w) => w.headers['webhook-id'])).toEqual([eventId, eventId]);
  });

  it('does not let a hanging endpoint with a backlog hold up another merchant\'s webhook', async () => {
    const stuck = await newMerchant();
    const other = await newMerchant();
    const stuckEndpoint = await createEndpoint(t, stuck.apiKey, { url: `${receiver.url}/stuck` });
    await createEndpoint(t, other.apiKey, { url: `${receiver.url}/fast` });
    receiver.answer = (w) => (w.path === '/stuck' ? 'hang' : 200);
    for (let i = 0; i < 12; i++) await commitPayment(t, stuck);
    await commitPayment(t, other); // queued behind the 12 (same due time, created later)
    const small = webhookJobs(t, { batchSize: 4, maxInFlight: 8, maxInFlightPerOwner: 4 });
    await small.dispatcher.runOnce(); // 4 sends to /stuck, which hang until the 300 ms timeout
    await small.dispatcher.runOnce(); // the stuck owner is at its limit: the claim skips it and takes /fast
    const deadline = performance.now() + 250;
    while (!receiver.received.some((w) => w.path === '/fast') && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(receiver.received.filter((w) => w.path === '/fast')).toHaveLength(1);
    expect(receiver.received.filter((w) => w.path === '/stuck')).toHaveLength(4);
    await small.stop();
    // Deleting the endpoint drops its backlog (pending deliveries fail), so later tests see none of it.
    await t.request('DELETE', `/api/v2/webhook-endpoints/${stuckEndpoint.id}`, { apiKey: stuck.apiKey });
  });

  it('does not follow redirects: a 302 is a failed attempt', async () => {
    const merchant = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/moved` });
    receiver.answer = (w) => (w.path === '/moved' ? 302 : 200);
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(receiver.received.map((w) => w.path)).toEqual(['/moved']);
    const event = await t.request('GET', `/api/v2/events/${receiver.received[0]!.headers['webhook-id']}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts[0].status_code).toBe(302);
  });

  it('redelivers an event with the same webhook-id, also after it succeeded', async () => {
    const merchant = await newMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/again` });
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    const eventId = receiver.received[0]!.headers['webhook-id'];
    t.clock.advance(1_000);
    const redelivered = await t.request('POST', `/api/v2/events/${eventId}/redeliver`, { apiKey: merchant.apiKey });
    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toEqual({ id: eventId, endpoint_ids: [endpoint.id] });
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(eventId);
    verifyWebhook(endpoint.secret, receiver.received[1]!);
    const event = await t.request('GET', `/api/v2/events/${eventId}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2]);

    const stranger = await newMerchant();
    expect((await t.request('POST', `/api/v2/events/${eventId}/redeliver`, { apiKey: stranger.apiKey })).status).toBe(404);
  });

  it('redelivers to an endpoint created after the event, and revives a delivery that had failed', async () => {
    const merchant = await newMerchant();
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(0);
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/late` });
    const list = await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey });
    const eventId = list.body.data[0].id;
    const redelivered = await t.request('POST', `/api/v2/events/${eventId}/redeliver`, { apiKey: merchant.apiKey, body: {} });
    expect(redelivered.body.endpoint_ids).toEqual([endpoint.id]);
    await jobs.deliverAll();
    expect(receiver.received.map((w) => w.headers['webhook-id'])).toEqual([eventId]);
  });

  it('signs with both secrets for 24 hours after a rotation, then with the new one only', async () => {
    const merchant = await newMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/rotating` });
    const rotated = await t.request('POST', `/api/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, { apiKey: merchant.apiKey });
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    const during = receiver.received[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    verifyWebhook(rotated.body.secret, during);
    verifyWebhook(endpoint.secret, during);

    // 24 h later the previous secret no longer signs.
    const dayLater = new Date(t.clock.now().getTime() + 24 * 3600_000 + 1_000);
    const clock = new TestClock(dayLater.toISOString());
    const later = webhookJobs({ ...t, clock } as TestApp);
    await commitPayment(t, merchant);
    await later.deliverAll();
    await later.stop();
    const after = receiver.received.filter((w) => w.path === '/rotating')[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    verifyWebhook(rotated.body.secret, after);
    expect(() => verifyWebhook(endpoint.secret, after)).toThrow();
  });

  it('never produces an event for a rolled-back change, and always for a committed one', async () => {
    const merchant = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/outbox` });
    await expect(t.db.transaction(async (tx) => {
      await events.emit(tx, { kind: 'merchant', businessCode: merchant.businessCode }, 'simple_qr.paid', { note: 'rolled back' }, t.clock.now());
      throw new Error('the payment failed after its event was written');
    })).rejects.toThrow('payment failed');
    // A debit beyond the balance is refused (INSUFFICIENT_FUNDS): its transaction writes no event either.
    const refused = await t.request('POST', '/test/movements', {
      apiKey: merchant.apiKey,
      headers: { 'idempotency-key': crypto.randomUUID() },
      body: { business_code: merchant.businessCode, amount: 5, direction: 'debit' },
    });
    expect(refused.status).toBe(400);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(0);
    expect((await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey })).body.meta.total).toBe(0);

    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(1);
  });

  it('delivers a partner\'s events to the partner\'s endpoints only', async () => {
    const partner = await t.createPartner();
    const merchant = await t.createMerchant({ partner_id: partner.partnerId });
    const endpoint = await createEndpoint(t, partner.masterKey, { url: `${receiver.url}/partner` });
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/merchant` });
    await t.db.transaction((tx) =>
      events.emit(tx, { kind: 'partner', partnerId: partner.partnerId }, 'onboarding_intent.completed', { code: 'oi_1', metadata: { order: 7 } }, t.clock.now()));
    await jobs.deliverAll();
    expect(receiver.received.map((w) => w.path)).toEqual(['/partner']);
    expect(verifyWebhook(endpoint.secret, receiver.received[0]!)).toMatchObject({ type: 'onboarding_intent.completed', data: { metadata: { order: 7 } } });
    const listed = await t.request('GET', '/api/v2/events', { apiKey: partner.masterKey });
    expect(listed.body.data.map((e: { type: string }) => e.type)).toEqual(['onboarding_intent.completed']);
    expect((await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey })).body.meta.total).toBe(0);
  });

  it('delivers the platform account\'s events once the operator registers an endpoint with a key of it', async () => {
    const key = await t.request('POST', '/admin/v1/merchants/1000/api-keys');
    expect(key.status).toBe(201);
    const endpoint = await createEndpoint(t, key.body.api_key, { url: `${receiver.url}/platform`, events: ['simple_qr.payment_received'] });
    await t.db.transaction((tx) =>
      events.emit(tx, { kind: 'merchant', businessCode: 1000 }, 'simple_qr.payment_received', { fee: true }, t.clock.now()));
    await jobs.deliverAll();
    expect(receiver.received.map((w) => w.path)).toEqual(['/platform']);
    verifyWebhook(endpoint.secret, receiver.received[0]!);
  });

  it('ignores the completion of a dispatcher whose lease was taken over', async () => {
    const merchant = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/guard` });
    await commitPayment(t, merchant);
    const now = t.clock.now();
    const [slow] = await t.db.transaction((tx) => claimDueDeliveries(tx, 'slow-worker', now, new Date(now.getTime() + 1_000), 10));
    const later = new Date(now.getTime() + 2_000);
    const [taken] = await t.db.transaction((tx) => claimDueDeliveries(tx, 'other-worker', later, new Date(later.getTime() + 70_000), 10));
    expect(taken!.id).toBe(slow!.id);
    const result = { deliveryId: slow!.id, eventId: slow!.event_id, endpointId: slow!.endpoint_id, attempt: slow!.attempts_total, outcome: 'succeeded' as const, statusCode: 200, durationMs: 5, error: null, sentAt: later, attempted: true };
    const completed = await t.db.transaction((tx) => completeDeliveries(tx, 'slow-worker', [result], [5_000], later));
    expect(completed).toEqual([]);
    const held = await t.db.transaction((tx) => completeDeliveries(tx, 'other-worker', [{ ...result, attempt: taken!.attempts_total }], [5_000], later));
    expect(held).toEqual([{ id: taken!.id, status: 'succeeded' }]);
  });

  it('retries a delivery whose dispatcher died mid-send once its lease has run out', async () => {
    const merchant = await newMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/lease` });
    await commitPayment(t, merchant);
    // A dispatcher claims the delivery and dies before sending anything.
    const now = t.clock.now();
    const claimed = await t.db.transaction((tx) => claimDueDeliveries(tx, 'dead-worker', now, new Date(now.getTime() + 70_000), 10));
    expect(claimed).toHaveLength(1);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(0); // still leased
    t.clock.advance(70_001);
    await jobs.deliverAll();
    expect(receiver.received).toHaveLength(1);
    const event = await t.request('GET', `/api/v2/events/${receiver.received[0]!.headers['webhook-id']}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts).toEqual([expect.objectContaining({ attempt: 2, status_code: 200 })]);
  });
});

describe.each(databaseKinds())('events API on %s', (kind) => {
  let t: TestApp;
  let jobs: WebhookJobs;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
    jobs = webhookJobs(t);
  });
  afterAll(async () => {
    await jobs.stop();
    await t.close();
  });

  it('lists the owner\'s events newest first, paginated and filtered by type; other owners see none of them', async () => {
    const merchant = await t.createMerchant();
    for (let i = 0; i < 3; i++) {
      await commitPayment(t, merchant, 100);
      t.clock.advance(1_000);
    }
    await t.request('POST', '/test/movements', {
      apiKey: merchant.apiKey,
      headers: { 'idempotency-key': crypto.randomUUID() },
      body: { business_code: merchant.businessCode, amount: 1, direction: 'debit' },
    });
    const all = await t.request('GET', '/api/v2/events?per_page=2', { apiKey: merchant.apiKey });
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ current_page: 1, last_page: 2, per_page: 2, total: 4 });
    expect(all.body.data[0].type).toBe('transfer.created');
    const payments = await t.request('GET', '/api/v2/events?type=simple_qr.payment_received', { apiKey: merchant.apiKey });
    expect(payments.body.meta.total).toBe(3);
    expect(payments.body.data.every((e: { type: string }) => e.type === 'simple_qr.payment_received')).toBe(true);
    const created = payments.body.data.map((e: { created_at: string }) => e.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const bad = await t.request('GET', '/api/v2/events?type=payment', { apiKey: merchant.apiKey });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0]).toMatchObject({ field: 'type', code: 'invalid_value' });

    const stranger = await t.createMerchant();
    expect((await t.request('GET', '/api/v2/events', { apiKey: stranger.apiKey })).body.meta.total).toBe(0);
    expect((await t.request('GET', `/api/v2/events/${all.body.data[0].id}`, { apiKey: stranger.apiKey })).status).toBe(404);
    const partner = await t.createPartner();
    expect((await t.request('GET', `/api/v2/events/${all.body.data[0].id}`, { apiKey: partner.masterKey })).status).toBe(404);
  });

  it('shows an event with no attempts yet, and 404 for an unknown id', async () => {
    const merchant = await t.createMerchant();
    await commitPayment(t, merchant);
    const list = await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey });
    const event = await t.request('GET', `/api/v2/events/${list.body.data[0].id}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts).toEqual([]);
    expect((await t.request('GET', '/api/v2/events/evt_unknown', { apiKey: merchant.apiKey })).status).toBe(404);
  });
});
