// The operator's revenue (docs/fees.md#revenue; contract §15.2): what the merchants' fees earned, net of
// the transfer fees given back, by day in SERVICE_TIMEZONE and by merchant, with the onboarding activation
// fees apart. Read from the statement buckets, like statements, so a past day's figure never changes.
import type { ReadDatabase } from '../db/database.ts';
import { centavos, type Centavos } from '../money.ts';
import * as store from './revenue-store.ts';
import type { DayRange } from './statements.ts';

export interface RevenueTotals {
  count: number;
  centavos: Centavos;
}

export interface RevenueReport {
  range: DayRange;
  total: RevenueTotals;
  activations: RevenueTotals;
  /** Every day of the range, those without fees included. */
  days: Array<{ date: string } & RevenueTotals>;
  /** The merchants with fees in the range, the largest revenue first. */
  merchants: Array<{ businessCode: number } & RevenueTotals>;
  /** Each (day, merchant) with fees, and each day's activations: the rows of the CSV. */
  lines: Array<{ date: string; kind: 'fee' | 'activation'; businessCode: number } & RevenueTotals>;
}

/**
 * The revenue of `range`. `platformBusinessCode` is the platform's own merchant account, whose statement's
 * `fees` are the activation fees it collected (null: there is none). One read-only snapshot, so the days,
 * the merchants and the total always agree.
 */
export async function revenueOf(db: ReadDatabase, range: DayRange, platformBusinessCode: number | null): Promise<RevenueReport> {
  const { fees, activations } = await db.transaction(async (tx) => {
    await tx.query('set transaction isolation level repeatable read, read only');
    return {
      fees: await store.revenueByDayAndMerchant(tx, range.dayStarts),
      activations: platformBusinessCode === null ? [] : await store.activationsByDay(tx, platformBusinessCode, range.dayStarts),
    };
  });
  const days = range.days.map((date) => ({ date, count: 0, centavos: centavos(0) }));
  const byMerchant = new Map<number, RevenueTotals>();
  const total = { count: 0, centavos: centavos(0) };
  for (const row of fees) {
    const day = days[row.day]!;
    day.count += row.count;
    day.centavos = centavos(day.centavos + row.centavos);
    const merchant = byMerchant.get(row.business_code) ?? { count: 0, centavos: centavos(0) };
    merchant.count += row.count;
    merchant.centavos = centavos(merchant.centavos + row.centavos);
    byMerchant.set(row.business_code, merchant);
    total.count += row.count;
    total.centavos = centavos(total.centavos + row.centavos);
  }
  const activationTotal = activations.reduce(
    (sum, row) => ({ count: sum.count + row.count, centavos: centavos(sum.centavos + row.centavos) }),
    { count: 0, centavos: centavos(0) },
  );
  const merchants = [...byMerchant].map(([businessCode, totals]) => ({ businessCode, ...totals }))
    .sort((a, b) => b.centavos - a.centavos || a.businessCode - b.businessCode);
  const lines = [
    ...fees.map((row) => ({ date: range.days[row.day]!, kind: 'fee' as const, businessCode: row.business_code, count: row.count, centavos: row.centavos })),
    ...activations.map((row) => ({ date: range.days[row.day]!, kind: 'activation' as const, businessCode: platformBusinessCode!, count: row.count, centavos: row.centavos })),
  ].sort((a, b) => a.date.localeCompare(b.date) || (a.kind === b.kind ? 0 : a.kind === 'fee' ? -1 : 1) || a.businessCode - b.businessCode);
  return { range, total, activations: activationTotal, days, merchants, lines };
}
