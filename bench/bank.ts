// A bank rail under load (BENCHMARKS.md, group `bank`), for the issue's bars: "A call to the bank never holds
// a database transaction, a row lock or a pooled connection" — with the bank answering every call in 5 s,
// GET /api/v2/simple-qrs/{id} and POST /api/v2/transfers keep their ratios to the same run's ceilings within
// 10 % of the sandbox rail's; and QR creation through the bank at its normal speed reaches 300 QRs/s.
//
// One run, on PostgreSQL, each service the compiled build (bench/lib/service.ts) on a scratch database of
// its own, the bank the simulator of simulators/baneco/ in a process of its own (bench/bank-simulator.ts:
// in this process it would share one thread with autocannon, and every generateQR draws a PNG):
//   1. QR creation at the bank's normal speed: a RAIL=baneco service with the production intervals (poll
//      30 s, batch 60 s; its poll reads each new QR once, as in production), POST /api/v2/simple-qrs
//      between two runs of bare Fastify GET /hello (bench/lib/bare-fastify.ts), ROUNDS rounds. Beside it,
//      single-thread rates of the two image steps: the simulator drawing a QR's PNG, the service decoding it.
//   2. a slow bank: a sandbox-rail service (SANDBOX_SETTLEMENT=off, as bench/transfers.ts) and a RAIL=baneco
//      service with BANECO_POLL_INTERVAL=1s and BANECO_BATCH_INTERVAL=1s, both up, whose 200 QRs were
//      issued by the bank at its normal speed; then every bank call is answered 5 s late. In each round,
//      the two services in turn (the order alternating from round to round): GET /api/v2/simple-qrs/{id}
//      between runs of GET /hello (and beside bare Fastify sending that rail's QR body, the like-for-like
//      ceiling: a bank QR carries the bank's PNG, about three times the sandbox's body), then
//      POST /api/v2/transfers between two runs of the pgbench debit + insert baseline (bench/lib/pgbench.ts).
//      Meanwhile the bank service's worker keeps a statusQR (the poll, one QR after another) and a batch
//      upload (the batch job, 500 transfers at a time; a backlog of PENDING transfers is topped up before
//      each round) waiting on the bank; the run reports how many were in flight on average during each of
//      its loads (from the service's own attempt log, rail_attempts) and the longest transaction
//      PostgreSQL saw open on each service's database (pg_stat_activity, every 250 ms).
// Each service figure is the median round by its ratio to the ceiling runs beside it; "bank ÷ sandbox" is
// the median of the rounds' quotients of the two services' ratios (the issue's bar: ≥ 0.90).
// Both services run with MODE=sandbox: RAIL=baneco with MODE=sandbox is how a team tries the bank with
// test keys (MODE=live needs its own keys). The simulator sends no callbacks and holds every batch item
// undecided (batchDecision "hold"), so neither service settles a transfer during the run; the bank
// service's batch job does turn its PENDING transfers into batches (IN_TRANSIT), work the sandbox rail
// does not have, during its own loads and the sandbox service's alike.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/bank.ts
// Options (environment): BENCH_DURATION seconds per run (5), BENCH_ROUNDS (3). About 4 minutes.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import QRCode from 'qrcode';
import type { Database } from '../src/db/database.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import { decodeBankQrImage } from '../src/qr/bank-image.ts';
import { emvPayload, qrPngBase64 } from '../simulators/baneco/emv.ts';
import { startBankSimulator, type BenchBankSimulator } from './lib/bank-simulator.ts';
import { startBareFastify, type BareFastify } from './lib/bare-fastify.ts';
import { describeCpu, measureCpu, type CpuSplit } from './lib/cpu.ts';
import { autocannonPercentiles, median, reportFigures, type Figure } from './lib/figures.ts';
import { createMerchants, fundMerchants } from './lib/merchants.ts';
import { createDebitInsertTables, DEBIT_INSERT_CEILING, runDebitInsert } from './lib/pgbench.ts';
import { qrReadRequests, transferRequests, type BenchMerchant } from './lib/requests.ts';
import { startBenchService, type BenchService } from './lib/service.ts';
import { adminQuery } from './scratch-database.ts';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** How late the slow bank answers every call. */
const BANK_DELAY_MS = 5_000;
const OPERATIONS = ['authenticate', 'generateQR', 'cancelQR', 'statusQR', 'paidQR', 'accountsHistory', 'batchUpload'] as const;
/** As bench/qr.ts (QR reads and creation) and bench/transfers.ts (transfers, merchants, pgbench clients). */
const HTTP_CONNECTIONS = 50;
/**
 * QR creation through the bank: fewer connections than bench/qr.ts's 50. Its answers take tens of ms
 * (the bank's round trip, then its image decoded), and autocannon drops the requests still in flight at a
 * run's end: 50 would under-count a 5 s run by up to a second's worth; 16 are plenty for 300 QRs/s.
 */
