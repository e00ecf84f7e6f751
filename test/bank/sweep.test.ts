// The daily sweep of the bank's paid list (docs/rails.md, "Pay-in through a bank") against the bank
// simulator: one payment that cannot be recorded leaves its day unswept without holding back the others.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bankContextOf, RailPaymentNotRecordedError, sweepRailDay } from '../../src/bank/service.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { refusePaymentInDatabase, startBankedApp, type BankedApp } from './helpers.ts';

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
  const isSwept = async (day: string) => (await s.t.db.query('select 1 from bank_sweeps where business_date = $1::date', [day])).rows.length === 1;

  it('records the rest of a day when one payment cannot be recorded, and leaves the day unswept until it is', async () => {
    const [a, b] = [await create(21), await create(22)];
    s.bank.setKnobs({ callbacks: { dropNext: 2 } });
    const poisoned = s.bank.pay(a.rail_reference).transactionId as string;
    const fine = s.bank.pay(b.rail_reference).transactionId as string;
    const day = s.bank.state().today as string;
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
    expect(await isSwept(day)).toBe(false);

    const second = await sweepRailDay(bank, day);
    expect(second).toEqual({ outcome: 'swept', day, tally: { recorded: 1, known: 1, unmatched: 0, failed: 0 } });
    expect(await recorded(poisoned)).toBe(true);
    expect(await isSwept(day)).toBe(true);
  });
});
