// Load test of POST /api/v2/transfers on PostgreSQL (RATE_LIMIT=off), against a pgbench baseline run in
// the same invocation: one debit (the ledger's guarded UPDATE of a balance) plus one INSERT per transaction,
// which is the least any transfer must cost the database. Reports the ratio app / baseline for many
// merchants, and throughput and p99 when every transfer comes from one merchant (one hot balance row).
// The many-merchants load runs twice a round: on merchants without fees, and on as many others on a price
// plan (bench/lib/fees.ts), whose every transfer also posts a fee movement and entry.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/transfers.ts
//
// Options (environment): BENCH_DURATION seconds per phase (default 10), BENCH_CONNECTIONS HTTP connections
// (default 32), BENCH_MERCHANTS (default 200), BENCH_PGBENCH_CLIENTS (default 10, the service's pool size),
// BENCH_ROUNDS (default 3: baseline, many merchants and hot merchant in turn; the figures are medians).
// Each round also sends the many-merchants load over twice the connections: no target, it shows how the
// throughput depends on how many requests are waiting to share a batch. Each load also reports where the
// machine's CPU went (bench/lib/cpu.ts): the service, PostgreSQL, this process as load generator, idle.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import * as ledger from '../src/ledger/service.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import { describeCpu, measureCpu, type CpuSplit } from './lib/cpu.ts';
import { autocannonPercentiles, median, reportFigures, type Figure } from './lib/figures.ts';
import { FEE_PLAN_BODY, FEE_PLAN_TEXT } from './lib/fees.ts';
import { createMerchants, fundMerchants } from './lib/merchants.ts';
import { createDebitInsertTables, DEBIT_INSERT_CEILING, runDebitInsert } from './lib/pgbench.ts';
import { transferRequests, type BenchMerchant as Merchant } from './lib/requests.ts';
import { startBenchService, type BenchService } from './lib/service.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const durationSeconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const merchantCount = Number(process.env.BENCH_MERCHANTS ?? 200);
const pgbenchClients = Number(process.env.BENCH_PGBENCH_CLIENTS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';
/** The service's address and process, once started. */
let serviceUrl = '';
let servicePid: number | undefined;

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

interface Load { created: number; perSecond: number; p99Ms: number; p50Ms: number; other: number; percentiles: Array<[number, number]>; cpu: CpuSplit | null }

async function loadTransfers(merchants: Merchant[], over = connections): Promise<Load> {
  const cpu = measureCpu(servicePid);
  const result = await autocannon({
    url: `${serviceUrl}`,
    connections: over,
    duration: durationSeconds,
    requests: transferRequests(merchants),
  });
  const created = result['2xx'];
  return {
    created, perSecond: created / durationSeconds, p99Ms: result.latency.p99, p50Ms: result.latency.p50, other: result.non2xx + result.errors,
    percentiles: autocannonPercentiles(result),
    cpu: cpu(),
  };
}

/** One round: the baseline and each load measured against it. */
interface Measured { baseline: number; many: Load; withFees: Load; hot: Load | null; wide: Load | null }

async function main(): Promise<void> {
  const name = `mps_bench_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  const databaseUrl = databaseUrlWithName(serverUrl, name);
  let service: BenchService | null = null;
  try {
    const db = await openPostgres({ url: databaseUrl, queryTimeoutMs: 0 }); // the ledger check over every transfer may take longer than a request may
    await migrate(db);
    service = await startBenchService({ DATABASE_URL: databaseUrl, ADMIN_TOKEN });
    serviceUrl = service.url;
    servicePid = service.process.pid;
    const merchants = await createMerchants(serviceUrl, ADMIN_TOKEN, merchantCount);
    // As many again on a price plan: each of their transfers also posts its fee movement and entry.
    const charged = await createMerchants(serviceUrl, ADMIN_TOKEN, merchantCount, 'Bench with fees', 1, FEE_PLAN_BODY);
    await fundMerchants(db, [...merchants, ...charged]);
    // The baseline works on copies of the tables, so the service's ledger stays consistent.
    await createDebitInsertTables(db);
    const first = merchants[0]!.businessCode;
    const last = merchants.at(-1)!.businessCode;
    if (charged[0]!.businessCode < last) throw new Error('the merchants with fees were meant to come after the others');
    // Each round measures the baseline and both loads back to back, so every ratio compares runs minutes apart at most.
    const measured: Measured[] = [];
    for (let round = 1; round <= rounds; round++) {
      const baselineCpu = measureCpu(undefined);
      const baseline = await runDebitInsert({ databaseUrl, first, last, clients: pgbenchClients, seconds: durationSeconds });
      const pgbenchCpu = baselineCpu();
      // Fees off and on one after the other, in alternating order from round to round.
      const many = round % 2 === 1 ? await loadTransfers(merchants) : null;
      const withFees = await loadTransfers(charged);
      const manyOrLater = many ?? await loadTransfers(merchants);
      // BENCH_SKIP_HOT=1 measures only the many-merchants case (e.g. while profiling).
      const hot = process.env.BENCH_SKIP_HOT ? null : await loadTransfers(merchants.slice(0, 1));
      const wide = process.env.BENCH_SKIP_HOT ? null : await loadTransfers(merchants, 2 * connections);
      measured.push({ baseline, many: manyOrLater, withFees, hot, wide });
      process.stdout.write(`[transfers] round ${round}/${rounds}: pgbench ${baseline.toFixed(0)} tps; many merchants ${manyOrLater.perSecond.toFixed(0)}/s (${(manyOrLater.perSecond / baseline).toFixed(2)}×)`
        + `; with fees ${withFees.perSecond.toFixed(0)}/s (${(withFees.perSecond / baseline).toFixed(2)}×)`
        + `${hot ? `; hot merchant ${hot.perSecond.toFixed(0)}/s (${(hot.perSecond / baseline).toFixed(2)}×)` : ''}`
        + `${wide ? `; many merchants over ${2 * connections} connections ${wide.perSecond.toFixed(0)}/s (${(wide.perSecond / baseline).toFixed(2)}×)` : ''}\n`
        + `[transfers]   pgbench: idle ${pgbenchCpu?.idle ?? '?'} cores of ${os.cpus().length} (its connections are too short-lived to split by process)\n`
        + `[transfers]   many merchants: ${describeCpu(manyOrLater.cpu)}\n`);
    }
    // Rows committed by one transaction share its xmin: transfers per transaction is the mean batch size.
    const perTransaction = async (ofMerchants: Merchant[]): Promise<string> => {
      const { rows: [batches] } = await db.query<{ transfers: number; transactions: number }>(
        'select count(*)::int8 as transfers, count(distinct xmin::text)::int8 as transactions from transfers where business_code = any($1::bigint[])',
        [ofMerchants.map((merchant) => merchant.businessCode)],
      );
      return (batches!.transfers / Math.max(1, batches!.transactions)).toFixed(1);
    };
    // The hot merchant is merchants[0]; the many-merchants load also sends some of its transfers, the
    // others' are the many-merchants load's alone.
    const batchSizes = { many: await perTransaction(merchants.slice(1)), withFees: await perTransaction(charged), hot: await perTransaction(merchants.slice(0, 1)) };
    const { rows } = await db.query<{ total: number }>('select count(*) as total from transfers');
    // Statistics first: the tables grew from nothing during the load, faster than autovacuum analyzes them,
    // and the check's joins planned on empty-table estimates crawl.
    await db.query('analyze');
    const check = await ledger.checkLedger(db);
    await db.close();

    const books = check.violations.length === 0 && check.problems.length === 0;
    const answered = measured.reduce((sum, m) => sum + m.many.created + m.withFees.created + (m.hot?.created ?? 0) + (m.wide?.created ?? 0), 0);
    process.stdout.write(`[transfers] machine: ${os.cpus().length} cores, load average ${os.loadavg().map((n) => n.toFixed(1)).join(' ')}\n`);
    // autocannon counts answers received within the duration; requests still in flight at the end are
    // committed but not counted, so the table holds up to `connections` more rows per phase.
    process.stdout.write(`[transfers] in the database: ${rows[0]!.total} (${answered} 201s counted); ledger check ${books ? 'passes' : 'FAILS'}\n`);
    if (!books) throw new Error('the ledger check failed after the load: the books do not close');
    reportFigures(figuresOf(measured, batchSizes));
  } finally {
    await service?.stop();
    await admin((client) => client.query(`drop database if exists ${name} with (force)`));
  }
}

/** The median round of each load, by its ratio to the pgbench baseline of its own round. */
function figuresOf(measured: Measured[], batchSizes: { many: string; withFees: string; hot: string }): Figure[] {
  const ceiling = DEBIT_INSERT_CEILING;
  const figure = (name: string, loads: Array<{ baseline: number; load: Load }>, target: number | null, note: string, over = connections): Figure => {
    const ratios = loads.map(({ baseline, load }) => load.perSecond / baseline);
    const middle = loads[ratios.indexOf(median(ratios))]!;
    return {
      group: 'transfers', name, value: Math.round(middle.load.perSecond), unit: 'transfers/s',
      p50Ms: middle.load.p50Ms, p99Ms: middle.load.p99Ms, percentiles: middle.load.percentiles,
      ceiling: { name: ceiling, value: Math.round(middle.baseline) },
      ...(target === null ? {} : { target: { text: `≥ ${target.toFixed(2)} × ${ceiling}`, met: median(ratios) >= target } }),
      note: `${note}; ratio per round ${ratios.map((r) => r.toFixed(2)).join(' / ')}; ${over} connections, ${durationSeconds} s per run, pgbench ${pgbenchClients} clients; `
        + `that round's ${describeCpu(middle.load.cpu)}`,
    };
  };
  const figures = [figure(`POST /api/v2/transfers, ${merchantCount} merchants`, measured.map((m) => ({ baseline: m.baseline, load: m.many })), 0.35,
    `${batchSizes.many} transfers per transaction (group commit); no fees`),
  figure(`POST /api/v2/transfers, ${merchantCount} merchants, fees on`, measured.map((m) => ({ baseline: m.baseline, load: m.withFees })), 0.35,
    `${merchantCount} other merchants on a ${FEE_PLAN_TEXT} plan: each transfer also posts its fee movement and journal entry, `
    + `and needs amount + fee available; ${batchSizes.withFees} transfers per transaction; measured next to the line without fees, in alternating order`)];
  const hot = measured.filter((m) => m.hot !== null);
  if (hot.length > 0) figures.push(figure('POST /api/v2/transfers, one hot merchant', hot.map((m) => ({ baseline: m.baseline, load: m.hot! })), 0.15, 'one balance row: the transfers waiting for it share a batch, applied in arrival order under one lock; '
    + `${batchSizes.hot} transfers per transaction (mostly this load's; the many-merchants load sends it some)`));
  const wide = measured.filter((m) => m.wide !== null);
  if (wide.length > 0) {
    figures.push(figure(`POST /api/v2/transfers, ${merchantCount} merchants, ${2 * connections} connections`, wide.map((m) => ({ baseline: m.baseline, load: m.wide! })), null,
      `no target: the same load with twice the requests waiting to share a batch; what it gains over the ${connections}-connection line is `
      + 'throughput the service had the CPU for but not the waiting requests, each batch being six statements one after another', 2 * connections));
  }
  return figures;
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