const CREATE_CONNECTIONS = 16;
const TRANSFER_CONNECTIONS = 32;
const MERCHANTS = 200;
const PGBENCH_CLIENTS = 10;
const QRS = 200;
/** PENDING transfers kept waiting on the bank service before each round: six uploads of 5 s and more. */
const BACKLOG = 3_000;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';
const HELLO = 'bare Fastify GET /hello';
const QR_BODY = { amount: 150.5, description: 'Order 42', qr_expiration: '+1d' };

const progress = (line: string) => process.stdout.write(`[bank] ${line}\n`);
const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** One load: its rate of expected answers, its latencies, what else came back, where the CPU went. */
interface Load {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  percentiles: Array<[number, number]>;
  /** Answers of another status, and errors (timeouts, resets): counted, not in perSecond. */
  failed: number;
  cpu: CpuSplit | null;
  startedAt: number;
  endedAt: number;
}

/** Processes whose CPU each load reports besides the service measured, PostgreSQL and this one. */
let otherProcesses: Record<string, number | undefined> = {};

async function load(name: string, options: autocannon.Options, servicePid: number | undefined, expected = ['200', '201']): Promise<Load> {
  const cpu = measureCpu(servicePid, otherProcesses);
  const startedAt = Date.now();
  const result = await autocannon({ connections: HTTP_CONNECTIONS, duration: SECONDS, ...options });
  const endedAt = Date.now();
  const split = cpu();
  const byStatus = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const good = expected.reduce((sum, status) => sum + (byStatus[status]?.count ?? 0), 0);
  const failed = Object.entries(byStatus).filter(([status]) => !expected.includes(status)).reduce((sum, [, s]) => sum + s.count, 0) + result.errors;
  const measured: Load = {
    perSecond: good / SECONDS, p50Ms: result.latency.p50, p99Ms: result.latency.p99, percentiles: autocannonPercentiles(result),
    failed, cpu: split, startedAt, endedAt,
  };
  progress(`  ${name}: ${measured.perSecond.toFixed(0)}/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms${failed > 0 ? `, ${failed} FAILED` : ''}`);
  return measured;
}

