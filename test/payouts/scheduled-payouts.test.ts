// Scheduled payouts (docs/payouts.md; contract §15.3) through the real job and HTTP, on PGlite and PostgreSQL:
// at PAYOUT_TIME of each scheduled day, one transfer of available − keep − transfer fee (at least the minimum,
// at most 20000.00) with reference "Liquidación <day>" and origin schedule; every day's run recorded, with or
// without a transfer; suspended and ACH-less merchants skipped; days missed while no worker ran made up once,
// with one transfer of the latest of them; no day before a schedule took effect ever made up. The test clock
// moves time; every test uses days of its own and checks its own merchants only, since one job serves them all.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ledger from '../../src/ledger/service.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { balanceOf, fund } from '../transfers/helpers.ts';
import { laPaz, payoutMerchant, runPayouts, runsOf, setSchedule, transferCount, transfersOf } from './helpers.ts';

describe.each(databaseKinds())('scheduled payouts on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(async () => {
    // Whatever the tests paid out, the books close.
    if (t) {
      const report = await ledger.checkLedger(t.db);
      expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
    }
    await t?.close();
  });

  it('at PAYOUT_TIME of a daily schedule: one transfer of available − keep − transfer fee, "Liquidación <day>", origin schedule, with its event; nothing before, nothing twice', async () => {
    const merchant = await payoutMerchant(t, '500.00', 1.5);
    t.clock.set(laPaz('2026-12-01', '12:00'));
    await setSchedule(t, merchant, { interval: 'daily', keep: 100 });

    t.clock.set(laPaz('2026-12-01', '17:59'));
    await runPayouts(t);
    expect(await transferCount(t, merchant)).toBe(0);
    expect(await runsOf(t, merchant)).toEqual([]);

    t.clock.set(laPaz('2026-12-01', '18:00'));
    await runPayouts(t);
    const [transfer, ...others] = await transfersOf(t, merchant);
    expect(others).toEqual([]);
    expect(transfer).toMatchObject({
      business_code: merchant.businessCode, status: 'PENDING', amount: 398.5, fee: 1.5, currency: 'BOB', reference: 'Liquidación 2026-12-01',
      origin: 'schedule', destination: { type: 'bank_account', bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Pérez' },
      created_at: laPaz('2026-12-01', '18:00'),
    });
    // The keep stays available; the amount waits in pending_out like any transfer's.
    expect(await balanceOf(t, merchant)).toEqual({ available: 100, pending_out: 398.5 });
    expect(await runsOf(t, merchant)).toEqual([{ day: '2026-12-01', outcome: 'transferred', transfer_id: transfer!.id, covered_by: null }]);
    const schedule = await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/payout-schedule`);
    expect(schedule.body.last_run).toEqual({ date: '2026-12-01', outcome: 'transferred', transfer_id: transfer!.id });
    const events = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(events.filter((event) => event.type.startsWith('transfer.')).map((event) => [event.type, event.data])).toEqual([['transfer.created', transfer]]);

    // Later the same evening, funded again: that day is paid out already.
    await fund(t, merchant, '50.00');
    t.clock.set(laPaz('2026-12-01', '23:59'));
    await runPayouts(t);
    expect(await transferCount(t, merchant)).toBe(1);
  });

  it('below the minimum: no transfer, the day\'s run recorded as below_minimum; the next day pays when there is enough', async () => {
    const merchant = await payoutMerchant(t, '20.00', 1);
    t.clock.set(laPaz('2026-12-02', '09:00'));
    await setSchedule(t, merchant, { interval: 'daily', keep: 5, minimum: 15 });
    t.clock.set(laPaz('2026-12-02', '18:00'));
    await runPayouts(t);
    // 20.00 − 5.00 − 1.00 = 14.00 < 15.00
    expect(await transferCount(t, merchant)).toBe(0);
    expect(await runsOf(t, merchant)).toEqual([{ day: '2026-12-02', outcome: 'below_minimum', transfer_id: null, covered_by: null }]);
    expect(await balanceOf(t, merchant)).toEqual({ available: 20, pending_out: 0 });

    await fund(t, merchant, '1.00');
    t.clock.set(laPaz('2026-12-03', '18:00'));
    await runPayouts(t);
    // 21.00 − 5.00 − 1.00 = 15.00: exactly the minimum pays.
    const transfers = await transfersOf(t, merchant);
    expect(transfers.map((transfer) => [transfer.amount, transfer.fee, transfer.reference])).toEqual([[15, 1, 'Liquidación 2026-12-03']]);
    expect(await balanceOf(t, merchant)).toEqual({ available: 5, pending_out: 15 });
    expect((await runsOf(t, merchant)).map((run) => run.outcome)).toEqual(['below_minimum', 'transferred']);
  });

  it('caps a payout at 20000.00: the rest waits for the next run', async () => {
    const merchant = await payoutMerchant(t, '15000.00');
    await fund(t, merchant, '15000.00');
    t.clock.set(laPaz('2026-12-04', '10:00'));
    await setSchedule(t, merchant, { interval: 'daily' });
    t.clock.set(laPaz('2026-12-04', '18:00'));
    await runPayouts(t);
    expect(await balanceOf(t, merchant)).toEqual({ available: 10_000, pending_out: 20_000 });
    t.clock.set(laPaz('2026-12-05', '18:00'));
    await runPayouts(t);
    expect((await transfersOf(t, merchant)).map((transfer) => [transfer.amount, transfer.reference]))
      .toEqual([[20_000, 'Liquidación 2026-12-04'], [10_000, 'Liquidación 2026-12-05']]);
    expect(await balanceOf(t, merchant)).toEqual({ available: 0, pending_out: 30_000 });
  });

  it('skips suspended merchants and merchants whose ACH module was switched off, recording their runs; they are paid from the next day after', async () => {
    const suspended = await payoutMerchant(t, '100.00');
    const withoutAch = await payoutMerchant(t, '100.00');
    t.clock.set(laPaz('2026-12-06', '10:00'));
    await setSchedule(t, suspended, { interval: 'daily' });
    await setSchedule(t, withoutAch, { interval: 'daily' });
    expect((await t.request('PATCH', `/admin/v1/merchants/${suspended.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);
    expect((await t.request('PATCH', `/admin/v1/merchants/${withoutAch.businessCode}`, { body: { ach_enabled: false } })).status).toBe(200);
    t.clock.set(laPaz('2026-12-06', '18:00'));
    await runPayouts(t);
    expect([await transferCount(t, suspended), await transferCount(t, withoutAch)]).toEqual([0, 0]);
    expect(await runsOf(t, suspended)).toEqual([{ day: '2026-12-06', outcome: 'suspended', transfer_id: null, covered_by: null }]);
    expect(await runsOf(t, withoutAch)).toEqual([{ day: '2026-12-06', outcome: 'no_ach_module', transfer_id: null, covered_by: null }]);

    // Back in good standing: the next day is paid; the skipped day is not made up.
    await t.request('PATCH', `/admin/v1/merchants/${suspended.businessCode}`, { body: { status: 'active' } });
    await t.request('PATCH', `/admin/v1/merchants/${withoutAch.businessCode}`, { body: { ach_enabled: true } });
    t.clock.set(laPaz('2026-12-07', '18:00'));
    await runPayouts(t);
    for (const merchant of [suspended, withoutAch]) {
      expect((await transfersOf(t, merchant)).map((transfer) => transfer.reference)).toEqual(['Liquidación 2026-12-07']);
    }
  });

  it('after downtime over several PAYOUT_TIMEs: exactly one transfer, referenced with the latest missed day; the missed days recorded and never made up again', async () => {
    const merchant = await payoutMerchant(t, '300.00', 0.5);
    t.clock.set(laPaz('2026-12-08', '12:00'));
    await setSchedule(t, merchant, { interval: 'daily', keep: 10 });
    // No worker ran from before 18:00 on the 8th until 10:00 on the 11th: the 8th, 9th and 10th were missed.
    t.clock.set(laPaz('2026-12-11', '10:00'));
    await runPayouts(t);
    const transfers = await transfersOf(t, merchant);
    expect(transfers.map((transfer) => [transfer.amount, transfer.fee, transfer.reference])).toEqual([[289.5, 0.5, 'Liquidación 2026-12-10']]);
    expect(await runsOf(t, merchant)).toEqual([
      { day: '2026-12-08', outcome: 'missed', transfer_id: null, covered_by: '2026-12-10' },
      { day: '2026-12-09', outcome: 'missed', transfer_id: null, covered_by: '2026-12-10' },
      { day: '2026-12-10', outcome: 'transferred', transfer_id: transfers[0]!.id, covered_by: null },
    ]);
    // A restart (a new process: new jobs) makes nothing up again.
    await fund(t, merchant, '100.00');
    await runPayouts(t);
    expect(await transferCount(t, merchant)).toBe(1);
    // The 11th is paid at its own PAYOUT_TIME.
    t.clock.set(laPaz('2026-12-11', '18:00'));
    await runPayouts(t);
    expect((await transfersOf(t, merchant)).map((transfer) => [transfer.amount, transfer.reference]))
      .toEqual([[289.5, 'Liquidación 2026-12-10'], [99.5, 'Liquidación 2026-12-11']]);
  });

  it('a schedule set after today\'s PAYOUT_TIME takes effect at tomorrow\'s: today is not made up', async () => {
    const merchant = await payoutMerchant(t, '100.00');
    t.clock.set(laPaz('2026-12-12', '19:00'));
    expect((await setSchedule(t, merchant, { interval: 'daily' })).effective_from).toBe('2026-12-13');
    t.clock.set(laPaz('2026-12-12', '19:01'));
    await runPayouts(t);
    expect(await runsOf(t, merchant)).toEqual([]);
    t.clock.set(laPaz('2026-12-13', '18:00'));
    await runPayouts(t);
    expect((await transfersOf(t, merchant)).map((transfer) => transfer.reference)).toEqual(['Liquidación 2026-12-13']);
    expect((await runsOf(t, merchant)).map((run) => run.day)).toEqual(['2026-12-13']);
  });

  it('a schedule switched from manual to daily makes up no day before it; nor does one switched back on after a manual spell', async () => {
    const merchant = await payoutMerchant(t, '100.00');
    t.clock.set(laPaz('2026-12-14', '10:00'));
    await setSchedule(t, merchant, { interval: 'manual' });
    t.clock.set(laPaz('2026-12-17', '10:00'));
    await setSchedule(t, merchant, { interval: 'daily' });
    t.clock.set(laPaz('2026-12-17', '18:00'));
    await runPayouts(t);
    expect((await runsOf(t, merchant)).map((run) => [run.day, run.outcome])).toEqual([['2026-12-17', 'transferred']]);

    // Off on the 18th before PAYOUT_TIME, on again on the 21st after it: the 18th to the 21st are nobody's due.
    t.clock.set(laPaz('2026-12-18', '09:00'));
    await setSchedule(t, merchant, { interval: 'manual' });
    await fund(t, merchant, '40.00');
    t.clock.set(laPaz('2026-12-21', '20:00'));
    expect((await setSchedule(t, merchant, { interval: 'daily' })).effective_from).toBe('2026-12-22');
    await runPayouts(t);
    t.clock.set(laPaz('2026-12-22', '18:00'));
    await runPayouts(t);
    expect((await runsOf(t, merchant)).map((run) => [run.day, run.outcome])).toEqual([['2026-12-17', 'transferred'], ['2026-12-22', 'transferred']]);
    expect((await transfersOf(t, merchant)).map((transfer) => [transfer.amount, transfer.reference]))
      .toEqual([[100, 'Liquidación 2026-12-17'], [40, 'Liquidación 2026-12-22']]);
  });

  it('a change of keep, minimum or destination keeps the days owed: a day missed before the change is still paid, with the new settings', async () => {
    const merchant = await payoutMerchant(t, '100.00');
    t.clock.set(laPaz('2026-12-23', '10:00'));
    await setSchedule(t, merchant, { interval: 'daily' });
    // The worker missed 18:00; the operator changes keep at 19:00.
    t.clock.set(laPaz('2026-12-23', '19:00'));
    expect((await setSchedule(t, merchant, { interval: 'daily', keep: 30 })).effective_from).toBe('2026-12-23');
    await runPayouts(t);
    expect((await transfersOf(t, merchant)).map((transfer) => [transfer.amount, transfer.reference])).toEqual([[70, 'Liquidación 2026-12-23']]);
  });

  it('a weekly schedule pays out on its weekday only, and makes up its missed weeks with one transfer', async () => {
    const merchant = await payoutMerchant(t, '100.00');
    // 2026-12-24 is a Thursday; weekday 1 is Monday.
    t.clock.set(laPaz('2026-12-24', '10:00'));
    expect((await setSchedule(t, merchant, { interval: 'weekly', weekday: 1 })).effective_from).toBe('2026-12-24');
    for (const day of ['2026-12-24', '2026-12-25', '2026-12-26', '2026-12-27']) {
      t.clock.set(laPaz(day, '18:00'));
      await runPayouts(t);
    }
    expect(await runsOf(t, merchant)).toEqual([]);
    t.clock.set(laPaz('2026-12-28', '18:00'));
    await runPayouts(t);
    expect((await transfersOf(t, merchant)).map((transfer) => transfer.reference)).toEqual(['Liquidación 2026-12-28']);
    // Down from before the Monday of 4 January until Tuesday the 12th: two Mondays missed, one transfer.
    await fund(t, merchant, '60.00');
    t.clock.set(laPaz('2027-01-12', '08:00'));
    await runPayouts(t);
    expect((await transfersOf(t, merchant)).map((transfer) => [transfer.amount, transfer.reference]))
      .toEqual([[100, 'Liquidación 2026-12-28'], [60, 'Liquidación 2027-01-11']]);
    expect((await runsOf(t, merchant)).map((run) => [run.day, run.outcome])).toEqual([
      ['2026-12-28', 'transferred'], ['2027-01-04', 'missed'], ['2027-01-11', 'transferred'],
    ]);
  });

  it('the scheduled transfer then follows the normal lifecycle: the merchant may cancel it while PENDING, its funds and fee return', async () => {
    const merchant = await payoutMerchant(t, '80.00', 2);
    t.clock.set(laPaz('2027-01-13', '10:00'));
    await setSchedule(t, merchant, { interval: 'daily' });
    t.clock.set(laPaz('2027-01-13', '18:00'));
    await runPayouts(t);
    const [transfer] = await transfersOf(t, merchant);
    expect(transfer).toMatchObject({ amount: 78, fee: 2, origin: 'schedule' });
    const canceled = await t.request('POST', `/api/v2/transfers/${transfer!.id}/cancel`, { apiKey: merchant.apiKey });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'CANCELED', origin: 'schedule' });
    expect(await balanceOf(t, merchant)).toEqual({ available: 80, pending_out: 0 });
    // The day stays run: its money is back in available and goes out at the next day's PAYOUT_TIME.
    t.clock.set(laPaz('2027-01-13', '18:30'));
    await runPayouts(t);
    expect(await transferCount(t, merchant)).toBe(1);
    const advanced = await (async () => {
      t.clock.set(laPaz('2027-01-14', '18:00'));
      await runPayouts(t);
      const [, next] = await transfersOf(t, merchant);
      return t.request('POST', `/api/v2/sandbox/transfers/${next!.id}/advance`, { apiKey: merchant.apiKey, body: { to: 'COMPLETED' } });
    })();
    expect(advanced.body).toMatchObject({ status: 'COMPLETED', amount: 78, reference: 'Liquidación 2027-01-14', origin: 'schedule' });
  });

  it('a destination whose bank left the configured list (BANKS_FILE) is not paid to: the run is recorded as unknown_bank', async () => {
    const merchant = await payoutMerchant(t, '100.00');
    t.clock.set(laPaz('2027-01-14', '19:00'));
    await setSchedule(t, merchant, { interval: 'daily' }); // to bank 1014
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-banks-'));
    const banksFile = path.join(dir, 'banks.json');
    fs.writeFileSync(banksFile, JSON.stringify([{ bank_code: 1001, name: 'Banco Nacional de Bolivia' }]));
    // The same database served by a process whose list has lost bank 1014.
    const other = await startTestApp({ kind, database: t.database, clock: t.clock, env: { BANKS_FILE: banksFile } });
    try {
      t.clock.set(laPaz('2027-01-15', '18:00'));
      await runPayouts(other);
    } finally {
      await other.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(await transferCount(t, merchant)).toBe(0);
    expect((await runsOf(t, merchant)).map((run) => [run.day, run.outcome])).toEqual([['2027-01-15', 'unknown_bank']]);
  });

  it('a merchant whose run fails holds up no other merchant: its transaction rolls back, a warning names it, the next run pays it', async () => {
    const failing = await payoutMerchant(t, '30.00');
    const other = await payoutMerchant(t, '40.00'); // a higher business_code: claimed after the failing one
    t.clock.set(laPaz('2027-01-17', '10:00'));
    await setSchedule(t, failing, { interval: 'daily' });
    await setSchedule(t, other, { interval: 'daily' });
    // A failure the job cannot foresee (a bug, a constraint): the failing merchant's run is refused by a trigger.
    await t.db.query(`create function refuse_payout_run() returns trigger language plpgsql as $$
      begin raise exception 'refused for the test'; end $$`);
    await t.db.query(`create trigger refuse_payout_run before insert on payout_runs for each row
      when (new.business_code = ${Number(failing.businessCode)}) execute function refuse_payout_run()`);
    const warnings: unknown[] = [];
    const log = { info: () => undefined, warn: (fields: unknown) => { warnings.push(fields); } } as never;
    const job = backgroundJobs(t.context, { log }).find((each) => each.name === 'scheduled-payouts')!;
    try {
      t.clock.set(laPaz('2027-01-17', '18:00'));
      while (await job.runOnce()) { /* more waiting */ }
    } finally {
      await t.db.query('drop trigger refuse_payout_run on payout_runs');
      await t.db.query('drop function refuse_payout_run()');
    }
    expect(warnings).toEqual([{ business_code: failing.businessCode, error: expect.objectContaining({ message: 'refused for the test' }) }]);
    expect(await transferCount(t, failing)).toBe(0); // its transfer rolled back with the run
    expect(await balanceOf(t, failing)).toEqual({ available: 30, pending_out: 0 });
    expect((await transfersOf(t, other)).map((transfer) => [transfer.amount, transfer.reference])).toEqual([[40, 'Liquidación 2027-01-17']]);
    await job.runOnce();
    expect((await transfersOf(t, failing)).map((transfer) => [transfer.amount, transfer.reference])).toEqual([[30, 'Liquidación 2027-01-17']]);
  });

  it('the database refuses a second run of a merchant\'s day, whoever writes it', async () => {
    const merchant = await payoutMerchant(t, '10.00');
    t.clock.set(laPaz('2027-01-18', '10:00'));
    await setSchedule(t, merchant, { interval: 'daily' });
    t.clock.set(laPaz('2027-01-18', '18:00'));
    await runPayouts(t);
    await expect(t.db.query(
      `insert into payout_runs (business_code, business_date, outcome, recorded_at) values ($1::bigint, '2027-01-18', 'below_minimum', now())`,
      [merchant.businessCode],
    )).rejects.toMatchObject({ constraint: 'payout_runs_one_per_day' });
  });
});
