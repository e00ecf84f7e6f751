// The daily sweep of the bank's paid list (docs/rails.md, "Pay-in through a bank") against the bank
// simulator: one payment that cannot be recorded leaves its day unswept without holding back the others,
// the job sweeps every day of its window not swept yet, oldest first, from the rail's first QR on, and a
// day the bank refuses or does not answer waits before it is asked again (1 min, doubling to 1 h).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, bankContextOf, RailPaymentNotRecordedError, sweepRailDay } from '../../src/bank/service.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { paidQrCalls, refusePaymentInDatabase, runJob, startBankedApp, type BankedApp } from './helpers.ts';

/** The instant of a wall-clock time in La Paz (UTC−4 all year: SERVICE_TIMEZONE's default, and the simulator's). */
const laPaz = (day: string, time: string) => `${day}T${time}:00-04:00`;
const compact = (day: string) => day.replaceAll('-', '');

describe.each(databaseKinds())('the bank\'s daily sweep on %s', (kind) => {
  let s: BankedApp;
  let merchant: { businessCode: number; apiKey: string };
  beforeAll(async () => {
    s = await startBankedApp(kind);
    merchant = await s.t.createMerchant();
  });
  afterAll(async () => {
    await s?.close();
  });

  const create = async (amount: number) => (await s.t.request('POST', '/api/v2/simple-qrs', {
    apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount },
  })).body as { id: string; rail_reference: string };
  const recorded = async (railReference: string) => (await s.t.db.query(
    'select 1 from qr_payments where rail = $1::text and rail_reference = $2::text', ['baneco', railReference])).rows.length === 1;
  const sweptDays = async () => (await s.t.db.query<{ day: string }>(
    `select to_char(business_date, 'YYYY-MM-DD') as day from bank_sweeps order by business_date`)).rows.map((row) => row.day);
  const unmatched = async () => (await s.t.db.query<{ rail_reference: string }>('select rail_reference from bank_unmatched_credits')).rows.map((row) => row.rail_reference);
  /** Runs the daily sweep job once; answers the days whose paidQR the bank was asked for meanwhile. */
  const runSweep = async () => {
    const before = s.bankLog.length;
    await runJob(s.t, 'bank-daily-sweep');
    return paidQrCalls(s.bankLog.slice(before));
  };

  // First, on a database where the rail issued no QR yet.
  it('sweeps every day of the last 7 not swept yet, oldest first, from the day of the rail\'s first QR, yesterday from 00:30', async () => {
    const today = s.bank.state().today as string;
    const realNow = s.t.clock.now().toISOString();
    s.t.clock.set(laPaz(addDays(today, 2), '01:00'));
    expect(await runSweep()).toEqual([]); // no bank QR yet: no day to sweep

    s.t.clock.set(realNow);
    await create(3); // the rail's first QR: today
    s.bank.setKnobs({ callbacks: { dropNext: 4 } });
    const paid = [-1, 0, 1, 2].map((offset) => s.bank.pay('90000000000000000001', { amount: 1, paidAt: laPaz(addDays(today, offset), '12:00') }).transactionId as string);

    s.t.clock.set(laPaz(addDays(today, 3), '01:00')); // the service was down over three 00:30s
    expect(await runSweep()).toEqual([0, 1, 2].map((offset) => compact(addDays(today, offset))));
    expect(await sweptDays()).toEqual([0, 1, 2].map((offset) => addDays(today, offset)));
    expect((await unmatched()).sort()).toEqual(paid.slice(1).sort()); // not the payment of the day before the first QR

    s.t.clock.set(laPaz(addDays(today, 12), '00:10')); // down for nine more days
    expect(await runSweep()).toEqual([5, 6, 7, 8, 9, 10].map((offset) => compact(addDays(today, offset))));
    s.t.clock.set(laPaz(addDays(today, 12), '00:30'));
    expect(await runSweep()).toEqual([compact(addDays(today, 11))]);
    expect(await runSweep()).toEqual([]);
    expect(await sweptDays()).not.toContain(addDays(today, 3)); // out of the window by then: `mps rails sweep --date`
    s.t.clock.set(realNow);
  });

  it('records the rest of a day when one payment cannot be recorded, and leaves the day unswept until it is', async () => {
    const [a, b] = [await create(21), await create(22)];
    // Paid on a day the test above left unswept (out of the window when it ran).
    const day = addDays(s.bank.state().today as string, 3);
    s.bank.setKnobs({ callbacks: { dropNext: 2 } });
    const poisoned = s.bank.pay(a.rail_reference, { paidAt: laPaz(day, '12:00') }).transactionId as string;
    const fine = s.bank.pay(b.rail_reference, { paidAt: laPaz(day, '12:00') }).transactionId as string;
    const bank = bankContextOf(s.t.context)!;
    const errors: unknown[] = [];
    const allowAgain = await refusePaymentInDatabase(s.t, poisoned);
    let first;
    try {
      first = await sweepRailDay(bank, day, (error) => errors.push(error));
    } finally {
      await allowAgain();
    }
    expect(first).toEqual({ outcome: 'incomplete', day, tally: { recorded: 1, known: 0, unmatched: 0, failed: 1 } });
    expect(errors).toEqual([expect.any(RailPaymentNotRecordedError)]);
    expect([await recorded(poisoned), await recorded(fine)]).toEqual([false, true]);
    expect(await sweptDays()).not.toContain(day);

    const second = await sweepRailDay(bank, day);
    expect(second).toEqual({ outcome: 'swept', day, tally: { recorded: 1, known: 1, unmatched: 0, failed: 0 } });
    expect(await recorded(poisoned)).toBe(true);
    expect(await sweptDays()).toContain(day);
  });

  it('asks again for a day the bank refused or did not answer only after a wait: 1 min, doubling to 1 h', async () => {
    const today = s.bank.state().today as string;
    const day = addDays(today, 12); // the one day of the window the tests above left unswept
    s.t.clock.set(laPaz(addDays(today, 13), '00:30'));
    s.bank.setKnobs({ faults: { paidQR: { kind: 'refuse', times: 'always', message: 'Servicio en mantenimiento' } } });
    try {
      expect(await runSweep()).toEqual([compact(day)]);
      expect(await runSweep()).toEqual([]); // refused: not asked again at the next run
      const minute = 60_000;
      for (const [index, wait] of [1, 2, 4, 8, 16, 32, 60, 60].entries()) {
        if (index === 2) s.bank.setKnobs({ faults: { paidQR: { kind: 'http500', times: 'always' } } }); // no answer waits too
        s.t.clock.advance(wait * minute - 1_000);
        expect(await runSweep(), `${wait} min`).toEqual([]);
        s.t.clock.advance(1_000);
        expect(await runSweep(), `${wait} min`).toEqual([compact(day)]);
      }
      s.bank.setKnobs({ faults: { paidQR: null } });
      s.t.clock.advance(60 * minute);
      expect(await runSweep()).toEqual([compact(day)]);
      expect(await sweptDays()).toContain(day);
      expect(await runSweep()).toEqual([]);
    } finally {
      s.bank.setKnobs({ faults: { paidQR: null } });
    }
  });
});