/** A ceiling: bare Fastify GET /hello (or `path`); an error answer would flatter it, so any fails the run. */
async function hello(bare: BareFastify, duration = SECONDS, path = '/hello'): Promise<number> {
  const result = await autocannon({ url: `${bare.url}${path}`, connections: HTTP_CONNECTIONS, duration });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`bare Fastify GET ${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.average;
}

/** A service under test, with what its loads need. */
interface Side {
  label: string;
  service: BenchService;
  db: Database;
  databaseName: string;
  merchants: BenchMerchant[];
  qrIds: string[];
}

async function createQr(serviceUrl: string, merchant: BenchMerchant): Promise<string> {
  const response = await fetch(`${serviceUrl}/api/v2/simple-qrs`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': merchant.apiKey },
    body: JSON.stringify({ business_code: merchant.businessCode, ...QR_BODY }),
  });
  if (response.status !== 201) throw new Error(`POST /api/v2/simple-qrs: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/** MERCHANTS funded merchants and QRS QRs of the first one, created ten at a time. */
async function prepare(label: string, service: BenchService, databaseName: string): Promise<Side> {
  const db = await openPostgres({ url: databaseUrlWithName(SERVER_URL, databaseName), queryTimeoutMs: 0 });
  const merchants = await createMerchants(service.url, ADMIN_TOKEN, MERCHANTS, `Bench ${label}`, 10);
  await fundMerchants(db, merchants, 100_000_000, 10);
  const qrIds: string[] = [];
  for (let i = 0; i < QRS; i += 10) qrIds.push(...await Promise.all(Array.from({ length: 10 }, () => createQr(service.url, merchants[0]!))));
  return { label, service, db, databaseName, merchants, qrIds };
}

/** The longest transaction seen open on a database: how long, in which state, its last statement. */
interface LongestTransaction { ms: number; state: string; query: string }

/** The longest transaction open on `databaseName` while `work` runs, sampled from pg_stat_activity every 250 ms. */
async function longestTransactionDuring<T>(databaseName: string, work: () => Promise<T>): Promise<{ value: T; longest: LongestTransaction }> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  let longest: LongestTransaction = { ms: 0, state: '', query: '' };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await client.query<{ ms: number; state: string; query: string }>(
        `select extract(epoch from clock_timestamp() - xact_start) * 1000 as ms, state, left(regexp_replace(query, '\\s+', ' ', 'g'), 100) as query
           from pg_stat_activity where datname = $1 and xact_start is not null and pid <> pg_backend_pid()
          order by xact_start limit 1`, [databaseName]);
      if (rows[0] && Number(rows[0].ms) > longest.ms) longest = { ms: Math.round(Number(rows[0].ms)), state: rows[0].state, query: rows[0].query };
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  try {
    return { value: await work(), longest };
  } finally {
    sampling = false;
    await sampler.catch(() => undefined);
    await client.end();
  }
}

/** How many bank calls of each operation were in flight on average over [from, to] (ms since the epoch), from rail_attempts. */
async function bankCallsInFlight(db: Database, from: number, to: number): Promise<Record<string, number>> {
  const { rows } = await db.query<{ operation: string; busy_ms: number }>(
    `select operation, sum(extract(epoch from least(created_at, $2::timestamptz)
                                    - greatest(created_at - latency_ms * interval '1 millisecond', $1::timestamptz)) * 1000) as busy_ms
       from rail_attempts
      where created_at >= $1::timestamptz and created_at - latency_ms * interval '1 millisecond' <= $2::timestamptz
      group by operation order by operation`,
    [new Date(from), new Date(to)],
  );
  return Object.fromEntries(rows.map((row) => [row.operation, Math.round((Number(row.busy_ms) / (to - from)) * 100) / 100]));
}

/**
 * Single-thread rates of the two image steps of a bank QR: the bank's PNG (the simulator's) and our decode
 * of it (src/qr/bank-image.ts); and, beside them, our decode of the PNG `qrcode` itself writes for the same
 * payload (the same pixels, pngjs's filters: what the simulator sent before it wrote its PNG itself).
 */
async function imageRates(): Promise<{ render: number; decode: number; decodeQrcode: number }> {
  const payload = emvPayload({ qrId: '21061401016000000003', currency: 'BOB', amount: 150.5, dueDate: '2026-12-31', merchantName: 'COMERCIO DEMO', description: 'Order 42' });
  const rate = async (step: () => unknown): Promise<number> => {
    const started = performance.now();
    let count = 0;
    while (performance.now() - started < 1500) {
      await step();
      count++;
    }
    return Math.round(count / ((performance.now() - started) / 1000));
  };
  const png = await qrPngBase64(payload);
  const qrcodePng = (await QRCode.toBuffer(payload, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 300 })).toString('base64');
  for (const image of [png, qrcodePng]) {
    if (decodeBankQrImage(image) !== payload) throw new Error('the service does not decode the simulator\'s QR image to its payload');
  }
  return { render: await rate(() => qrPngBase64(payload)), decode: await rate(() => decodeBankQrImage(png)), decodeQrcode: await rate(() => decodeBankQrImage(qrcodePng)) };
}

