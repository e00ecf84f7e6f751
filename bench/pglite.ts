// The service on its embedded database (BENCHMARKS.md, group `pglite`): `node dist/main.js` with
// DATABASE_URL unset and DATA_DIR a fresh temporary folder, as `npm start` runs it out of the box, against
// what PGlite itself can do on this machine, measured in the same run:
//   - ceiling of the writes: PGlite in this process (opened as src/db/pglite.ts opens it, in a folder of its
//     own), `begin; guarded debit of a balance row; insert; commit`, one transaction at a time (PGlite has
//     one connection), for SECONDS;
//   - ceiling of the reads: bare Fastify (bench/bare-fastify.ts) sending a static body the size and shape of
//     a QR. A QR poll is answered from the service's in-process read cache (src/qr/read-cache.ts), not from a
//     transaction: PGlite's transaction rate says nothing about it, what Fastify can send does;
//   - the service: POST /api/v2/transfers over 20 funded merchants, GET /api/v2/simple-qrs/{id} over 200
//     QRs round-robin, POST /api/v2/simple-qrs (with its image); autocannon, 16 connections.
// The machine is shared and noisy: each round runs the PGlite ceiling, then the service's three cases, then
// bare Fastify; each figure is its median round, divided by the median of its ceiling. The service is started
// once, so every round measures the same build (startBenchService rebuilds dist/ when src/ changed, and a
// restart per round would measure whatever src/ held at that moment); it waits idle while the ceiling runs.
//   npx tsx bench/pglite.ts [seconds per run, 5] [rounds, 3]
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite, types } from '@electric-sql/pglite';
import autocannon from 'autocannon';
import { int8ToNumber } from '../src/db/database.ts';
import { autocannonPercentiles, median, reportFigures, samplePercentiles, type Figure } from './lib/figures.ts';
import { transferRequests } from './lib/requests.ts';
import { startBenchService, type BenchService } from './lib/service.ts';
import { anyFreePort } from '../faults/ports.ts';

const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);
const CONNECTIONS = 16;
const MERCHANTS = 20;
const QRS_PER_MERCHANT = 10;
const WARM_UP_SECONDS = 2;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';
const BARE_PORT = await anyFreePort();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RAW_CEILING = 'PGlite raw transactions (one at a time)';
const BARE_CEILING = `bare Fastify GET, static QR-sized body (${CONNECTIONS} connections)`;
const QR_BODY = { amount: 150.5, description: 'Order 42', qr_expiration: '+1d' };

interface Merchant { businessCode: number; apiKey: string }
interface Setup { merchants: Merchant[]; polled: Array<{ id: string; apiKey: string }>; qrShapedJson: string }
/** One round of one measurement: its rate and its latency distribution. */
interface Run { perSecond: number; p50Ms: number; p99Ms: number; percentiles: Array<[number, number]> }

const progress = (line: string) => process.stdout.write(`[pglite] ${line}\n`);

/**
 * PGlite's own rate: in this process, on `dataDir`, with the service's options (src/db/pglite.ts), a
 * transaction as small as a transfer's (the debit of one of MERCHANTS balance rows, one insert) through
 * PGlite's own transaction(), again and again for SECONDS after a one-second warm-up. Opened and closed
 * for each run, so that while the service is measured this process holds no second PGlite (its WASM
 * instance, its memory).
 */
async function pgliteTransactionRate(dataDir: string): Promise<Run> {
  const pglite = new PGlite({ dataDir, parsers: { [types.INT8]: int8ToNumber } });
  await pglite.waitReady;
  try {
    await pglite.exec(`create table if not exists bench_balances (business_code bigint primary key,
        available_centavos bigint not null check (available_centavos >= 0), pending_out_centavos bigint not null, updated_at timestamptz not null);
      insert into bench_balances select i, 1000000000000, 0, now() from generate_series(1, ${MERCHANTS}) as i on conflict do nothing;
      create table if not exists bench_transfers (id bigint generated always as identity primary key, business_code bigint not null,
        amount_centavos bigint not null, created_at timestamptz not null);`);
    let next = 0;
    const transfer = () => pglite.transaction(async (tx) => {
      const businessCode = (next++ % MERCHANTS) + 1;
      await tx.query(`update bench_balances set available_centavos = available_centavos - 100, pending_out_centavos = pending_out_centavos + 100,
        updated_at = now() where business_code = $1 and available_centavos >= 100`, [businessCode]);
      await tx.query('insert into bench_transfers (business_code, amount_centavos, created_at) values ($1, 100, now())', [businessCode]);
    });
    for (const warmUpEnd = performance.now() + 1000; performance.now() < warmUpEnd;) await transfer();
    const samplesMs: number[] = [];
    const started = performance.now();
    while (performance.now() - started < SECONDS * 1000) {
      const before = performance.now();
      await transfer();
      samplesMs.push(performance.now() - before);
    }
    const percentiles = samplePercentiles(samplesMs);
    const at = (p: number) => percentiles.find(([percentile]) => percentile === p)![1];
    return { perSecond: samplesMs.length / ((performance.now() - started) / 1000), p50Ms: at(50), p99Ms: at(99), percentiles };
  } finally {
    await pglite.close();
  }
}

