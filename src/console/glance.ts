// The owner's day at a glance (docs/console.md#home; contract §13): what today (SERVICE_TIMEZONE) brought in
// and took out, and the balance now. It holds no sum of its own: the day is the statement's (ledger/
// statements.ts, the journal's own day, so the home and the statement never disagree) and the balance
// is the balance row the API answers.
import type { AppContext } from '../context.ts';
import { getBalance } from '../ledger/service.ts';
import { dayRange, statementOf } from '../ledger/statements.ts';
import { centavos, type Centavos } from '../money.ts';
import { formatWallClock } from '../time.ts';

export type GlanceContext = Pick<AppContext, 'db' | 'config' | 'clock'>;

/** A count of things and the money they moved, as a positive amount. */
export interface Tally {
  count: number;
  centavos: Centavos;
}

export interface DayAtAGlance {
  /** Today in the service's time zone (YYYY-MM-DD). */
  date: string;
  now: Date;
  /** Payments received today. */
  collected: Tally;
  /** Fees charged today (on payments and transfers). */
  fees: Tally;
  /** Refunds paid back today. */
  refunds: Tally;
  /** What today leaves the business: collected, less today's fees (on payments and transfers) and refunds. */
  netCentavos: Centavos;
  /** Transfers out (payouts, scheduled or not) made today. */
  payouts: Tally;
  availableCentavos: Centavos;
  pendingOutCentavos: Centavos;
}

const positive = ({ count, centavos: amount }: { count: number; centavos: number }): Tally => ({ count, centavos: centavos(Math.abs(amount)) });

export async function dayAtAGlance(context: GlanceContext, businessCode: number): Promise<DayAtAGlance> {
  const now = context.clock.now();
  const zone = context.config.serviceTimeZone;
  const date = formatWallClock(now, zone).slice(0, 10);
  const [statement, balance] = await Promise.all([
    statementOf(context.db, businessCode, dayRange(date, date, zone, now)),
    getBalance(context.db, businessCode),
  ]);
  const day = statement.days[0]!.totals;
  const collected = positive(day.payments);
  const fees = positive(day.fees);
  const refunds = positive(day.refunds);
  return {
    date, now, collected, fees, refunds,
    netCentavos: centavos(collected.centavos - fees.centavos - refunds.centavos),
    payouts: positive(day.transfers),
    availableCentavos: balance.available_centavos,
    pendingOutCentavos: balance.pending_out_centavos,
  };
}
