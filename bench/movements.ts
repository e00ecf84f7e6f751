// Benchmark of GET /api/v2/balance/movements on PostgreSQL with a large history (issue: "Balance and
// movements"). Seeds (1) one merchant with 1,000,000 movements and (2) 2,000,000 movements spread over
// 1,000 merchants, starts the compiled service as a child process (RATE_LIMIT=off), and measures the latency
// of pages 1–100 and the last page, with and without a type filter, the middle page, and the page that
// skips the most (the middle of the busiest day: a page is found from per-day counts and read from the
// nearer end of its day), one request at a time. The baseline is GET /healthz (no database) measured in
// the same run, so the figures can be read as ratios on a noisy 2-core machine.
//
//   npx tsx bench/movements.ts                       # both scenarios
//   BENCH_DATABASE_URL=postgres://… ROWS=200000 npx tsx bench/movements.ts
//
// The history is seeded with set-based SQL straight into the ledger tables (test/helpers/journal-seed.ts:
// movements, transfers, journal, buckets, per-day movement counts and balances kept consistent, so
// `mps ledger check` passes): a million movements through HTTP would take the benchmark longer than the
// measurement.
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import * as merchants from '../src/merchants/service.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import { adminQuery } from './scratch-database.ts';
import { reportFigures, samplePercentiles, type Figure } from './lib/figures.ts';
import { startBenchService } from './lib/service.ts';
import { seedHistory } from '../test/helpers/journal-seed.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const databaseName = 'mps_bench_movements';
const rowsForOneMerchant = Number(process.env.ROWS ?? 1_000_000);
const spreadRows = Number(process.env.SPREAD_ROWS ?? 2_000_000);
const spreadMerchants = Number(process.env.SPREAD_MERCHANTS ?? 1_000);
const samplesPerCase = Number(process.env.SAMPLES ?? 200);
/** The service's address, once started. */
let serviceUrl = '';

const admin = (sql: string) => adminQuery(serverUrl, sql);

