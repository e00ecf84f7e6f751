// Benchmark of GET /api/v2/balance/movements on PostgreSQL with a large history (issue: "Balance and
// movements"). Seeds (1) one merchant with 1,000,000 movements and (2) 2,000,000 movements spread over
// 1,000 merchants, starts the compiled service as a child process (RATE_LIMIT=off), and measures the latency
// of pages 1–100 and the last page, with and without a type filter, the middle page, and the page that
// skips the most (the middle of the busiest day: a page is found from per-day counts and read from the
// nearer end of its day), one request at a time. The baseline is GET /healthz (no database) measured in
// the same run, so the figures can be read as ratios on a noisy 2-core machine.
//
// A second part measures page 1 under load: a merchant with 3,000 movements made through the API (1,000
// QR payments and 500 transfers on a price plan, so a third of them are fee movements), GET
// /api/v2/balance/movements from 50 connections against a Fastify + pg primary-key select
// (bench/bare-fastify.ts) in the same rounds, and the same page one request at a time.
//
//   npx tsx bench/movements.ts                       # both parts
//   npx tsx bench/movements.ts load                  # only page 1 under load (a minute, no million rows)
//   BENCH_DATABASE_URL=postgres://… ROWS=200000 npx tsx bench/movements.ts history
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
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { autocannonPercentiles, median, reportFigures, samplePercentiles, type Figure } from './lib/figures.ts';
import { createPkTable, roundRobinPk, startBareFastify, type BareFastify } from './lib/bare-fastify.ts';
import { FEE_PLAN_BODY, FEE_PLAN_TEXT } from './lib/fees.ts';
import { createMerchants } from './lib/merchants.ts';
import { startBenchService, type BenchService } from './lib/service.ts';
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
  const parts = process.argv.length > 2 ? process.argv.slice(2) : ['history', 'load'];
  const figures: Figure[] = [];
  if (parts.includes('history')) figures.push(...await measureHistory());
  if (parts.includes('load')) figures.push(...await measurePageOneUnderLoad());
  reportFigures(figures);
}

/** The million-row histories, one request at a time. */
async function measureHistory(): Promise<Figure[]> {
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
  return figures;
}

const LOAD_CONNECTIONS = 50;
const LOAD_SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const LOAD_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';

/**
 * Page 1 of a 3,000-movement merchant's history, a third of them fees, from 50 connections, against a
 * Fastify + pg primary-key select measured in the same rounds (the two in turn, the order alternating),
 * and one request at a time.
 */
