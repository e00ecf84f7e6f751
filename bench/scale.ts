// Scaling benchmarks (BENCHMARKS.md, groups `scale` and `replica`). Each figure has a baseline measured in
// the same run. The two are alternated in rounds (AB, then BA, …) so the noise of this shared machine, and
// the tables growing run after run, fall on both alike, and medians are reported:
//   1. split roles: two ROLE=api processes plus one ROLE=worker against one ROLE=all process, on a scratch
//      database of BENCH_DATABASE_URL's server: GET /api/v2/simple-qrs/{id} (200 QRs round-robin) and
//      POST /api/v2/transfers (50 funded merchants, a fresh Idempotency-Key each), 32 connections in all;
//   2. read replica: on a throwaway primary and its streaming standby (faults/cluster.ts; the shared server
//      is never stopped or reconfigured), GET /api/v2/balance/movements over 20,000 movements with
//      DATABASE_REPLICA_URL against without, and how long a new QR takes to show in the list (read from
//      the replica) under a steady write load, while GET by id (read from the primary) finds it at once.
//
//   npx tsx bench/scale.ts
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_DURATION=8 BENCH_ROUNDS=3 npx tsx bench/scale.ts
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { Cluster } from '../faults/cluster.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import * as ledger from '../src/ledger/service.ts';
import { centavos } from '../src/money.ts';
import { seedHistory } from '../test/helpers/journal-seed.ts';
import { autocannonPercentiles, median, reportFigures, samplePercentiles } from './lib/figures.ts';
import { transferRequests } from './lib/requests.ts';
import { startBenchService, type BenchService } from './lib/service.ts';
import { adminQuery } from './scratch-database.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.env.BENCH_DURATION ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';
/** HTTP connections of every throughput run, split evenly over the API processes that serve it. */
const CONNECTIONS = 32;
/** Before each measured run: JIT, pools and caches of a freshly started process warm up. */
const WARM_UP_SECONDS = 2;
const QR_COUNT = 200;
const TRANSFER_MERCHANTS = 50;
const MOVEMENTS = 20_000;
const MOVEMENT_PAGES = 100;
/** The steady write load under which the list's visibility lag is measured, spread over LAG_WRITERS merchants. */
const LAG_WRITE_RATE = 100;
const LAG_WRITERS = 10;
const LAG_PROBES = 100;
const LAG_PROBE_EVERY_MS = 100;
/** A probe whose QR the list has not shown by then counts as missing. */
const LAG_GIVE_UP_MS = 10_000;
const cores = os.availableParallelism();

const say = (line: string) => process.stdout.write(`[scale] ${line}\n`);
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

// ---- Interruption. SIGINT (Ctrl-C, or bench/run.ts) stops the load and the services running now; the step in
// flight then fails, and each part's `finally` still drops its database or removes its clusters.

const running = { services: new Set<BenchService>(), loads: new Set<autocannon.Instance>() };
let interrupted = false;

class Interrupted extends Error {
  constructor() {
    super('interrupted by SIGINT');
  }
}

process.on('SIGINT', () => {
  if (interrupted) return;
  interrupted = true;
  say('SIGINT: stopping the load and the services, then cleaning up…');
  for (const instance of running.loads) instance.stop();
  for (const service of running.services) void service.stop();
});

function unlessInterrupted(): void {
  if (interrupted) throw new Interrupted();
}

/** The compiled service on a free port (bench/lib/service.ts), known to the SIGINT handler until stopped. */
async function startService(env: Record<string, string>): Promise<BenchService> {
  unlessInterrupted();
  const service = await startBenchService({ ADMIN_TOKEN, ...env });
  running.services.add(service);
  const stop = async () => {
    running.services.delete(service);
    await service.stop();
  };
  if (interrupted) { // SIGINT came while it started: the handler did not know it yet
    await stop();
    throw new Interrupted();
  }
  return { ...service, stop };
}

// ---- The API, as a merchant and the operator call it.