/** CPU per QR created, in ms, from a load's split: each process's cores over the rate; the rest of the machine beside. */
function cpuPerQr(load: Load): string {
  const split = load.cpu;
  if (!split || load.perSecond === 0) return '';
  const ms = (cores: number) => ((cores * 1000) / load.perSecond).toFixed(1);
  const ours = split.service + split.postgres + split.loadGenerator + Object.values(split.others ?? {}).reduce((sum, cores) => sum + cores, 0);
  const rest = Math.max(0, os.cpus().length - ours - split.idle);
  return `CPU per QR created: service ${ms(split.service)} ms, simulator ${ms(split.others?.simulator ?? 0)} ms, PostgreSQL ${ms(split.postgres)} ms, `
    + `load generator ${ms(split.loadGenerator)} ms, in all ${ms(ours)} ms (other processes on the machine meanwhile: ${rest.toFixed(2)} cores); `;
}

interface CreationRound { create: Load; ceiling: number }
interface SlowBankRound {
  /** `shaped`: bare Fastify sending that rail's QR body, the run beside it. */
  get: Record<'sandbox' | 'bank', { load: Load; ceiling: number; longest: LongestTransaction; shaped: number }>;
  transfers: Record<'sandbox' | 'bank', { load: Load; ceiling: number; longest: LongestTransaction }>;
  order: Array<'sandbox' | 'bank'>;
}

