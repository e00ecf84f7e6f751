// Statement and journal export benchmark on PostgreSQL (figures in BENCHMARKS.md).
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/statement.ts [entries=1000000]
//
// A scratch database gets one merchant with `entries` payments spread over the last 365 days (seeded in
// bulk, as the posting statement writes them: movements, entries, postings, buckets, heads), plus 200
// quiet merchants. The service runs as its own process (RATE_LIMIT=off). Measured:
//  1. GET /api/v2/balance/statement for the 366 days ending today, under autocannon (4 connections):
//     req/s, p50, p99 — the target is p99 < 200 ms;
//  2. GET /api/v2/balance/entries.csv of the same range, downloaded whole by one client: rows/s — the
//     target is ≥ 50,000 rows/s;
//  3. the baseline of the same run: a primary-key SELECT of the balance through the same service
//     (GET /api/v2/balance), to show what a statement costs against the cheapest read.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import autocannon from 'autocannon';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import { createMerchant } from '../src/merchants/service.ts';
import { formatWallClock } from '../src/time.ts';
import { seedHistory } from '../test/helpers/journal-seed.ts';
import { autocannonPercentiles, reportFigures } from './lib/figures.ts';
import { startBenchService, type BenchService } from './lib/service.ts';
import { adminQuery } from './scratch-database.ts';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ENTRIES = Number(process.argv[2] ?? 1_000_000);
const DURATION_SECONDS = Number(process.env.BENCH_DURATION ?? 10);
/** The service's address, once started. */
let serviceUrl = '';
const DAY_MS = 86_400_000;

async function load(path: string, apiKey: string, connections: number) {
  const result = await autocannon({
    url: `${serviceUrl}${path}`, connections, duration: DURATION_SECONDS, headers: { 'x-api-key': apiKey },
  });
  // An error answer is cheaper than the real one: a run with any would flatter the figure.
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return {
    perSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors,
    percentiles: autocannonPercentiles(result),
  };
}

async function main(): Promise<void> {
  const name = `mps_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(SERVER_URL, `create database ${name}`);
  const url = databaseUrlWithName(SERVER_URL, name);
  let service: BenchService | null = null;
  try {
    const db = await openPostgres({ url, queryTimeoutMs: 0 }); // seeding a million entries takes longer than a request may
    await migrate(db);
    const now = new Date();
    const yearAgo = new Date(now.getTime() - 365 * DAY_MS);
    const busy = await createMerchant(db, { name: 'Busy shop' }, 'sandbox', yearAgo);
    for (let i = 0; i < 200; i++) await createMerchant(db, { name: `Quiet ${i}` }, 'sandbox', yearAgo);
    const seeding = performance.now();
    await seedHistory(db, busy.merchant.business_code, { count: ENTRIES, start: new Date(yearAgo.getTime() + 60_000), spacingMs: Math.floor((365 * DAY_MS - 120_000) / ENTRIES) });
    await db.query('analyze');
    const seedSeconds = (performance.now() - seeding) / 1000;
    await db.close();

    service = await startBenchService({ DATABASE_URL: url });
    serviceUrl = service.url;
    const apiKey = busy.apiKey;
    const to = formatWallClock(now, 'America/La_Paz').slice(0, 10);
    const from = formatWallClock(new Date(now.getTime() - 365 * DAY_MS), 'America/La_Paz').slice(0, 10);
    const statementPath = `/api/v2/balance/statement?from=${from}&to=${to}`;
    const check = await (await fetch(`${serviceUrl}${statementPath}`, { headers: { 'x-api-key': apiKey } })).json() as { days: unknown[]; closing_balance: number };
    if (check.days.length !== 366 || check.closing_balance !== ENTRIES * 2.5) throw new Error(`unexpected statement: ${check.days.length} days, closing ${check.closing_balance}`);

    const balance = await load('/api/v2/balance', apiKey, 4);
    const statement = await load(statementPath, apiKey, 4);

    const exportStarted = performance.now();
    const response = await fetch(`${serviceUrl}/api/v2/balance/entries.csv?from=${from}&to=${to}`, { headers: { 'x-api-key': apiKey } });
    let lines = 0;
    let bytes = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      for (const byte of chunk) if (byte === 10) lines++;
    }
    const exportSeconds = (performance.now() - exportStarted) / 1000;
    const rows = lines - 1; // the header
    if (rows !== ENTRIES) throw new Error(`the export had ${rows} rows, expected ${ENTRIES}`);

    const out = [
      `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), load average ${os.loadavg().map((n) => n.toFixed(1)).join(' ')}`,
      `seeded ${ENTRIES} entries of one merchant over 365 days in ${seedSeconds.toFixed(1)} s`,
      `baseline GET /api/v2/balance (primary key), 4 connections, ${DURATION_SECONDS}s: ${balance.perSecond.toFixed(0)} req/s, p50 ${balance.p50} ms, p99 ${balance.p99} ms, non-2xx ${balance.non2xx}`,
      `GET /api/v2/balance/statement, 366 days, 4 connections, ${DURATION_SECONDS}s: ${statement.perSecond.toFixed(0)} req/s, p50 ${statement.p50} ms, p99 ${statement.p99} ms (target p99 < 200 ms), non-2xx ${statement.non2xx}; ${(statement.perSecond / balance.perSecond).toFixed(2)} x the baseline's req/s`,
      `GET /api/v2/balance/entries.csv, 366 days: ${rows} rows, ${(bytes / 1048576).toFixed(1)} MiB in ${exportSeconds.toFixed(2)} s = ${(rows / exportSeconds).toFixed(0)} rows/s (target >= 50,000)`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    const ceiling = { name: 'GET /api/v2/balance (a primary-key read through the service)', value: Math.round(balance.perSecond) };
    reportFigures([
      { group: 'history', name: `GET /api/v2/balance/statement, 366 days, ${ENTRIES.toLocaleString('en-US')} entries`, value: Math.round(statement.perSecond), unit: 'req/s',
        p50Ms: statement.p50, p99Ms: statement.p99, percentiles: statement.percentiles, ceiling,
        target: { text: 'p99 < 200 ms', met: statement.p99 < 200 }, note: `4 connections, ${DURATION_SECONDS} s` },
      { group: 'history', name: `GET /api/v2/balance/entries.csv, 366 days, one client`, value: Math.round(rows / exportSeconds), unit: 'rows/s',
        target: { text: '≥ 50,000 rows/s', met: rows / exportSeconds >= 50_000 }, note: `${rows.toLocaleString('en-US')} rows, ${(bytes / 1048576).toFixed(1)} MiB in ${exportSeconds.toFixed(1)} s` },
    ]);
  } finally {
    await service?.stop();
    await adminQuery(SERVER_URL, `drop database if exists ${name} with (force)`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
