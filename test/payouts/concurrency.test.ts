// Scheduled payout races that only PostgreSQL can prove (PGlite runs one transaction at a time): two service
// instances, each running its scheduled-payouts job in several loops at once, at the same PAYOUT_TIME against
// one database — at most one scheduled transfer per merchant and day, however the work is shared; and the
// database's refusal of a second run of a day when a worker could not see the first (the backstop).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as ledger from '../../src/ledger/service.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startTestApp, twoInstances, type TestApp } from '../helpers/app.ts';
import { describeOnPostgres } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { backendWaitingForLock } from '../helpers/row-locks.ts';
import { balanceOf } from '../transfers/helpers.ts';
import { laPaz, payoutMerchant, runsOf, setSchedule, transferCount, transfersOf } from './helpers.ts';

describeOnPostgres('scheduled payout races on %s', (kind) => {
  const instances = twoInstances(kind, { plugins: [fixtureRoutes] });
  let first: TestApp;
  let second: TestApp;
  beforeAll(() => {
    first = instances.first();
    second = instances.second();
  });
  // Registered after twoInstances' own: after-hooks run last-registered first, so before the instances close.
  afterAll(async () => {
    if (!first) return;
    const report = await ledger.checkLedger(first.db);
    expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
  });

  /** Each instance's job (as its worker builds it), `loops` runs of it at once per instance, each until nothing is left. */
  async function runEverywhereAtOnce(loops: number): Promise<void> {
    const jobs = [first, second].map((t) => backgroundJobs(t.context).find((job) => job.name === 'scheduled-payouts')!);
    await Promise.all(jobs.flatMap((job) => Array.from({ length: loops }, async () => {
      while (await job.runOnce()) { /* more waiting */ }
    })));
  }

  it('40 merchants, two instances with three job loops each at the same PAYOUT_TIME: exactly one transfer and one run per merchant', async () => {
    const merchants = [];
    for (let i = 0; i < 40; i++) merchants.push(await payoutMerchant(first, '100.00', 1));
    first.clock.set(laPaz('2027-02-01', '12:00'));
    for (const [i, merchant] of merchants.entries()) await setSchedule(i % 2 === 0 ? first : second, merchant, { interval: 'daily', keep: 10 });
    first.clock.set(laPaz('2027-02-01', '18:00'));
    await runEverywhereAtOnce(3);
    for (const merchant of merchants) {
      const transfers = await transfersOf(first, merchant);
      expect(transfers.map((transfer) => [transfer.amount, transfer.fee, transfer.reference, transfer.origin])).toEqual([[89, 1, 'Liquidación 2027-02-01', 'schedule']]);
      expect(await runsOf(first, merchant)).toEqual([{ day: '2027-02-01', outcome: 'transferred', transfer_id: transfers[0]!.id, covered_by: null }]);
      expect(await balanceOf(first, merchant)).toEqual({ available: 10, pending_out: 89 });
    }
  });

  it('after downtime, both instances making up at once: one transfer per merchant, of the latest missed day, each missed day recorded once', async () => {
    const merchants = [];
    for (let i = 0; i < 20; i++) merchants.push(await payoutMerchant(first, '50.00'));
    first.clock.set(laPaz('2027-02-10', '12:00'));
    for (const merchant of merchants) await setSchedule(first, merchant, { interval: 'daily' });
    first.clock.set(laPaz('2027-02-13', '09:00')); // the 10th, 11th and 12th missed
    await runEverywhereAtOnce(2);
    for (const merchant of merchants) {
      const transfers = await transfersOf(first, merchant);
      expect(transfers.map((transfer) => [transfer.amount, transfer.reference])).toEqual([[50, 'Liquidación 2027-02-12']]);
      expect((await runsOf(first, merchant)).map((run) => [run.day, run.outcome, run.covered_by])).toEqual([
        ['2027-02-10', 'missed', '2027-02-12'], ['2027-02-11', 'missed', '2027-02-12'], ['2027-02-12', 'transferred', null],
      ]);
    }
  });
});

describeOnPostgres('the database refusing a second run on %s', (kind) => {
  // A database of its own: the job claims schedules in business_code order, and no other merchant's due
  // days may keep it from reaching the one this test holds.
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t?.close());

  it('a worker that could not see another\'s run of the day (still uncommitted) is refused by the database: its transfer rolls back, the job goes on, no 5xx', async () => {
    const merchant = await payoutMerchant(t, '70.00');
    t.clock.set(laPaz('2027-02-20', '12:00'));
    await setSchedule(t, merchant, { interval: 'daily' });
    t.clock.set(laPaz('2027-02-20', '18:00'));
    // Another writer has recorded the 20th's run and not committed yet: the job's claim does not see it (the
    // schedule row is not locked), so the job pays the day out and then waits on the run's primary key.
    const other = new pg.Client({ connectionString: t.database.url });
    const observer = new pg.Client({ connectionString: t.database.url });
    await other.connect();
    await observer.connect();
    try {
      await other.query('begin');
      await other.query(
        `insert into payout_runs (business_code, business_date, outcome, recorded_at) values ($1::bigint, '2027-02-20', 'below_minimum', now())`,
        [merchant.businessCode],
      );
      const job = backgroundJobs(t.context).find((each) => each.name === 'scheduled-payouts')!;
      const running = job.runOnce();
      await backendWaitingForLock(observer);
      await other.query('commit');
      expect(await running).toBe(false); // answered, not thrown: the refused run is another worker's day
    } finally {
      await other.query('rollback').catch(() => {});
      await other.end();
      await observer.end();
    }
    expect(await transferCount(t, merchant)).toBe(0);
    expect(await balanceOf(t, merchant)).toEqual({ available: 70, pending_out: 0 });
    expect(await runsOf(t, merchant)).toEqual([{ day: '2027-02-20', outcome: 'below_minimum', transfer_id: null, covered_by: null }]);
  });
});