async function main(): Promise<void> {
  const began = performance.now();
  progress(`${os.availableParallelism()} cores, load average ${loadAverage()}`);
  const databases = { sandbox: '', create: '', bank: '' };
  for (const key of Object.keys(databases) as Array<keyof typeof databases>) {
    databases[key] = `mps_bench_${randomBytes(4).toString('hex')}`;
    await adminQuery(SERVER_URL, `create database ${databases[key]}`);
  }
  let simulator: BenchBankSimulator | null = null;
  let bare: BareFastify | null = null;
  const bares: BareFastify[] = [];
  const services: BenchService[] = [];
  const sides: Side[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await startBenchService({ ADMIN_TOKEN, PUBLIC_BASE_URL: 'https://pay.example.com', ...env });
    services.push(service);
    return service;
  };
  try {
    simulator = await startBankSimulator({ batchDecision: 'hold' });
    bare = await startBareFastify();
    const bankEnv = { ...simulator.env, BANECO_CALLBACK_SECRET: randomBytes(32).toString('base64url') };

    // 1. QR creation through the bank at its normal speed.
    const images = await imageRates();
    progress(`one thread, in this process: the simulator's PNG ${images.render}/s; the service's decode of it ${images.decode}/s (of qrcode's own PNG of the same QR: ${images.decodeQrcode}/s)`);
    const creator = await start({ DATABASE_URL: databaseUrlWithName(SERVER_URL, databases.create), ...bankEnv });
    const [creatorMerchant] = await createMerchants(creator.url, ADMIN_TOKEN, 1, 'Bench creator');
    otherProcesses = { simulator: simulator.pid };
    const createOptions: autocannon.Options = {
      url: `${creator.url}/api/v2/simple-qrs`, method: 'POST', connections: CREATE_CONNECTIONS, body: JSON.stringify({ business_code: creatorMerchant!.businessCode, ...QR_BODY }),
      headers: { 'content-type': 'application/json', 'x-api-key': creatorMerchant!.apiKey },
    };
    progress('QR creation through the simulator at its normal speed: warm-up');
    await hello(bare, 2);
    await load('warm-up', { ...createOptions, duration: 2 }, creator.process.pid);
    const creation: CreationRound[] = [];
    let before = await hello(bare);
    for (let round = 1; round <= ROUNDS; round++) {
      const create = await load(`round ${round}/${ROUNDS}: POST /api/v2/simple-qrs (RAIL=baneco)`, createOptions, creator.process.pid);
      const after = await hello(bare);
      creation.push({ create, ceiling: (before + after) / 2 });
      before = after;
    }
    await creator.stop();

    // 2. The two rails side by side, the bank answering every call 5 s late.
    const sandboxService = await start({ DATABASE_URL: databaseUrlWithName(SERVER_URL, databases.sandbox) });
    const sandbox = await prepare('sandbox', sandboxService, databases.sandbox);
    sides.push(sandbox);
    await createDebitInsertTables(sandbox.db);
    const bankService = await start({
      DATABASE_URL: databaseUrlWithName(SERVER_URL, databases.bank), ...bankEnv, BANECO_POLL_INTERVAL: '1s', BANECO_BATCH_INTERVAL: '1s',
    });
    const bank = await prepare('bank', bankService, databases.bank); // its QRs issued by the bank at its normal speed
    sides.push(bank);
    const sideOf = { sandbox, bank };
    // A bank QR carries the bank's 300 × 300 PNG: its GET answers a body about three times the sandbox's. Bare
    // Fastify sending each rail's own body is the like-for-like ceiling, shown beside /hello.
    const shaped = {} as Record<'sandbox' | 'bank', { bare: BareFastify; bytes: number }>;
    for (const which of ['sandbox', 'bank'] as const) {
      const side = sideOf[which];
      const body = await (await fetch(`${side.service.url}/api/v2/simple-qrs/${side.qrIds[0]}`, { headers: { 'x-api-key': side.merchants[0]!.apiKey } })).text();
      shaped[which] = { bare: await startBareFastify({ qrShaped: JSON.parse(body) }), bytes: Buffer.byteLength(body) };
      bares.push(shaped[which].bare);
    }
    progress(`GET /api/v2/simple-qrs/{id} answers ${shaped.sandbox.bytes} bytes on the sandbox rail, ${shaped.bank.bytes} bytes on the bank's`);
    await simulator.setKnobs({ delays: Object.fromEntries(OPERATIONS.map((operation) => [operation, BANK_DELAY_MS])) });
    progress(`the simulator now answers every call ${BANK_DELAY_MS / 1000} s late`);
    const getOptions = (side: Side): autocannon.Options => ({ url: side.service.url, requests: qrReadRequests(side.qrIds, side.merchants[0]!.apiKey) });
    const transferOptions = (side: Side): autocannon.Options => ({ url: side.service.url, connections: TRANSFER_CONNECTIONS, requests: transferRequests(side.merchants) });
    const measure = async (name: string, which: 'sandbox' | 'bank', options: autocannon.Options) => {
      const other = which === 'bank' ? 'sandbox' : 'bank';
      otherProcesses = { simulator: simulator!.pid, [`the ${other} service`]: sideOf[other].service.process.pid };
      const { value, longest } = await longestTransactionDuring(sideOf[which].databaseName, () => load(name, options, sideOf[which].service.process.pid));
      progress(`    longest transaction open on its database meanwhile: ${longest.ms} ms${longest.ms > 0 ? ` (${longest.state}: ${longest.query})` : ''}`);
      return { load: value, longest };
    };
    progress('warm-up');
    await hello(bare, 2);
    for (const which of ['sandbox', 'bank'] as const) {
      await load(`warm-up bare Fastify, ${which} QR's body`, { url: `${shaped[which].bare.url}/qr-shaped`, duration: 2 }, undefined);
      await load(`warm-up GET (${which})`, { ...getOptions(sideOf[which]), duration: 3 }, undefined);
    }
    for (const which of ['sandbox', 'bank'] as const) await load(`warm-up POST /api/v2/transfers (${which})`, { ...transferOptions(sideOf[which]), duration: 3 }, undefined);
    const first = sandbox.merchants[0]!.businessCode;
    const last = sandbox.merchants.at(-1)!.businessCode;
    const pgbench = () => runDebitInsert({ databaseUrl: databaseUrlWithName(SERVER_URL, databases.sandbox), first, last, clients: PGBENCH_CLIENTS, seconds: SECONDS });
    // The batch job uploads at most 500 transfers at a time, one upload after another: a backlog of PENDING
    // transfers keeps an upload waiting on the bank through each round's reads. A transfers run leaves
    // thousands; one on a busy machine may leave too few, so each round first tops it up (not measured).
    const topUpBacklog = async () => {
      const { rows: [row] } = await bank.db.query<{ count: number }>("select count(*)::int as count from transfers where status = 'PENDING'");
      const missing = BACKLOG - row!.count;
      if (missing <= 0) return;
      await autocannon({ url: bank.service.url, connections: TRANSFER_CONNECTIONS, amount: missing, requests: transferRequests(bank.merchants) });
      progress(`  ${missing} transfers sent to the bank service to keep ${BACKLOG} waiting for the batch job`);
    };
    const slow: SlowBankRound[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      await topUpBacklog();
      const order: Array<'sandbox' | 'bank'> = round % 2 === 1 ? ['bank', 'sandbox'] : ['sandbox', 'bank'];
      progress(`round ${round}/${ROUNDS}: ${order.join(', then ')}`);
      // hello, GET (first), its bare body, the other's bare body, GET (second), hello: each GET beside its
      // like-for-like ceiling, both equally far from the /hello runs.
      const helloBefore = await hello(bare);
      const reads = {} as Record<'sandbox' | 'bank', { load: Load; longest: LongestTransaction; shaped: number }>;
      const firstRead = await measure(`GET /api/v2/simple-qrs/{id} (${order[0]})`, order[0]!, getOptions(sideOf[order[0]!]));
      const firstShaped = await hello(shaped[order[0]!].bare, SECONDS, '/qr-shaped');
      const secondShaped = await hello(shaped[order[1]!].bare, SECONDS, '/qr-shaped');
      const secondRead = await measure(`GET /api/v2/simple-qrs/{id} (${order[1]})`, order[1]!, getOptions(sideOf[order[1]!]));
      const helloAfter = await hello(bare);
      reads[order[0]!] = { ...firstRead, shaped: firstShaped };
      reads[order[1]!] = { ...secondRead, shaped: secondShaped };
      const get = Object.fromEntries((['sandbox', 'bank'] as const).map((which) => [which, { ...reads[which], ceiling: (helloBefore + helloAfter) / 2 }])) as SlowBankRound['get'];
      const pgbenchBefore = await pgbench();
      const loads: Array<{ load: Load; longest: LongestTransaction }> = [];
      for (const which of order) loads.push(await measure(`POST /api/v2/transfers (${which})`, which, transferOptions(sideOf[which])));
      const pgbenchAfter = await pgbench();
      const ceiling = (pgbenchBefore + pgbenchAfter) / 2;
      const transfers = Object.fromEntries(order.map((which, index) => [which, { ...loads[index]!, ceiling }])) as SlowBankRound['transfers'];
      progress(`  ${HELLO} ${helloBefore.toFixed(0)} / ${helloAfter.toFixed(0)} req/s; with each rail's QR body: sandbox ${get.sandbox.shaped.toFixed(0)}, bank ${
        get.bank.shaped.toFixed(0)} req/s; pgbench ${pgbenchBefore.toFixed(0)} / ${pgbenchAfter.toFixed(0)} tps`);
      progress(`  ratios, bank / sandbox: GET ${ratioOf(get.bank).toFixed(2)} / ${ratioOf(get.sandbox).toFixed(2)}, transfers ${ratioOf(transfers.bank).toFixed(2)} / ${ratioOf(transfers.sandbox).toFixed(2)}`);
      slow.push({ get, transfers, order });
    }
    // The calls still waiting on the bank at the end of the last run are logged when they end.
    await new Promise((resolve) => setTimeout(resolve, BANK_DELAY_MS + 1_000));
    const inFlight = async (load: Load) => bankCallsInFlight(bank.db, load.startedAt, load.endedAt);
    const calls = await Promise.all(slow.map(async (round) => ({ get: await inFlight(round.get.bank.load), transfers: await inFlight(round.transfers.bank.load) })));
    for (const [index, round] of calls.entries()) progress(`round ${index + 1}: bank calls in flight on average: GET run ${callsText(round.get)}; transfers run ${callsText(round.transfers)}`);
    const { rows: batches } = await bank.db.query<{ status: string; batches: number; items: number }>(
      'select status, count(*)::int as batches, sum(item_count)::int as items from transfer_batches group by status order by status');
    const { rows: [pending] } = await bank.db.query<{ count: number }>("select count(*)::int as count from transfers where status = 'PENDING'");
    progress(`bank service's batches: ${batches.map((b) => `${b.batches} ${b.status} (${b.items} transfers)`).join(', ') || 'none'}; ${pending!.count} transfers still PENDING`);
    progress(`load average at the end ${loadAverage()}; ${((performance.now() - began) / 1000).toFixed(0)} s`);
    reportFigures(figuresOf(creation, images, slow, calls, batches, { sandbox: shaped.sandbox.bytes, bank: shaped.bank.bytes }));
  } finally {
    for (const service of services) await service.stop();
    await simulator?.stop();
    await bare?.stop();
    for (const each of bares) await each.stop();
    for (const side of sides) await side.db.close().catch(() => undefined);
    for (const name of Object.values(databases)) if (name) await adminQuery(SERVER_URL, `drop database if exists ${name} with (force)`);
  }
}

