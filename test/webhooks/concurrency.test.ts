import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeOnPostgres } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint, startReceiver, webhookJobs, type Receiver } from './harness.ts';

describeOnPostgres('many webhook workers on %s', (kind) => {
  let first: TestApp;
  let second: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    first = await startTestApp({ kind, plugins: [fixtureRoutes] });
    second = await startTestApp({ kind, plugins: [fixtureRoutes], database: first.database, separatePool: true, clock: first.clock });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await second.close();
    await first.close();
  });

  it('two dispatchers on two pools deliver each event exactly once per endpoint', async () => {
    const merchant = await first.createMerchant();
    await createEndpoint(first, merchant.apiKey, { url: `${receiver.url}/a` });
    await createEndpoint(first, merchant.apiKey, { url: `${receiver.url}/b` });
    const payments = 60;
    await Promise.all(Array.from({ length: payments }, (_, i) => commitPayment(i % 2 ? first : second, merchant)));

    const a = webhookJobs(first, { batchSize: 7 });
    const b = webhookJobs(second, { batchSize: 7, db: second.db });
    const drain = async (jobs: typeof a) => {
      for (let round = 0; round < 50; round++) {
        const more = await jobs.dispatcher.runOnce();
        if (!more && round > 5) break;
      }
      await jobs.dispatcher.settled();
    };
    await Promise.all([drain(a), drain(b)]);
    await Promise.all([a.deliverAll(), b.deliverAll()]);
    await Promise.all([a.stop(), b.stop()]);

    const counts = new Map<string, number>();
    for (const webhook of receiver.received) {
      const key = `${webhook.path} ${webhook.headers['webhook-id']}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(payments * 2);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // Every delivery has its attempt recorded, once.
    const attempts = await first.db.query<{ n: number }>('select count(distinct delivery_id)::bigint as n from webhook_attempts');
    expect(attempts.rows[0]!.n).toBe(payments * 2);
  });
});
