// Races that only PostgreSQL can prove (PGlite runs one transaction at a time).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { beforeAll, expect, it } from 'vitest';
import * as ledger from '../../src/ledger/service.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startTestApp, twoInstances, type TestApp } from '../helpers/app.ts';
import { describeOnPostgres } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { balanceOf, fundedMerchant, postTransfer, transferBody } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

describeOnPostgres('transfer races on %s', (kind) => {
  const instances = twoInstances(kind, { plugins: [fixtureRoutes] });
  let first: TestApp;
  let second: TestApp;
  beforeAll(() => {
    first = instances.first();
    second = instances.second();
  });

  it('30 concurrent transfers of 1.00 against a balance of 10.00: exactly 10 succeed, the balance ends at 0', async () => {
    const merchant = await fundedMerchant(first, '10.00');
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      postTransfer(i % 2 === 0 ? first : second, merchant, transferBody(merchant.businessCode, { amount: '1.00' }))));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 400)).toHaveLength(20);
    for (const response of responses.filter((r) => r.status === 400)) expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
    expect(await balanceOf(first, merchant)).toEqual({ available: 0, pending_out: 10 });
    const list = await first.request('GET', '/api/v2/transfers', { apiKey: merchant.apiKey });
    expect(list.body.meta.total).toBe(10);
    const report = await ledger.checkLedger(first.db);
    expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
  });

  it('the database refuses a negative balance even to a direct write', async () => {
    const merchant = await fundedMerchant(first, '1.00');
    await expect(first.db.query('update balances set available_centavos = available_centavos - 200 where business_code = $1::bigint', [merchant.businessCode]))
      .rejects.toMatchObject({ constraint: 'balances_available_nonnegative' });
  });

  it.each([
    ['on another instance', () => second],
    ['on the same instance', () => first],
  ])('the same key again %s while the first is still executing: 409 IDEMPOTENCY_KEY_IN_USE at once, one transfer', async (_where, otherApp) => {
    const merchant = await fundedMerchant(first, '100.00');
    const key = randomUUID();
    const body = transferBody(merchant.businessCode, { amount: '10.00' });
    // A third connection holds the balance row, so the first request stops inside its transaction,
    // after it has taken the key's advisory lock.
    const blocker = await holdBalance(first.database.url, merchant.businessCode);
    try {
      const inFlight = postTransfer(first, merchant, body, key);
      await blocker.waitForAdvisoryLock();
      const started = performance.now();
      const concurrent = await postTransfer(otherApp(), merchant, body, key);
      expect(concurrent.status).toBe(409);
      expect(concurrent.body).toEqual({ type: 'idempotency_error', code: 'IDEMPOTENCY_KEY_IN_USE', message: expect.any(String) });
      expect(performance.now() - started).toBeLessThan(2_000); // answered at once, not after the first
      await blocker.release();
      const winner = await inFlight;
      expect(winner.status).toBe(201);
      const retry = await postTransfer(otherApp(), merchant, body, key);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.id).toBe(winner.body.id);
    } finally {
      await blocker.end();
    }
    expect(await balanceOf(first, merchant)).toEqual({ available: 90, pending_out: 10 });
  });

  it('a balance held by another transaction delays only its own merchant\'s transfer, never the others\' written with it', async () => {
    const held = await fundedMerchant(first, '100.00');
    const others = [];
    for (let i = 0; i < 10; i++) others.push(await fundedMerchant(first, '100.00'));
    const blocker = await holdBalance(first.database.url, held.businessCode);
    try {
      // The held merchant's transfer is sent among the others, so it shares a batch with some of them.
      const heldTransfer = postTransfer(first, held, transferBody(held.businessCode, { amount: '10.00' }));
      const started = performance.now();
      const responses = await Promise.all(others.map((merchant) => postTransfer(first, merchant, transferBody(merchant.businessCode, { amount: '10.00' }))));
      expect(responses.map((response) => response.status)).toEqual(others.map(() => 201));
      expect(performance.now() - started).toBeLessThan(3_000); // not held until the blocker lets go
      let settled = false;
      void heldTransfer.then(() => { settled = true; });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(settled).toBe(false); // still waiting for its balance
      await blocker.release();
      expect((await heldTransfer).status).toBe(201);
    } finally {
      await blocker.end();
    }
    expect(await balanceOf(first, held)).toEqual({ available: 90, pending_out: 10 });
    for (const merchant of others) expect(await balanceOf(first, merchant)).toEqual({ available: 90, pending_out: 10 });
  });

  it('the same key sent 10 times at once from two instances creates one transfer', async () => {
    const merchant = await fundedMerchant(first, '100.00');
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      postTransfer(i % 2 === 0 ? first : second, merchant, transferBody(merchant.businessCode, { amount: '10.00' }), key)));
    for (const response of responses) expect([201, 409]).toContain(response.status);
    const ids = new Set(responses.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(await balanceOf(first, merchant)).toEqual({ available: 90, pending_out: 10 });
  });

  it('cancel racing the rail: each transfer ends CANCELED or IN_TRANSIT, never both, and the funds return once', async () => {
    const merchant = await fundedMerchant(first, '100.00');
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) ids.push((await postTransfer(first, merchant, transferBody(merchant.businessCode, { amount: '5.00' }))).body.id);
    const results = await Promise.all(ids.flatMap((id) => [
      first.request('POST', `/api/v2/transfers/${id}/cancel`, { apiKey: merchant.apiKey }),
      second.request('POST', `/api/v2/sandbox/transfers/${id}/advance`, { apiKey: merchant.apiKey, body: { to: 'IN_TRANSIT' } }),
    ]));
    let canceled = 0;
    for (let i = 0; i < ids.length; i++) {
      const [cancel, advance] = [results[2 * i]!, results[2 * i + 1]!];
      const successes = [cancel.status, advance.status].filter((status) => status === 200);
      expect(successes).toHaveLength(1);
      if (cancel.status === 200) {
        canceled++;
        expect(advance.status).toBe(422);
      } else {
        expect(cancel.status).toBe(409);
        expect(cancel.body.code).toBe('TRANSFER_NOT_CANCELABLE');
      }
    }
    expect(await balanceOf(first, merchant)).toEqual({ available: 50 + canceled * 5, pending_out: (10 - canceled) * 5 });
    const report = await ledger.checkLedger(first.db);
    expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
  });
});