const ratioOf = (measured: { load: Load; ceiling: number }) => measured.load.perSecond / measured.ceiling;
const fixed = (values: number[]) => values.map((value) => value.toFixed(2)).join(' / ');
const callsText = (calls: Record<string, number>) => Object.entries(calls).map(([operation, average]) => `${operation} ${average}`).join(', ') || 'none';

function figuresOf(
  creation: CreationRound[],
  images: { render: number; decode: number; decodeQrcode: number },
  slow: SlowBankRound[],
  calls: Array<Record<'get' | 'transfers', Record<string, number>>>,
  batches: Array<{ status: string; batches: number; items: number }>,
  bodyBytes: Record<'sandbox' | 'bank', number>,
): Figure[] {
  const figures: Figure[] = [];
  const perRun = `${SECONDS} s per run, median of ${ROUNDS} rounds`;
  for (const kind of ['get', 'transfers'] as const) {
    const isGet = kind === 'get';
    const ceilingName = isGet ? HELLO : DEBIT_INSERT_CEILING;
    const how = isGet ? `${HTTP_CONNECTIONS} connections, ${QRS} QRs round-robin` : `${TRANSFER_CONNECTIONS} connections, ${MERCHANTS} merchants, pgbench ${PGBENCH_CLIENTS} clients before and after`;
    const quotients = slow.map((round) => ratioOf(round[kind].bank) / ratioOf(round[kind].sandbox));
    const likeQuotients = slow.map((round) => (round.get.bank.load.perSecond / round.get.bank.shaped) / (round.get.sandbox.load.perSecond / round.get.sandbox.shaped));
    for (const which of ['sandbox', 'bank'] as const) {
      const ratios = slow.map((round) => ratioOf(round[kind][which]));
      const index = ratios.indexOf(median(ratios));
      const middle = slow[index]![kind][which];
      const failed = slow.reduce((sum, round) => sum + round[kind][which].load.failed, 0);
      const longest = slow.map((round) => round[kind][which].longest).reduce((a, b) => (b.ms > a.ms ? b : a));
      const bankNote = which === 'bank'
        ? `; bank calls in flight on average during the run, per round (rail_attempts): ${calls.map((round) => callsText(round[kind])).join(' | ')}`
          + (isGet ? '' : `; the service's batches at the end: ${batches.map((b) => `${b.batches} ${b.status} (${b.items} transfers)`).join(', ') || 'none'}`)
        : '';
      const likeForLike = isGet
        ? `; its QR's body ${bodyBytes[which]} bytes: ratio to bare Fastify sending that body per round ${fixed(slow.map((round) => round.get[which].load.perSecond / round.get[which].shaped))}`
        : '';
      figures.push({
        group: 'bank',
        name: `${isGet ? 'GET /api/v2/simple-qrs/{id}' : `POST /api/v2/transfers, ${MERCHANTS} merchants`}: ${which === 'sandbox' ? 'sandbox rail' : `RAIL=baneco, the bank answering every call ${BANK_DELAY_MS / 1000} s late`}`,
        value: Math.round(middle.load.perSecond), unit: isGet ? 'req/s' : 'transfers/s',
        p50Ms: middle.load.p50Ms, p99Ms: middle.load.p99Ms, percentiles: middle.load.percentiles,
        ceiling: { name: ceilingName, value: Math.round(middle.ceiling) },
        note: `ratio per round ${fixed(ratios)}${likeForLike}; ${how}, ${perRun}; longest transaction open on its database (pg_stat_activity every 250 ms) ${longest.ms} ms${
          longest.ms > 0 ? ` (${longest.state}, its last statement «${longest.query.slice(0, 70)}…»)` : ''}`
          + `${failed > 0 ? `; ${failed} requests failed (other status or error), not counted` : ''}${bankNote}; that round's ${describeCpu(middle.load.cpu)}`,
      });
    }
    figures.push({
      group: 'bank',
      name: `${isGet ? 'GET /api/v2/simple-qrs/{id}' : 'POST /api/v2/transfers'}: RAIL=baneco with the slow bank ÷ sandbox rail, each as a ratio to ${ceilingName}`,
      value: median(quotients), unit: '×',
      target: { text: '≥ 0.90 (within 10 % of the sandbox rail)', met: median(quotients) >= 0.9 },
      note: `per round ${fixed(quotients)} (the two services measured one after the other, the order alternating), median`
        + (isGet ? `; with each rail's like-for-like ceiling instead (bare Fastify sending that rail's QR body, ${bodyBytes.bank} bytes against ${bodyBytes.sandbox}): per round ${
          fixed(likeQuotients)}, median ${median(likeQuotients).toFixed(2)}` : ''),
    });
  }
  const createRatios = creation.map((round) => round.create.perSecond / round.ceiling);
  const middle = creation[createRatios.indexOf(median(createRatios))]!;
  const createFailed = creation.reduce((sum, round) => sum + round.create.failed, 0);
  figures.push({
    group: 'bank',
    name: 'POST /api/v2/simple-qrs, RAIL=baneco, the simulator at its normal speed',
    value: Math.round(middle.create.perSecond), unit: 'QRs/s', p50Ms: middle.create.p50Ms, p99Ms: middle.create.p99Ms, percentiles: middle.create.percentiles,
    ceiling: { name: HELLO, value: Math.round(middle.ceiling) },
    target: { text: '≥ 300 QRs/s', met: middle.create.perSecond >= 300 },
    note: `QRs/s per round ${creation.map((round) => round.create.perSecond.toFixed(0)).join(' / ')}, ratio per round ${createRatios.map((ratio) => ratio.toPrecision(2)).join(' / ')}; ${CREATE_CONNECTIONS} connections, ${perRun}; `
      + 'the production intervals (poll 30 s, batch 60 s): the poll reads each new QR once; the simulator in a process of its own, its one thread not shared with the load generator; '
      + cpuPerQr(middle.create)
      + `one thread, in the benchmark's process: the simulator's PNG of a QR ${images.render}/s, the service's decode of it ${images.decode}/s (of qrcode's own PNG of the same QR: ${images.decodeQrcode}/s)`
      + `${createFailed > 0 ? `; ${createFailed} requests failed (other status or error), not counted` : ''}; that round's ${describeCpu(middle.create.cpu)}`,
  });
  return figures;
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