/** Creates merchants through the service (keys and balances as in production), then seeds their history. */
async function seed(url: string): Promise<{ hot: { businessCode: number; apiKey: string }; spread: Array<{ businessCode: number; apiKey: string }>; busiestDayPage: number }> {
  const db = await openPostgres({ url, queryTimeoutMs: 0 }); // seeding takes longer than a request may
  try {
    await migrate(db);
    const create = async (name: string) => {
      const created = await merchants.createMerchant(db, { name }, 'sandbox', new Date());
      return { businessCode: created.merchant.business_code, apiKey: created.apiKey };
    };
    const hot = await create('Hot merchant');
    const spread: Array<{ businessCode: number; apiKey: string }> = [];
    for (let i = 0; i < spreadMerchants; i++) spread.push(await create(`Merchant ${i}`));
    const started = performance.now();
    // Every third movement is a settled transfer (negative, COMPLETED); the rest are payments, half a
    // second apart, with their journal entries, so the ledger check passes on the seeded database.
    await seedHistory(db, hot.businessCode, { count: rowsForOneMerchant, start: new Date('2025-01-01T00:00:00Z'), spacingMs: 500, transferEvery: 3 });
    const perMerchant = Math.floor(spreadRows / spreadMerchants);
    for (const merchant of spread) {
      await seedHistory(db, merchant.businessCode, { count: perMerchant, start: new Date('2025-01-01T00:00:00Z'), spacingMs: 500, transferEvery: 3 });
    }
    // As a long-lived database is after autovacuum: statistics, and a visibility map that lets a page skip
    // index entries without reading each one's row (without it the busiest day's page read every row it skipped: p99 38 ms).
    await db.query('vacuum analyze');
    console.log(`seeded ${rowsForOneMerchant + spreadRows} movements in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // The hot merchant's busiest day (half a second apart, 172,800 movements a day), and the page whose
    // first movement is in its middle: as far from either end of its day as a page can be.
    const { rows } = await db.query<{ newer: number; movements: number }>(
      `select newer::int8 as newer, movements::int8 as movements
         from (select day, movements, sum(movements) over (order by day desc) - movements as newer
                 from (select day, sum(movement_count) as movements from movement_days where business_code = $1::bigint group by day) d) r
        order by movements desc, day desc limit 1`,
      [hot.businessCode],
    );
    const busiestDayPage = Math.floor((rows[0]!.newer + Math.floor((rows[0]!.movements - 15) / 2)) / 15) + 1;
    return { hot, spread, busiestDayPage };
  } finally {
    await db.close();
  }
}

interface Stats { p50: number; p99: number; max: number; percentiles: Array<[number, number]> }

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]!, percentiles: samplePercentiles(samples) };
}

/** Latency of `paths` requested one at a time, round robin, `samples` requests in all. */
async function measure(paths: string[], apiKey: string | null, samples: number): Promise<Stats> {
  const latencies: number[] = [];
  for (let i = 0; i < samples; i++) {
    const path = paths[i % paths.length]!;
    const started = performance.now();
    const response = await fetch(`${serviceUrl}${path}`, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
  }
  return stats(latencies);
}

async function main(): Promise<void> {
  await admin(`drop database if exists ${databaseName} with (force)`);
  await admin(`create database ${databaseName}`);
  const url = databaseUrlWithName(serverUrl, databaseName);
  const { hot, spread, busiestDayPage } = await seed(url);
  const service = await startBenchService({ DATABASE_URL: url, LOG_LEVEL: 'warn' });
  serviceUrl = service.url;
  const rows: string[] = [];
  const figures: Figure[] = [];
  try {
    // Warm up connections and caches.
    await measure(['/healthz'], null, 200);
    await measure(['/api/v2/balance/movements'], hot.apiKey, 100);
    const baseline = await measure(['/healthz'], null, samplesPerCase * 2);
    rows.push(`| baseline: GET /healthz (no database) | ${fmt(baseline)} | 1.0 |`);
    const figure = (label: string, result: Stats): Figure => ({
      group: 'history', name: `GET /api/v2/balance/movements: ${label.trim().replace(/^same, /, `1 merchant, ${rowsForOneMerchant.toLocaleString('en')} movements: `)}`,
      value: round2(result.p99), unit: 'ms', p50Ms: round2(result.p50), p99Ms: round2(result.p99), percentiles: result.percentiles,
      ceiling: { name: 'p99 of GET /healthz (no database)', value: round2(baseline.p99) },
      target: { text: 'p99 < 20 ms', met: result.p99 < 20 }, note: `one request at a time, ${samplesPerCase} requests`,
    });
    const pages = (lastPage: number, query: string) => [
      ...Array.from({ length: 100 }, (_, i) => `/api/v2/balance/movements?page=${i + 1}${query}`),
      `/api/v2/balance/movements?page=${lastPage}${query}`,
    ];
    const lastPage = (total: number) => Math.max(1, Math.ceil(total / 15));
    const hotTransfers = Math.floor(rowsForOneMerchant / 3);
    const cases: Array<[string, string[], string]> = [
      [`1 merchant, ${rowsForOneMerchant.toLocaleString('en')} movements: pages 1–100 + last`, pages(lastPage(rowsForOneMerchant), ''), hot.apiKey],
      ['  same, type=transfer', pages(lastPage(hotTransfers), '&type=transfer'), hot.apiKey],
      ['  same, type=payment', pages(lastPage(rowsForOneMerchant - hotTransfers), '&type=payment'), hot.apiKey],
      ['  same, last page only', [`/api/v2/balance/movements?page=${lastPage(rowsForOneMerchant)}`], hot.apiKey],
      [`  same, page ${Math.ceil(lastPage(rowsForOneMerchant) / 2).toLocaleString('en')} (the middle)`, [`/api/v2/balance/movements?page=${Math.ceil(lastPage(rowsForOneMerchant) / 2)}`], hot.apiKey],
      [`  same, page ${busiestDayPage.toLocaleString('en')} (the middle of the busiest day)`, [`/api/v2/balance/movements?page=${busiestDayPage}`], hot.apiKey],
      ['  same, pinned before_id, page 50', [`/api/v2/balance/movements?page=50&before_id=${Number.MAX_SAFE_INTEGER}`], hot.apiKey],
    ];
    for (const [label, paths, key] of cases) {
      const result = await measure(paths, key, samplesPerCase);
      rows.push(`| ${label} | ${fmt(result)} | ${(result.p99 / baseline.p99).toFixed(1)} |`);
      figures.push(figure(label, result));
    }
    // 1,000 merchants sharing 2,000,000 movements: every merchant's pages, round robin over merchants.
    const perMerchant = Math.floor(spreadRows / spreadMerchants);
    const spreadLatencies: number[] = [];
    for (let i = 0; i < samplesPerCase; i++) {
      const merchant = spread[i % spread.length]!;
      const page = i % 2 === 0 ? 1 + (i % Math.min(100, lastPage(perMerchant))) : lastPage(perMerchant);
      const started = performance.now();
      const response = await fetch(`${serviceUrl}/api/v2/balance/movements?page=${page}${i % 4 === 1 ? '&type=payment' : ''}`, { headers: { 'x-api-key': merchant.apiKey } });
      await response.arrayBuffer();
      spreadLatencies.push(performance.now() - started);
    }
    const spreadStats = stats(spreadLatencies);
    const spreadLabel = `${spreadMerchants.toLocaleString('en')} merchants, ${spreadRows.toLocaleString('en')} movements: first and last pages, ±type`;
    rows.push(`| ${spreadLabel} | ${fmt(spreadStats)} | ${(spreadStats.p99 / baseline.p99).toFixed(1)} |`);
    figures.push(figure(spreadLabel, spreadStats));
  } finally {
    await service.stop();
    await admin(`drop database if exists ${databaseName} with (force)`);
  }
  console.log(['', '| case (one request at a time) | p50 ms | p99 ms | max ms | p99 / baseline p99 |', '|---|---|---|---|---|', ...rows].join('\n'));
  reportFigures(figures);
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

function fmt(s: Stats): string {
  return `${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.max.toFixed(2)}`;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
