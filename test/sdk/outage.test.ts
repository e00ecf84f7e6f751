// The SDK through a database outage on the service's side: the service answers 503 with Retry-After
// (its connection was terminated mid-transaction, nothing written), the SDK waits and sends the
// transfer again with the same Idempotency-Key, and the transfer exists once.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from '@merchant-payments/sdk';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeOnPostgres } from '../helpers/databases.ts';
import { backendWaitingForLock } from '../helpers/row-locks.ts';

describeOnPostgres('the SDK through a dropped database connection on %s', (kind) => {
  let t: TestApp;
  let locker: pg.Client;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    locker = new pg.Client({ connectionString: t.database.url });
    await locker.connect();
  });
  afterAll(async () => {
    await locker?.end();
    await t?.close();
  });

  it('waits out a 503 and retries the transfer with the same key: one transfer, one debit', async () => {
    const merchant = await t.createMerchant({ ach_enabled: true });
    const statuses: number[] = [];
    const keys: (string | null)[] = [];
    const client = createClient({
      baseUrl: t.baseUrl,
      apiKey: merchant.apiKey,
      // Watches each attempt as it goes and comes back; sends it unchanged.
      fetch: async (request) => {
        keys.push(request.headers.get('idempotency-key'));
        const response = await fetch(request);
        statuses.push(response.status);
        return response;
      },
    });
    const qr = await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 50 });
    await client.sandbox.payQr(qr.id);
    statuses.length = 0;
    keys.length = 0;

    // Hold the merchant's balance row so that the transfer's transaction waits for it, then end that
    // transaction's connection from the server side, as a failover does.
    await locker.query('begin');
    await locker.query('select 1 from balances where business_code = $1 for update', [merchant.businessCode]);
    const creating = client.transfers.create({
      business_code: merchant.businessCode, amount: 20, currency: 'BOB', reference: 'through an outage',
      destination: { type: 'bank_account', bank_code: 1001, account_number: '10000123454321', account_titular: 'Ana Pérez' },
    });
    const pid = await backendWaitingForLock(locker);
    await locker.query('select pg_terminate_backend($1)', [pid]);
    await locker.query('rollback');

    const transfer = await creating;
    expect(statuses).toEqual([503, 201]);
    expect(new Set(keys).size).toBe(1); // the retry carried the first attempt's key
    const made = [];
    for await (const listed of client.transfers.list()) if (listed.reference === 'through an outage') made.push(listed.id);
    expect(made).toEqual([transfer.id]);
    expect(await client.balance.get()).toMatchObject({ available: 30, pending_out: 20 });
  });

  it('a second call with a key still in flight gets 409 IDEMPOTENCY_KEY_IN_USE, waits, and is answered the first transfer', async () => {
    const merchant = await t.createMerchant({ ach_enabled: true });
    const answers: string[] = [];
    const client = createClient({
      baseUrl: t.baseUrl,
      apiKey: merchant.apiKey,
      retry: { initialDelayMs: 400, maxRetries: 5 },
      fetch: async (request) => {
        const response = await fetch(request);
        if (request.method === 'POST' && request.url.endsWith('/transfers')) answers.push(`${response.status}${response.headers.get('idempotent-replayed') === 'true' ? ' replayed' : ''}`);
        return response;
      },
    });
    const qr = await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 50 });
    await client.sandbox.payQr(qr.id);

    await locker.query('begin');
    await locker.query('select 1 from balances where business_code = $1 for update', [merchant.businessCode]);
    const body = {
      business_code: merchant.businessCode, amount: 20, currency: 'BOB' as const,
      destination: { type: 'bank_account' as const, bank_code: 1001 as const, account_number: '10000123454321', account_titular: 'Ana Pérez' },
    };
    const idempotencyKey = crypto.randomUUID();
    const first = client.transfers.create(body, { idempotencyKey });
    await backendWaitingForLock(locker);
    const second = client.transfers.create(body, { idempotencyKey }); // the same order, sent again by a second worker
    await expect.poll(() => answers.includes('409')).toBe(true);
    await locker.query('rollback'); // the first one proceeds

    const [made, answered] = await Promise.all([first, second]);
    expect(answered.id).toBe(made.id);
    // A retry that came before the first commit met another 409 and waited again.
    expect(answers.filter((answer) => answer !== '409').sort()).toEqual(['201', '201 replayed']);
    expect(await client.balance.get()).toMatchObject({ available: 30, pending_out: 20 });
  });

});