interface Merchant { businessCode: number; apiKey: string }

async function call(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const response = await fetch(url, {
    method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A merchant created through the operator API, with ACH on (transfers need it). */
async function createMerchant(service: BenchService, name: string): Promise<Merchant> {
  const body = await call('POST', `${service.url}/admin/v1/merchants`, { authorization: `Bearer ${ADMIN_TOKEN}` }, { name, ach_enabled: true });
  return { businessCode: body.business_code, apiKey: body.api_key };
}

async function createMerchants(service: BenchService, count: number, prefix: string): Promise<Merchant[]> {
  const merchants: Merchant[] = [];
  for (let i = 0; i < count; i++) merchants.push(await createMerchant(service, `${prefix} ${i}`));
  return merchants;
}

async function createQr(service: BenchService, merchant: Merchant): Promise<string> {
  const body = { business_code: merchant.businessCode, amount: 150.5, description: 'Pedido 42', qr_expiration: '+1d' };
  return (await call('POST', `${service.url}/api/v2/simple-qrs`, { 'x-api-key': merchant.apiKey }, body)).id;
}

/**
 * Credits each merchant 1,000,000.00 BOB straight through the ledger, as a payment would (bench/transfers.ts
 * does the same): production builds have no fixture route, and every transfer of the run must be covered.
 */
async function fund(databaseUrl: string, merchants: Merchant[]): Promise<void> {
  const db = await openPostgres({ url: databaseUrl, maxConnections: 1 });
  try {
    for (const merchant of merchants) {
      await db.transaction((tx) => ledger.credit(tx, {
        businessCode: merchant.businessCode, amountCentavos: centavos(100_000_000), reference: 'bench funding', snapshot: {}, now: new Date(),
      }));
    }
  } finally {
    await db.close();
  }
}

// ---- Load. A `Requests` makes the request list of one autocannon instance: each instance round-robins on its own.

type Requests = () => autocannon.Request[];

/** GET /api/v2/simple-qrs/{id} over `ids`, round-robin: a POS polling its open QRs. */
function qrReads(ids: string[], merchant: Merchant): Requests {
  return () => {
    let next = 0;
    return [{
      method: 'GET',
      setupRequest: (request) => ({ ...request, path: `/api/v2/simple-qrs/${ids[next++ % ids.length]}`, headers: { 'x-api-key': merchant.apiKey } }),
    }];
  };
}

/** POST /api/v2/transfers of 1.00, round-robin over `merchants`, each with a fresh Idempotency-Key. */
function transferWrites(merchants: Merchant[]): Requests {
  return () => transferRequests(merchants);
}

/** GET /api/v2/balance/movements?page=1…MOVEMENT_PAGES, round-robin: a dashboard paging through a history. */
function movementPages(merchant: Merchant): Requests {
  return () => {
    let next = 0;
    return [{
      method: 'GET',
      setupRequest: (request) => ({ ...request, path: `/api/v2/balance/movements?page=${(next++ % MOVEMENT_PAGES) + 1}`, headers: { 'x-api-key': merchant.apiKey } }),
    }];
  };
}

interface Load { done: Promise<autocannon.Result>; stop(): void }

/** An autocannon run against `url` that can be stopped early (by the caller, or by SIGINT). */
function startLoad(url: string, options: Omit<autocannon.Options, 'url'>): Load {
  let instance!: autocannon.Instance;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon({ url, ...options }, (error, result) => {
      running.loads.delete(instance);
      if (error) reject(error);
      else resolve(result);
    });
  });
  running.loads.add(instance);
  return { done, stop: () => instance.stop() };
}

interface Measured {
  /** 2xx answers per second. */
  perSecond: number;
  p50: number;
  p99: number;
  percentiles: Array<[number, number]>;
  /** Non-2xx answers, errors and timeouts: a sound run has none. */
  failed: number;
}

/**
 * `requests` against every URL at once, CONNECTIONS split evenly over them. Two instances' figures are
 * combined as 2xx per second summed and, at each percentile, the worse latency of the two: an upper bound
 * of the merged distribution's percentile (autocannon hands out no histogram to merge).
 */
async function measure(urls: string[], requests: Requests, durationSeconds = seconds): Promise<Measured> {
  const results = await Promise.all(urls.map((url) => startLoad(url, { connections: CONNECTIONS / urls.length, duration: durationSeconds, requests: requests() }).done));
  unlessInterrupted();
  const curves = results.map(autocannonPercentiles);
  return {
    perSecond: Math.round(sum(results.map((result) => result['2xx'] / result.duration))),
    p50: Math.max(...results.map((result) => result.latency.p50)),
    p99: Math.max(...results.map((result) => result.latency.p99)),
    percentiles: curves[0]!.map(([p], i) => [p, Math.max(...curves.map((curve) => curve[i]![1]))]),
    failed: sum(results.map((result) => result.non2xx + result.errors + result.timeouts)),
  };
}

/** A warm-up, then the measured run. */
async function warmAndMeasure(urls: string[], requests: Requests): Promise<Measured> {
  await measure(urls, requests, WARM_UP_SECONDS);
  return measure(urls, requests);
}

/** The median of each figure over the rounds (the plot: each percentile's median); failures summed. */
function medianOf(runs: Measured[]): Measured {
  return {
    perSecond: median(runs.map((run) => run.perSecond)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    percentiles: runs[0]!.percentiles.map(([p], i) => [p, median(runs.map((run) => run.percentiles[i]![1]))]),
    failed: sum(runs.map((run) => run.failed)),
  };
}

/** B / A of each round, for the note: the spread the medians hide. */
function ratiosPerRound(b: Measured[], a: Measured[]): string {
  return b.map((run, i) => (run.perSecond / a[i]!.perSecond).toFixed(2)).join(' / ');
}

/** Rounds alternate which side goes first (AB, BA, AB…), so a trend over the run falls on both alike. */
function inRoundOrder<T>(round: number, pair: [T, T]): [T, T] {
  return round % 2 === 0 ? pair : [pair[1], pair[0]];
}

const machine = `${cores} cores (os.availableParallelism()), shared by autocannon, PostgreSQL and the service's processes`;
const method = `${rounds} rounds of ${seconds} s after ${WARM_UP_SECONDS} s of warm-up, alternating (AB, BA, …); medians`;

// ---- 1. Split roles.

type Layout = 'A' | 'B';
const ROLES: Record<Layout, string[]> = { A: ['all'], B: ['worker', 'api', 'api'] };

interface Deployment { urls: string[]; stop(): Promise<void> }

/** A: one ROLE=all process; B: one ROLE=worker and two ROLE=api processes; all on `databaseUrl`. */
async function deploy(layout: Layout, databaseUrl: string): Promise<Deployment> {
  const services: BenchService[] = [];
  const stop = async () => {
    await Promise.all(services.map((service) => service.stop()));
  };
  try {
    for (const role of ROLES[layout]) services.push(await startService({ DATABASE_URL: databaseUrl, ROLE: role }));
  } catch (error) {
    await stop();
    throw error;
  }
  // Only the API processes take load (a worker serves /healthz, /readyz and /metrics only).
  return { urls: services.filter((_, i) => ROLES[layout][i] !== 'worker').map((service) => service.url), stop };
}

/**
 * The data both layouts serve, created once through a ROLE=all process (whose start migrates the scratch
 * database) and then stopped: TRANSFER_MERCHANTS funded merchants, the first of them with QR_COUNT QRs.
 */
async function seedSplitRoles(databaseUrl: string): Promise<{ reads: Requests; writes: Requests }> {
  const service = await startService({ DATABASE_URL: databaseUrl, ROLE: 'all' });
  try {
    const merchants = await createMerchants(service, TRANSFER_MERCHANTS, 'Bench');
    const qrIds: string[] = [];
    for (let i = 0; i < QR_COUNT; i++) qrIds.push(await createQr(service, merchants[0]!));
    await fund(databaseUrl, merchants);
    return { reads: qrReads(qrIds, merchants[0]!), writes: transferWrites(merchants) };
  } finally {
    await service.stop();
  }
}

async function splitRoles(): Promise<void> {
  const name = `mps_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const databaseUrl = databaseUrlWithName(serverUrl, name);
  try {
    say(`split roles: scratch database ${name}; ${TRANSFER_MERCHANTS} merchants, ${QR_COUNT} QRs`);
    const { reads, writes } = await seedSplitRoles(databaseUrl);
    const runs = { A: { reads: [] as Measured[], writes: [] as Measured[] }, B: { reads: [] as Measured[], writes: [] as Measured[] } };
    for (let round = 0; round < rounds; round++) {
      for (const layout of inRoundOrder<Layout>(round, ['A', 'B'])) {
        // Fresh processes for every run, and only one layout up at a time: an idle ROLE=all process
        // beside B (or B's worker beside A) would poll its jobs on the cores the measured side needs.
        const deployment = await deploy(layout, databaseUrl);
        try {
          const read = await warmAndMeasure(deployment.urls, reads);
          const write = await warmAndMeasure(deployment.urls, writes);
          runs[layout].reads.push(read);
          runs[layout].writes.push(write);
          say(`round ${round + 1}, ${layout} (ROLE=${ROLES[layout].join(' + ROLE=')}): GET ${read.perSecond} req/s, p99 ${read.p99} ms; `
            + `POST transfers ${write.perSecond}/s, p99 ${write.p99} ms${read.failed + write.failed > 0 ? `; ${read.failed + write.failed} failed` : ''}`);
        } finally {
          await deployment.stop();
        }
      }
    }
    const [a, b] = [{ reads: medianOf(runs.A.reads), writes: medianOf(runs.A.writes) }, { reads: medianOf(runs.B.reads), writes: medianOf(runs.B.writes) }];
    const split = `B: one autocannon of ${CONNECTIONS / 2} connections per ROLE=api process, run together (req/s summed, the worse latency at each percentile); `
      + 'every run on freshly started processes, one layout up at a time, B\'s worker idle but polling as in production';
    const noteOf = (kind: 'reads' | 'writes') => `${machine}. ${method}. ${split}. B / A per round: ${ratiosPerRound(runs.B[kind], runs.A[kind])}. `
      + `One ROLE=all process: p50 ${a[kind].p50} ms, p99 ${a[kind].p99} ms. Failed requests: A ${a[kind].failed}, B ${b[kind].failed}.`;
    const ceiling = (kind: 'reads' | 'writes') => ({ name: 'one ROLE=all process', value: a[kind].perSecond });
    reportFigures([
      {
        group: 'scale', name: `GET /api/v2/simple-qrs/{id}, ${QR_COUNT} QRs round-robin, ${CONNECTIONS} connections: 2 × ROLE=api + ROLE=worker`,
        value: b.reads.perSecond, unit: 'req/s', p50Ms: b.reads.p50, p99Ms: b.reads.p99, ceiling: ceiling('reads'), percentiles: b.reads.percentiles,
        target: { text: '≥ 1.6× one process when the machine has the cores', met: b.reads.perSecond >= 1.6 * a.reads.perSecond },
        note: noteOf('reads'),
      },
      {
        group: 'scale', name: `POST /api/v2/transfers, ${TRANSFER_MERCHANTS} merchants, ${CONNECTIONS} connections: 2 × ROLE=api + ROLE=worker`,
        value: b.writes.perSecond, unit: 'transfers/s', p50Ms: b.writes.p50, p99Ms: b.writes.p99, ceiling: ceiling('writes'), percentiles: b.writes.percentiles,
        note: noteOf('writes'),
      },
    ]);
  } finally {
    await adminQuery(serverUrl, `drop database if exists ${name} with (force)`);
  }
}

// ---- 2. Read replica.

async function sql<Row>(url: string, text: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** Waits until the standby has replayed all the primary wrote so far: the seed must be on both before either is measured. */
async function replayed(primary: Cluster, standby: Cluster): Promise<void> {
  const lsn = (await sql<{ lsn: string }>(primary.url(), 'select pg_current_wal_lsn()::text as lsn'))[0]!.lsn;
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    const [row] = await sql<{ caught: boolean }>(standby.url(), 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as caught', [lsn]);
    if (row?.caught) return;
    await sleep(100);
  }
  throw new Error(`the standby did not replay up to ${lsn} within 60 s`);
}

/**
 * One merchant with MOVEMENTS movements (seeded set-based by test/helpers/journal-seed.ts, consistent with
 * the ledger: 20,000 credits through HTTP would take longer than the measurement), whose QRs also probe the
 * lag; and LAG_WRITERS funded merchants for the write load.
 */
async function seedReplica(service: BenchService, databaseUrl: string): Promise<{ merchant: Merchant; writers: Merchant[] }> {
  const merchant = await createMerchant(service, 'Bench history');
  const writers = await createMerchants(service, LAG_WRITERS, 'Bench writer');
  await fund(databaseUrl, writers);
  const db = await openPostgres({ url: databaseUrl, maxConnections: 1, queryTimeoutMs: 0 });
  try {
    const spacingMs = 60_000;
    await seedHistory(db, merchant.businessCode, { count: MOVEMENTS, start: new Date(Date.now() - MOVEMENTS * spacingMs), spacingMs, transferEvery: 3 });
    await db.query('analyze');
  } finally {
    await db.close();
  }
  return { merchant, writers };
}

interface Visibility {
  /** From a QR's 201 to the first list answer showing it, ms. */
  lagsMs: number[];
  /** QRs the list showed at the first poll. */
  atFirstPoll: number;
  /** QRs the list had not shown after LAG_GIVE_UP_MS. */
  missing: number;
  /** GET /api/v2/simple-qrs/{id} of a just-created QR that did not answer 200. */
  byIdFailures: number;
  /** The write load's 2xx per second, and its failed requests. */
  writesPerSecond: number;
  writesFailed: number;
}

/** The latency at percentile `p` of a samplePercentiles curve. */
function at(curve: Array<[number, number]>, p: number): number {
  return curve.find(([q]) => q === p)![1];
}

/**
 * When the merchant's newest listed QR is `id`, polled back to back, and how many polls that took (the
 * first showing it means the replica was no later than one round trip); null after LAG_GIVE_UP_MS.
 */
async function firstListed(service: BenchService, merchant: Merchant, id: string): Promise<{ at: number; polls: number } | null> {
  const deadline = performance.now() + LAG_GIVE_UP_MS;
  for (let polls = 1; performance.now() < deadline; polls++) {
    const page = await call('GET', `${service.url}/api/v2/simple-qrs?per_page=1`, { 'x-api-key': merchant.apiKey });
    if (page.data[0]?.id === id) return { at: performance.now(), polls };
  }
  return null;
}

/**
 * Whether `service`'s list of QRs reads the standby: with its replay paused, a QR just created must be
 * missing from the list. Otherwise the "lag" measured would be the primary's, which has none.
 */
async function listReadsReplica(service: BenchService, standby: Cluster, merchant: Merchant): Promise<boolean> {
  await standby.pauseReplay();
  try {
    // pg_wal_replay_pause() only asks: replay stops at its next record.
    while ((await sql<{ state: string }>(standby.url(), 'select pg_get_wal_replay_pause_state() as state'))[0]!.state !== 'paused') await sleep(10);
    const id = await createQr(service, merchant);
    const page = await call('GET', `${service.url}/api/v2/simple-qrs?per_page=1`, { 'x-api-key': merchant.apiKey });
    return page.data[0]?.id !== id;
  } finally {
    await standby.resumeReplay();
  }
}

/**
 * Under LAG_WRITE_RATE transfers/s (autocannon at a fixed rate), creates a QR every LAG_PROBE_EVERY_MS, one
 * probe at a time, and times how long the list takes to show it while GET by id asks for it at once.
 */
async function visibility(service: BenchService, merchant: Merchant, writers: Merchant[]): Promise<Visibility> {
  const writes = startLoad(service.url, { connections: LAG_WRITERS, overallRate: LAG_WRITE_RATE, duration: 3_600, requests: transferWrites(writers)() });
  const probes: Visibility = { lagsMs: [], atFirstPoll: 0, missing: 0, byIdFailures: 0, writesPerSecond: 0, writesFailed: 0 };
  try {
    await sleep(1_000); // the write load settles before the first probe
    const started = performance.now();
    for (let i = 0; i < LAG_PROBES; i++) {
      unlessInterrupted();
      await sleep(Math.max(0, started + i * LAG_PROBE_EVERY_MS - performance.now()));
      const id = await createQr(service, merchant);
      const created = performance.now();
      const [byId, listed] = await Promise.all([
        fetch(`${service.url}/api/v2/simple-qrs/${id}`, { headers: { 'x-api-key': merchant.apiKey } }).then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        }),
        firstListed(service, merchant, id),
      ]);
      if (byId !== 200) probes.byIdFailures++;
      if (listed === null) {
        probes.missing++;
      } else {
        probes.lagsMs.push(listed.at - created);
        if (listed.polls === 1) probes.atFirstPoll++;
      }
    }
  } finally {
    writes.stop();
    const result = await writes.done;
    probes.writesPerSecond = Math.round(result['2xx'] / result.duration);
    probes.writesFailed = result.non2xx + result.errors + result.timeouts;
  }
  return probes;
}

/** Reports each figure as soon as it is measured: a failure of the lag's check keeps the movements figure. */
async function readReplica(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-bench-scale-'));
  const clusters: Cluster[] = []; // the standby first: destroyed before its primary
  const services: BenchService[] = [];
  try {
    const primary = await Cluster.create(dir);
    clusters.push(primary);
    await primary.adminQuery('create database mps');
    const standby = await Cluster.standbyOf(primary, dir);
    clusters.unshift(standby);
    say(`read replica: throwaway primary on 127.0.0.1:${primary.port}, its streaming standby on ${standby.port} (${dir})`);
    // Both services stay up, idle while the other is measured: each idles alike, so neither is favoured.
    // The first start migrates; the second finds the database migrated.
    const direct = await startService({ DATABASE_URL: primary.url('mps') });
    services.push(direct);
    const replicated = await startService({ DATABASE_URL: primary.url('mps'), DATABASE_REPLICA_URL: standby.url('mps') });
    services.push(replicated);
    const { merchant, writers } = await seedReplica(direct, primary.url('mps'));
    await replayed(primary, standby);
    say(`seeded ${MOVEMENTS} movements; the standby has replayed them`);

    const pages = movementPages(merchant);
    const runs = { direct: [] as Measured[], replicated: [] as Measured[] };
    for (let round = 0; round < rounds; round++) {
      for (const [side, service] of inRoundOrder(round, [['direct', direct], ['replicated', replicated]] as const)) {
        const run = await warmAndMeasure([service.url], pages);
        runs[side].push(run);
        say(`round ${round + 1}, movements ${side === 'direct' ? 'without a replica' : 'with DATABASE_REPLICA_URL'}: ${run.perSecond} req/s, p99 ${run.p99} ms${run.failed > 0 ? `; ${run.failed} failed` : ''}`);
      }
    }
    const [without, withReplica] = [medianOf(runs.direct), medianOf(runs.replicated)];
    reportFigures([{
      group: 'replica', name: `GET /api/v2/balance/movements?page=1…${MOVEMENT_PAGES}, ${MOVEMENTS.toLocaleString('en')} movements, ${CONNECTIONS} connections, with DATABASE_REPLICA_URL`,
      value: withReplica.perSecond, unit: 'req/s', p50Ms: withReplica.p50, p99Ms: withReplica.p99, percentiles: withReplica.percentiles,
      ceiling: { name: 'the same service without a replica', value: without.perSecond },
      note: `${machine}, and here the standby too: a replica on the same cores adds no CPU, it moves the reads' work to another server process. `
        + `${method}; both services up, the idle one polling its jobs. With / without per round: ${ratiosPerRound(runs.replicated, runs.direct)}. `
        + `Without a replica: p50 ${without.p50} ms, p99 ${without.p99} ms. Failed requests: with ${withReplica.failed}, without ${without.failed}.`,
    }]);

    if (!await listReadsReplica(replicated, standby, merchant)) {
      throw new Error('GET /api/v2/simple-qrs showed a QR the paused standby had not replayed: the list does not read the replica, so its lag cannot be measured');
    }

    // Without a replica the list reads the primary, so its "lag" is the probe's own resolution (the polls'
    // round trips under the same load): the baseline of the figure with the replica.
    const resolution = await visibility(direct, merchant, writers);
    const lag = await visibility(replicated, merchant, writers);
    if (lag.lagsMs.length === 0 || resolution.lagsMs.length === 0) throw new Error('no probe QR ever showed in the list');
    const [curve, baseline] = [samplePercentiles(lag.lagsMs), samplePercentiles(resolution.lagsMs)];
    say(`visibility: with the replica p50 ${at(curve, 50)} ms, p99 ${at(curve, 99)} ms; without p50 ${at(baseline, 50)} ms, p99 ${at(baseline, 99)} ms`);
    const byIdFailures = lag.byIdFailures + resolution.byIdFailures;
    reportFigures([
      {
        group: 'replica', name: 'A new QR in GET /api/v2/simple-qrs?per_page=1 (read from the replica), after its POST answered',
        value: at(curve, 99), unit: 'ms', p50Ms: at(curve, 50), p99Ms: at(curve, 99), percentiles: curve,
        target: { text: 'GET /api/v2/simple-qrs/{id} right after its POST: 200 every time (it reads the primary)', met: byIdFailures === 0 },
        note: `${LAG_PROBES} QRs, one every ${LAG_PROBE_EVERY_MS} ms, each timed from its 201 to the first list answer showing it, the list polled back to back, `
          + `under a steady ${lag.writesPerSecond} transfers/s (autocannon at a fixed ${LAG_WRITE_RATE}/s; ${lag.writesFailed} failed). `
          + `The poll's round trip is the resolution: without a replica the same probe gives p50 ${at(baseline, 50)} ms, p99 ${at(baseline, 99)} ms. `
          + `Listed at the first poll: ${lag.atFirstPoll} of ${LAG_PROBES} (without a replica ${resolution.atFirstPoll}); not within ${LAG_GIVE_UP_MS / 1000} s: ${lag.missing}. GET by id of the just-created QR: ${byIdFailures} of ${2 * LAG_PROBES} not 200 (both services).`,
      },
    ]);
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    for (const cluster of clusters) for (const problem of await cluster.destroy()) say(`clean-up: ${problem}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!(seconds > 0) || !Number.isInteger(rounds) || rounds < 1) throw new Error('BENCH_DURATION must be a number of seconds above 0, BENCH_ROUNDS a whole number from 1');
  say(`${cores} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}; ${seconds} s per run, ${rounds} rounds`);
  // Each part reports its figures as soon as they are measured: a later failure keeps them.
  await splitRoles();
  await readReplica();
}

main().catch((error: unknown) => {
  process.stderr.write(error instanceof Interrupted ? '[scale] interrupted; cleaned up\n' : `${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = error instanceof Interrupted ? 130 : 1;
});
