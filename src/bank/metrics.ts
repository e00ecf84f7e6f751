// Prometheus metrics of reconciliation (docs/operators.md, "Daily reconciliation"): the breaks of the latest
// stored run of the latest day reconciled, per rail and kind, and that day. Read from rail_reconciliations
// when /metrics is scraped, so every process of a database reports the same numbers, whichever ran it.
import { Gauge, type Registry } from 'prom-client';
import type { Queryable } from '../db/database.ts';
import { parseWallClock } from '../time.ts';
import { BREAK_KINDS } from './reconciliation.ts';
import { latestRuns, type LatestRun } from './reconciliation-store.ts';

const registered = new WeakSet<Registry>();
/** A scrape waits this long for the table; a database that does not answer must not make /metrics time out. */
const READ_TIMEOUT_MS = 2_000;

/** Registers the reconciliation gauges in `registry` (once per registry). */
export function registerReconciliationMetrics(registry: Registry, db: Queryable, serviceTimeZone: string): void {
  if (registered.has(registry)) return;
  registered.add(registry);
  new Gauge({
    name: 'mps_rail_reconciliation_breaks',
    help: 'Breaks found by the latest reconciliation of the latest business day reconciled, by rail and kind (0: none of that kind)',
    labelNames: ['rail', 'kind'],
    registers: [registry],
    async collect() {
      const latest = await latestWithin(db, READ_TIMEOUT_MS);
      // The database not answering: the series are left out, never shown stale or as zeros.
      this.reset();
      for (const run of latest ?? []) {
        for (const kind of BREAK_KINDS) this.set({ rail: run.rail, kind }, run.breakCounts[kind] ?? 0);
      }
    },
  });
  new Gauge({
    name: 'mps_rail_reconciliation_last_day_seconds',
    help: 'Start (Unix time, SERVICE_TIMEZONE) of the latest business day reconciled, by rail: alert when it falls more than two days behind',
    labelNames: ['rail'],
    registers: [registry],
    async collect() {
      const latest = await latestWithin(db, READ_TIMEOUT_MS);
      this.reset();
      for (const run of latest ?? []) {
        const start = parseWallClock(`${run.businessDate} 00:00:00`, serviceTimeZone);
        if (start) this.set({ rail: run.rail }, start.getTime() / 1000);
      }
    },
  });
}

/** The latest runs, or null when the database fails or takes longer than `timeoutMs`. */
async function latestWithin(db: Queryable, timeoutMs: number): Promise<LatestRun[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  try {
    return await Promise.race([latestRuns(db).catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}
