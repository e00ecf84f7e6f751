import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QrWatcher } from '../../src/qr/watch.ts';
import { WorkerRunner } from '../../src/workers/runner.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startTestApp, twoInstances, type TestApp } from '../helpers/app.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databaseKinds())('simple QR long poll on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant();
  });
  afterAll(() => t.close());

  const poll = (id: string, wait: number, headers: Record<string, string> = {}) =>
    t.request('GET', `/api/v2/simple-qrs/${id}?wait=${wait}`, { apiKey: merchant.apiKey, headers });

  it('holds the answer until a payment, then answers 200 PAID', async () => {
    const qr = await createQr(t, merchant);
    const started = performance.now();
    const polled = poll(qr.id, 20);
    await sleep(300);
    expect((await pay(t, merchant, qr.id)).status).toBe(201);
    const response = await polled;
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('PAID');
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
  });

  // Without a clock: a waiter whose own timer is ten minutes away (the test times out at 30 s) can only be woken, within the test's time,
  // by the payment's notification (the HTTP poll above would also end at its 2 s re-check without one).
  it('a payment\'s notification wakes the waiters of its QR, and only them', async () => {
    const watcher = new QrWatcher(t.db);
    await watcher.start();
    try {
      const [qr, other] = [await createQr(t, merchant), await createQr(t, merchant)];
      let otherWoken = false;
      void watcher.waitForChange(other.id, 600_000).then(() => { otherWoken = true; });
      const woken = watcher.waitForChange(qr.id, 600_000);
      expect((await pay(t, merchant, qr.id)).status).toBe(201);
      await woken;
      expect(otherWoken).toBe(false);
    } finally {
      await watcher.stop();
    }
  });

  it('answers 304 after N seconds when the QR did not change since If-None-Match', async () => {
    const qr = await createQr(t, merchant);
    const etag = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).headers.get('etag')!;
    const started = performance.now();
    const response = await poll(qr.id, 1, { 'if-none-match': etag });
    expect(response.status).toBe(304);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('answers 200 after N seconds without If-None-Match', async () => {
    const qr = await createQr(t, merchant);
    const started = performance.now();
    const response = await poll(qr.id, 1);
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('ACTIVE');
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('answers at once when If-None-Match is stale or the QR is no longer ACTIVE', async () => {
    const qr = await createQr(t, merchant);
    let started = performance.now();
    expect((await poll(qr.id, 10, { 'if-none-match': '"stale"' })).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000);
    await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
    started = performance.now();
    const response = await poll(qr.id, 10);
    expect(response.body.status).toBe('CANCELED');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('ends the wait when the QR expires, answering CANCELED (expired)', async () => {
    const qr = await createQr(t, merchant, { qr_expiration: '+1m' });
    const etag = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).headers.get('etag')!;
    const polled = poll(qr.id, 15, { 'if-none-match': etag });
    await sleep(200);
    t.clock.advance(60_000);
    const started = performance.now();
    const response = await polled;
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'CANCELED', cancel_reason: 'expired' });
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it('records an expiry once, with its simple_qr.canceled event, through the background sweeper job', async () => {
    const qr = await createQr(t, merchant, { qr_expiration: '+2m' });
    t.clock.advance(120_000);
    const runner = new WorkerRunner(t.db, t.app.log, backgroundJobs(t.context));
    await runner.start();
    try {
      for (let i = 0; i < 50; i++) {
        const owned = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
        if (owned.some((e) => e.type === 'simple_qr.canceled' && (e.data as { id: string }).id === qr.id)) break;
        await sleep(100);
      }
    } finally {
      await runner.stop();
    }
    const owned = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(owned.filter((e) => e.type === 'simple_qr.canceled' && (e.data as { id: string }).id === qr.id)).toHaveLength(1);
  });
});

describeOnPostgres('simple QR long poll across instances on %s', (kind) => {
  const instances = twoInstances(kind);
  let a: TestApp;
  let b: TestApp;
  beforeAll(() => {
    [a, b] = [instances.first(), instances.second()];
  });

  it('wakes a poll on one instance when another instance records the payment', async () => {
    const merchant = await a.createMerchant();
    const qr = await createQr(a, merchant);
    const etag = (await a.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).headers.get('etag')!;
    const started = performance.now();
    const polled = a.request('GET', `/api/v2/simple-qrs/${qr.id}?wait=20`, { apiKey: merchant.apiKey, headers: { 'if-none-match': etag } });
    await sleep(300);
    expect((await pay(b, merchant, qr.id)).status).toBe(201);
    const response = await polled;
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('PAID');
    expect(performance.now() - started).toBeLessThan(1_800);
  });

  it('shows a payment recorded by another instance on a plain GET within moments, despite the read cache', async () => {
    const merchant = await a.createMerchant();
    const qr = await createQr(a, merchant);
    expect((await a.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.status).toBe('ACTIVE'); // now cached on A
    expect((await pay(b, merchant, qr.id)).status).toBe(201);
    const started = performance.now();
    let status = 'ACTIVE';
    while (status === 'ACTIVE' && performance.now() - started < 3_000) {
      status = (await a.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.status;
      if (status === 'ACTIVE') await sleep(20);
    }
    expect(status).toBe('PAID');
    expect(performance.now() - started).toBeLessThan(1_000); // the NOTIFY, not the 2 s cache lifetime
  });
});