async function load(name: string, options: autocannon.Options, duration = SECONDS): Promise<Run> {
  const result = await autocannon({ connections: CONNECTIONS, duration, ...options });
  // An error answer costs less than the real one: a run with any would flatter the service.
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { perSecond: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, percentiles: autocannonPercentiles(result) };
}

async function call(service: BenchService, method: string, urlPath: string, body: unknown, headers: Record<string, string>): Promise<any> {
  const response = await fetch(`${service.url}${urlPath}`, {
    method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${urlPath}: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * MERCHANTS merchants able to send transfers, funded the way a production build can be (it has no test
 * fixture route): a multi-use QR each, paid 100,000 BOB three times through the sandbox; and the QRs the
 * GET polls, QRS_PER_MERCHANT of each merchant.
 */
async function setUp(service: BenchService): Promise<Setup> {
  const merchants: Merchant[] = [];
  const polled: Setup['polled'] = [];
  for (let i = 0; i < MERCHANTS; i++) {
    const created = await call(service, 'POST', '/admin/v1/merchants', { name: `Bench PGlite ${i}`, city: 'La Paz', ach_enabled: true }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    const merchant = { businessCode: created.business_code as number, apiKey: created.api_key as string };
    const key = { 'x-api-key': merchant.apiKey };
    const till = await call(service, 'POST', '/api/v2/simple-qrs', { business_code: merchant.businessCode, amount: 100_000, is_multi_use: true }, key);
    for (let payment = 0; payment < 3; payment++) await call(service, 'POST', `/api/v2/sandbox/simple-qrs/${till.id}/payments`, {}, key);
    for (let q = 0; q < QRS_PER_MERCHANT; q++) {
      const qr = await call(service, 'POST', '/api/v2/simple-qrs', { business_code: merchant.businessCode, ...QR_BODY }, key);
      polled.push({ id: qr.id, apiKey: merchant.apiKey });
    }
    merchants.push(merchant);
  }
  const first = polled[0]!;
  const qrShaped = await call(service, 'GET', `/api/v2/simple-qrs/${first.id}`, undefined, { 'x-api-key': first.apiKey });
  return { merchants, polled, qrShapedJson: JSON.stringify(qrShaped) };
}

/** Transfers of 1.00 BOB, the merchants in turn, a fresh Idempotency-Key each (else the replay is answered). */
function transfers(service: BenchService, merchants: Merchant[]): autocannon.Options {
  return {
    url: service.url,
    requests: transferRequests(merchants),
  };
}

/** GET of the polled QRs in turn, each with its merchant's key (a shop's tills polling). */
function polling(service: BenchService, polled: Setup['polled']): autocannon.Options {
  let next = 0;
  return {
    url: service.url,
    requests: [{
      method: 'GET',
      setupRequest: (request) => {
        const qr = polled[next++ % polled.length]!;
        return { ...request, path: `/api/v2/simple-qrs/${qr.id}`, headers: { 'x-api-key': qr.apiKey } };
      },
    }],
  };
}

function createQr(service: BenchService, merchant: Merchant): autocannon.Options {
  return {
    url: `${service.url}/api/v2/simple-qrs`, method: 'POST', body: JSON.stringify({ business_code: merchant.businessCode, ...QR_BODY }),
    headers: { 'content-type': 'application/json', 'x-api-key': merchant.apiKey },
  };
}

/** bench/bare-fastify.ts as a child process (not in this one, where autocannon runs), once it listens. */
function startBareFastify(qrShapedJson: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-fastify.ts', String(BARE_PORT), qrShapedJson], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('bare fastify on')) resolve(child); });
    child.on('exit', (code) => reject(new Error(`bench/bare-fastify.ts exited with ${code}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * A figure: the median round's rate, with that round's latencies. Divided by the median of its ceiling's
 * rounds (one ceiling value for every figure that shares it); each round's own ratio is in the note.
 */
function figureOf(name: string, unit: Figure['unit'], how: string, runs: Run[], ceiling?: { name: string; runs: Run[] }): Figure {
  const run = runs.find((r) => r.perSecond === median(runs.map((r) => r.perSecond)))!;
  const rounds = `median of ${runs.length} rounds (${runs.map((r) => Math.round(r.perSecond)).join(' / ')} ${unit})`;
  const ratios = ceiling ? `; ratio to the same round's ${ceiling.name}: ${runs.map((r, i) => (r.perSecond / ceiling.runs[i]!.perSecond).toFixed(2)).join(' / ')}` : '';
  return {
    group: 'pglite', name, value: run.perSecond, unit, p50Ms: run.p50Ms, p99Ms: run.p99Ms, percentiles: run.percentiles,
    ...(ceiling ? { ceiling: { name: ceiling.name, value: median(ceiling.runs.map((r) => r.perSecond)) } } : {}),
    note: `${how}, ${SECONDS} s a run, ${rounds}${ratios}`,
  };
}

async function main(): Promise<void> {
  progress(`${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-bench-pglite-'));
  let service: BenchService | null = null;
  let bare: ChildProcess | null = null;
  try {
    progress('starting the service on a fresh DATA_DIR (initdb and migrations)');
    service = await startBenchService({ DATA_DIR: path.join(temp, 'service'), ADMIN_TOKEN });
    const setup = await setUp(service);
    progress(`${MERCHANTS} merchants funded, ${setup.polled.length} QRs to poll`);
    bare = await startBareFastify(setup.qrShapedJson);
    const bareOptions: autocannon.Options = { url: `http://127.0.0.1:${BARE_PORT}/qr-shaped` };
    const cases = [
      ['transfers', 'POST /api/v2/transfers', transfers(service, setup.merchants)],
      ['get', 'GET /api/v2/simple-qrs/{id}', polling(service, setup.polled)],
      ['create', 'POST /api/v2/simple-qrs', createQr(service, setup.merchants[0]!)],
    ] as const;
    // JIT and caches warm before anything counts (the PGlite ceiling warms up in each of its runs).
    for (const [, name, options] of cases) await load(`warm-up ${name}`, options, WARM_UP_SECONDS);
    await load('warm-up bare Fastify', bareOptions, WARM_UP_SECONDS);

    const runs: Record<'raw' | 'transfers' | 'get' | 'create' | 'bare', Run[]> = { raw: [], transfers: [], get: [], create: [], bare: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      // A folder of its own: the service's is locked by the service (src/db/lock-file.ts).
      runs.raw.push(await pgliteTransactionRate(path.join(temp, 'ceiling')));
      progress(`round ${round}/${ROUNDS}: PGlite raw ${Math.round(runs.raw.at(-1)!.perSecond)} tps`);
      for (const [key, name, options] of cases) {
        runs[key].push(await load(name, options));
        progress(`round ${round}/${ROUNDS}: ${name} ${Math.round(runs[key].at(-1)!.perSecond)} req/s`);
      }
      runs.bare.push(await load('bare Fastify /qr-shaped', bareOptions));
      progress(`round ${round}/${ROUNDS}: bare Fastify QR-sized body ${Math.round(runs.bare.at(-1)!.perSecond)} req/s`);
    }
    progress(`load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);

    const raw = { name: RAW_CEILING, runs: runs.raw };
    const service16 = `the compiled service on PGlite (DATA_DIR), autocannon, ${CONNECTIONS} connections`;
    reportFigures([
      figureOf(RAW_CEILING, 'tps', `in-process PGlite on disk, begin; debit of one of ${MERCHANTS} balance rows; insert; commit`, runs.raw),
      figureOf(BARE_CEILING, 'req/s', 'bench/bare-fastify.ts /qr-shaped, autocannon, the body of a GET of a QR', runs.bare),
      figureOf(`POST /api/v2/transfers on PGlite, ${MERCHANTS} merchants`, 'transfers/s',
        `${service16}, 1.00 BOB each, a fresh Idempotency-Key each; concurrent creations are written in batches (group commit), each creation with its ledger posting, transfer row, event and idempotency record`,
        runs.transfers, raw),
      figureOf(`GET /api/v2/simple-qrs/{id} on PGlite, ${setup.polled.length} QRs round-robin`, 'req/s',
        `${service16}; answered mostly from the in-process read cache, not a transaction, hence the bare Fastify ceiling (same body)`,
        runs.get, { name: BARE_CEILING, runs: runs.bare }),
      figureOf('POST /api/v2/simple-qrs on PGlite (with image)', 'req/s', `${service16}, one merchant`, runs.create, raw),
    ]);
  } finally {
    if (service) await service.stop();
    if (bare) await stopChild(bare);
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
