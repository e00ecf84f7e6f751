// A database connection that drops while the service uses it: the request answers 503 with Retry-After,
// the process lives on, and the pool serves the next request with a new connection. The minimal
// reproduction of a failover or restart: pg_terminate_backend on a transaction waiting for a row lock.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeOnPostgres } from '../helpers/databases.ts';
import { backendWaitingForLock } from '../helpers/row-locks.ts';
import { createQr, pay, type Merchant } from '../qr/qr-helpers.ts';

describeOnPostgres('a dropped database connection on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  let locker: pg.Client;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant();
    locker = new pg.Client({ connectionString: t.database.url });
    await locker.connect();
  });
  afterAll(async () => {
    await locker?.end();
    await t?.close();
  });


  it('answers 503 with Retry-After when the transaction\'s connection is terminated, and serves the next request', async () => {
    const qr = await createQr(t, merchant, { amount: 10 });
    await locker.query('begin');
    await locker.query('select 1 from simple_qrs where id = $1 for update', [qr.id]);
    const payment = pay(t, merchant, qr.id);
    const pid = await backendWaitingForLock(locker);
    await locker.query('select pg_terminate_backend($1)', [pid]);
    const response = await payment;
    await locker.query('rollback');

    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ type: 'api_error', code: 'SERVICE_UNAVAILABLE' });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Nothing of the payment was written, and the pool hands out a working connection again.
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body.payments_count).toBe(0);
    const retried = await pay(t, merchant, qr.id);
    expect(retried.status).toBe(201);
  });

  it('answers every payment in flight with 201 or 503 when all its connections are terminated at once', async () => {
    const qrs = await Promise.all(Array.from({ length: 5 }, () => createQr(t, merchant, { amount: 1 })));
    const payments = qrs.map((qr) => pay(t, merchant, qr.id));
    await locker.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name = 'merchant-payments' and pid <> pg_backend_pid()`,
    );
    const statuses = (await Promise.all(payments)).map((response) => response.status);
    for (const status of statuses) expect([201, 503]).toContain(status);
    const health = await t.request('GET', '/readyz');
    expect(health.status).toBe(200);
  });
});