async function measurePageOneUnderLoad(): Promise<Figure[]> {
  const name = `${databaseName}_load`;
  await admin(`drop database if exists ${name} with (force)`);
  await admin(`create database ${name}`);
  const url = databaseUrlWithName(serverUrl, name);
  const db = await openPostgres({ url });
  let service: BenchService | null = null;
  let bare: BareFastify | null = null;
  try {
    await migrate(db);
    await createPkTable(db);
    await db.close();
    service = await startBenchService({ DATABASE_URL: url, ADMIN_TOKEN, LOG_LEVEL: 'warn' });
    const merchant = await makeHistory(service.url);
    bare = await startBareFastify({ pkDatabaseUrl: url });
    const page = { url: `${service.url}/api/v2/balance/movements`, headers: { 'x-api-key': merchant.apiKey } };
    await autocannon({ ...page, connections: LOAD_CONNECTIONS, duration: 2 }); // JIT, pools and plans warm
    await autocannon({ ...roundRobinPk(bare.url), connections: LOAD_CONNECTIONS, duration: 2 });
    const rounds: Array<{ ceiling: autocannon.Result; page: autocannon.Result }> = [];
    for (let round = 1; round <= LOAD_ROUNDS; round++) {
      const runPage = () => checked('page 1', autocannon({ ...page, connections: LOAD_CONNECTIONS, duration: LOAD_SECONDS }));
      const runCeiling = () => checked('GET /pk/{id}', autocannon({ ...roundRobinPk(bare!.url), connections: LOAD_CONNECTIONS, duration: LOAD_SECONDS }));
      const [first, second] = round % 2 === 1 ? [await runCeiling(), await runPage()] : [await runPage(), await runCeiling()].reverse();
      rounds.push({ ceiling: first!, page: second! });
      process.stdout.write(`[movements] round ${round}/${LOAD_ROUNDS}: page 1 ${Math.round(second!.requests.average)} req/s, p99 ${second!.latency.p99} ms; `
        + `PK select ${Math.round(first!.requests.average)} req/s (${(second!.requests.average / first!.requests.average).toFixed(2)}×)\n`);
    }
    serviceUrl = service.url;
    const alone = await measure(['/api/v2/balance/movements'], merchant.apiKey, samplesPerCase * 2);
    const ratios = rounds.map((r) => r.page.requests.average / r.ceiling.requests.average);
    const middle = rounds[ratios.indexOf(median(ratios))]!;
    const label = `page 1 of a merchant with ${HISTORY.payments * 2 + HISTORY.transfers * 2} movements (a third of them fees)`;
    return [
      {
        group: 'history', name: `GET /api/v2/balance/movements, ${label}, ${LOAD_CONNECTIONS} connections`,
        value: Math.round(middle.page.requests.average), unit: 'req/s', p50Ms: middle.page.latency.p50, p99Ms: middle.page.latency.p99,
        percentiles: autocannonPercentiles(middle.page),
        ceiling: { name: 'PK select through pg behind Fastify (GET /pk/{id})', value: Math.round(middle.ceiling.requests.average) },
        target: { text: '≥ 0.30 × the PK select', met: median(ratios) >= 0.3 },
        note: `ratio per round ${ratios.map((r) => r.toFixed(2)).join(' / ')} (the two in turn, the order alternating); ${LOAD_CONNECTIONS} connections, `
          + `${LOAD_SECONDS} s per run, median of ${LOAD_ROUNDS} rounds; the history made through the API: ${HISTORY.payments} QR payments and `
          + `${HISTORY.transfers} transfers on a ${FEE_PLAN_TEXT} plan`,
      },
      {
        group: 'history', name: `GET /api/v2/balance/movements, ${label}, one request at a time`,
        value: round2(alone.p99), unit: 'ms', p50Ms: round2(alone.p50), p99Ms: round2(alone.p99), percentiles: alone.percentiles,
        target: { text: 'p99 < 20 ms', met: alone.p99 < 20 }, note: `${samplesPerCase * 2} requests`,
      },
    ];
  } finally {
    await service?.stop();
    await bare?.stop();
    await admin(`drop database if exists ${name} with (force)`);
  }
}

/** The load part's history, made through the API as a merchant's would be. */
const HISTORY = { payments: 1_000, transfers: 500 };

/** A merchant on the fee plan with HISTORY's payments (each with its fee) and transfers (each with its fee). */
async function makeHistory(url: string): Promise<{ businessCode: number; apiKey: string }> {
  const [merchant] = await createMerchants(url, ADMIN_TOKEN, 1, 'Bench history', 1, FEE_PLAN_BODY);
  const headers = { 'content-type': 'application/json', 'x-api-key': merchant!.apiKey };
  const send = async (path: string, body: unknown, extra: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
    if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
    return response.json() as Promise<{ id: string }>;
  };
  const qr = await send('/api/v2/simple-qrs', { business_code: merchant!.businessCode, amount: '10.50', is_multi_use: true, description: 'bench history' });
  const inParallel = async (count: number, one: () => Promise<unknown>) => {
    for (let i = 0; i < count; i += 10) await Promise.all(Array.from({ length: Math.min(10, count - i) }, one));
  };
  await inParallel(HISTORY.payments, () => send(`/api/v2/sandbox/simple-qrs/${qr.id}/payments`, {}));
  await inParallel(HISTORY.transfers, () => send('/api/v2/transfers', {
    business_code: merchant!.businessCode, amount: '1.00', currency: 'BOB', reference: 'bench history',
    destination: { type: 'bank_account', bank_code: 1001, account_number: '1000-2000-3000', account_titular: 'Bench Payee' },
  }, { 'idempotency-key': randomUUID() }));
  return merchant!;
}

async function checked(label: string, run: Promise<autocannon.Result>): Promise<autocannon.Result> {
  const result = await run;
  // An error answer is cheaper than the real one: a run with any would flatter the figure.
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
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
