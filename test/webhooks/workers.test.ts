import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/kernel/logging.ts';
import { createMetricsRegistry } from '../../src/http/metrics.ts';
import { Dispatcher } from '../../src/webhooks/dispatcher.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { WorkerRunner } from '../../src/workers/runner.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint, startReceiver, type Receiver } from './harness.ts';

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe.each(databaseKinds())('webhook workers in the runner on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  let runner: WorkerRunner;
  let metrics: ReturnType<typeof createMetricsRegistry>;
  beforeAll(async () => {
    metrics = createMetricsRegistry();
    t = await startTestApp({ kind, plugins: [fixtureRoutes], metrics });
    receiver = await startReceiver();
    // Polls every minute only: whatever arrives within seconds was woken by the notification chain.
    const jobs = backgroundJobs(t.context, { metrics }).map((job) => ({ ...job, intervalMs: 60_000 }));
    runner = new WorkerRunner(t.db, createLogger('silent'), jobs);
    await runner.start();
  });
  afterAll(async () => {
    await runner.stop();
    await receiver.close();
    await t.close();
  });

  it('delivers each committed payment at once, woken by notifications rather than by the poll', async () => {
    const merchant = await t.createMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/live` });
    // A first payment warms up connections and query plans (PGlite compiles each statement on first use).
    await commitPayment(t, merchant);
    await waitFor(() => receiver.received.length === 1, 3_000);
    const latencies: number[] = [];
    for (let i = 2; i <= 4; i++) {
      const started = performance.now();
      await commitPayment(t, merchant);
      await waitFor(() => receiver.received.length === i, 3_000);
      latencies.push(performance.now() - started);
    }
    // Far under the 60 s poll: the notification of the emit's commit woke the dispatcher. (Speed is measured in bench/.)
    expect(Math.max(...latencies)).toBeLessThan(3_000);
  });

  it('serves webhook metrics on /metrics: attempts by outcome, attempt latency and dispatch lag', async () => {
    // Results are written just after the receiver answers; wait for the fourth.
    let response = await t.request('GET', '/metrics');
    for (let i = 0; i < 100 && !/webhook_delivery_attempts_total\{outcome="succeeded"\} 4/.test(response.text); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      response = await t.request('GET', '/metrics');
    }
    expect(response.status).toBe(200);
    expect(response.text).toMatch(/webhook_delivery_attempts_total\{outcome="succeeded"\} 4/);
    expect(response.text).toMatch(/webhook_attempt_duration_seconds_count\{outcome="succeeded"\} 4/);
    expect(response.text).toMatch(/webhook_dispatch_lag_seconds_count 4/);
  });
});

describe.each(databaseKinds())('webhook dispatcher with a per-owner limit on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('keeps sending to a busy owner\'s endpoint as its sends finish, without waiting for the poll', async () => {
    const merchant = await t.createMerchant();
    await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/busy` });
    const dispatcher = new Dispatcher({
      db: t.db, clock: t.clock, destinations: { requireHttps: false, guardAddresses: false }, secrets: t.context.secrets, timeoutMs: 5_000,
      retryScheduleMs: [5_000], batchSize: 2, maxInFlightPerOwner: 2, workerId: 'busy-test',
    });
    for (let i = 0; i < 10; i++) await commitPayment(t, merchant);
    dispatcher.wake(); // what the runner does when an emit's commit notifies; from then on only finished sends wake it again
    await waitFor(() => receiver.received.length === 10, 3_000);
    await dispatcher.stop();
    expect(receiver.received).toHaveLength(10);
  });

});
