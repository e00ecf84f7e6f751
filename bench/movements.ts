// Benchmark of GET /api/v2/balance/movements on PostgreSQL with a large history (issue: "Balance and
// movements"). Seeds (1) one merchant with 1,000,000 movements and (2) 2,000,000 movements spread over
// 1,000 merchants, starts the real service as a child process (RATE_LIMIT=off), and measures the latency
// of pages 1–100 and the last page, with and without a type filter, one request at a time. The baseline
// is GET /healthz (no database) measured in the same run, so the figures can be read as ratios on a
// noisy 2-core machine.
//
//   npx tsx bench/movements.ts                       # both scenarios
//   BENCH_DATABASE_URL=postgres://… ROWS=200000 npx tsx bench/movements.ts
//
// The history is seeded with set-based SQL straight into the ledger tables (test/helpers/journal-seed.ts:
// movements, transfers, journal, buckets, counters and balances kept consistent, so `mps ledger check`
// passes): a million movements through HTTP would take the benchmark longer than the measurement.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import * as merchants from '../src/merchants/service.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import { adminQuery } from './scratch-database.ts';
import { waitUntilReady } from './ready.ts';
import { seedHistory } from '../test/helpers/journal-seed.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const databaseName = 'mps_bench_movements';
const rowsForOneMerchant = Number(process.env.ROWS ?? 1_000_000);
const spreadRows = Number(process.env.SPREAD_ROWS ?? 2_000_000);
const spreadMerchants = Number(process.env.SPREAD_MERCHANTS ?? 1_000);
const samplesPerCase = Number(process.env.SAMPLES ?? 200);
const port = 3900 + Math.floor(Math.random() * 90);

const admin = (sql: string) => adminQuery(serverUrl, sql);

/** Creates merchants through the service (keys and balances as in production), then seeds their history. */
async function seed(url: string): Promise<{ hot: { businessCode: number; apiKey: string }; spread: Array<{ businessCode: number; apiKey: string }> }> {
  const db = await openPostgres({ url, queryTimeoutMs: 0 }); // seeding takes longer than a request may
  try {
    await migrate(db);
    const create = (name: string) => db.transaction(async (tx) => {
      const created = await merchants.createMerchant(tx, { name }, 'sandbox', new Date());
      return { businessCode: created.merchant.business_code, apiKey: created.apiKey };
    });
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
    await db.query('analyze');
    console.log(`seeded ${rowsForOneMerchant + spreadRows} movements in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return { hot, spread };
  } finally {
    await db.close();
  }
}

async function startService(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), RATE_LIMIT: 'off', LOG_LEVEL: 'warn', MODE: 'sandbox', SANDBOX_SETTLEMENT: 'off' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  for (let i = 0; i < 200 && !output.includes('listening on'); i++) await new Promise((r) => setTimeout(r, 100));
  if (!output.includes('listening on')) throw new Error(`service did not start:\n${output}`);
  await waitUntilReady(`http://127.0.0.1:${port}`);
  return child;
}

interface Stats { p50: number; p99: number; max: number }

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

/** Latency of `paths` requested one at a time, round robin, `samples` requests in all. */
async function measure(paths: string[], apiKey: string | null, samples: number): Promise<Stats> {
  const latencies: number[] = [];
  for (let i = 0; i < samples; i++) {
    const path = paths[i % paths.length]!;
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
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
  const { hot, spread } = await seed(url);
  const service = await startService(url);
  const rows: string[] = [];
  try {
    // Warm up connections and caches.
    await measure(['/healthz'], null, 200);
    await measure(['/api/v2/balance/movements'], hot.apiKey, 100);
    const baseline = await measure(['/healthz'], null, samplesPerCase * 2);
    rows.push(`| baseline: GET /healthz (no database) | ${fmt(baseline)} | 1.0 |`);
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
      ['  same, pinned before_id, page 50', [`/api/v2/balance/movements?page=50&before_id=${Number.MAX_SAFE_INTEGER}`], hot.apiKey],
    ];
    for (const [label, paths, key] of cases) {
      const result = await measure(paths, key, samplesPerCase);
      rows.push(`| ${label} | ${fmt(result)} | ${(result.p99 / baseline.p99).toFixed(1)} |`);
    }
    // 1,000 merchants sharing 2,000,000 movements: every merchant's pages, round robin over merchants.
    const perMerchant = Math.floor(spreadRows / spreadMerchants);
    const spreadLatencies: number[] = [];
    for (let i = 0; i < samplesPerCase; i++) {
      const merchant = spread[i % spread.length]!;
      const page = i % 2 === 0 ? 1 + (i % Math.min(100, lastPage(perMerchant))) : lastPage(perMerchant);
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/api/v2/balance/movements?page=${page}${i % 4 === 1 ? '&type=payment' : ''}`, { headers: { 'x-api-key': merchant.apiKey } });
      await response.arrayBuffer();
      spreadLatencies.push(performance.now() - started);
    }
    const spreadStats = stats(spreadLatencies);
    rows.push(`| ${spreadMerchants.toLocaleString('en')} merchants, ${spreadRows.toLocaleString('en')} movements: first and last pages, ±type | ${fmt(spreadStats)} | ${(spreadStats.p99 / baseline.p99).toFixed(1)} |`);
  } finally {
    service.kill('SIGTERM');
    await once(service, 'exit');
    await admin(`drop database if exists ${databaseName} with (force)`);
  }
  console.log(['', '| case (one request at a time) | p50 ms | p99 ms | max ms | p99 / baseline p99 |', '|---|---|---|---|---|', ...rows].join('\n'));
}

function fmt(s: Stats): string {
  return `${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.max.toFixed(2)}`;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