describeOnPostgres('the sandbox rail worker in two processes on %s', (kind) => {
  it('moves each due transfer exactly once, whichever process claims it', async () => {
    const first = await startTestApp({ kind, plugins: [fixtureRoutes], env: { SANDBOX_SETTLEMENT: '1s,1s' } });
    const second = await startTestApp({ kind, plugins: [fixtureRoutes], env: { SANDBOX_SETTLEMENT: '1s,1s' }, database: first.database, separatePool: true, clock: first.clock });
    try {
      const merchant = await fundedMerchant(first, '1000.00');
      const ids: number[] = [];
      for (let i = 0; i < 40; i++) {
        const account = i % 4 === 0 ? '5555-0000' : `5555-${1000 + i}`;
        const body = transferBody(merchant.businessCode, { amount: '2.00', destination: { type: 'bank_account', bank_code: 1001, account_number: account, account_titular: 'Ana' } });
        ids.push((await postTransfer(first, merchant, body)).body.id);
      }
      const jobOf = (app: TestApp) => backgroundJobs(app.context).find((job) => job.name === 'transfers-sandbox-rail')!;
      const drain = async (app: TestApp) => { while (await jobOf(app).runOnce()); };
      for (let step = 0; step < 2; step++) {
        first.clock.advance(1_000);
        await Promise.all([drain(first), drain(second), drain(first), drain(second)]);
      }
      const all = await first.request('GET', '/api/v2/transfers?per_page=100', { apiKey: merchant.apiKey });
      const statuses = all.body.data.map((transfer: { status: string }) => transfer.status);
      expect(statuses.filter((status: string) => status === 'FAILED')).toHaveLength(10);
      expect(statuses.filter((status: string) => status === 'COMPLETED')).toHaveLength(30);
      const counts = new Map<string, number>();
      for (const event of await eventsOfOwner(first.db, { kind: 'merchant', businessCode: merchant.businessCode })) {
        counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
      }
      expect(Object.fromEntries(counts)).toMatchObject({ 'transfer.created': 40, 'transfer.in_transit': 30, 'transfer.completed': 30, 'transfer.failed': 10 });
      expect(await balanceOf(first, merchant)).toEqual({ available: 940, pending_out: 0 });
      const report = await ledger.checkLedger(first.db);
      expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
    } finally {
      await second.close();
      await first.close();
    }
  });
});

/** Another connection holding a merchant's balance row until `release` (or `end`, which rolls back). */
async function holdBalance(url: string | undefined, businessCode: number) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query('select * from balances where business_code = $1 for update', [businessCode]);
  return {
    /**
     * Resolves once another session holds an advisory lock in this test's database: a request has claimed
     * its Idempotency-Key. pg_locks is server-wide, and other test files hold advisory locks in their own
     * databases at the same time: counting theirs let the second request start before the first had its key.
     */
    waitForAdvisoryLock: () => waitUntil(async () => {
      const { rows } = await client.query(`select count(*)::int as held from pg_locks
        where locktype = 'advisory' and granted and pid <> pg_backend_pid()
          and database = (select oid from pg_database where datname = current_database())`);
      return rows[0].held > 0;
    }),
    release: () => client.query('commit'),
    end: async () => {
      await client.query('rollback').catch(() => {});
      await client.end();
    },
  };
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
