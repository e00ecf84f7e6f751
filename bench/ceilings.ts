// The machine's ceilings (BENCHMARKS.md, group `ceilings`): what the bare stack under the service can do on
// this machine, with nothing of the service in it, so the report can show every figure beside them.
//   1. bare Fastify GET /hello (bench/bare-fastify.ts), autocannon, 50 connections;
//   2. a primary-key SELECT through pg behind Fastify: GET /pk/{id} of the same process, round-robin over
//      1,000 rows, through a pg.Pool of 10, autocannon, 50 connections;
//   3. pgbench, 10 clients, -j 2: one guarded debit of a balance row plus one INSERT per transaction (the
//      idea of bench/transfers.ts's baseline), on tables of its own.
// The machine is shared and noisy: the three are run in turn, ROUNDS times, and each reports its median
// round. The tables live in a scratch database `mps_bench_<random>`, dropped at the end.
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/ceilings.ts [seconds per run, 5] [rounds, 3]
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { databaseUrlWithName } from '../src/db/url.ts';
import { autocannonPercentiles, median, reportFigures, samplePercentiles, type Figure } from './lib/figures.ts';
import { createPkTable, PK_ROWS, roundRobinPk, startBareFastify, type BareFastify } from './lib/bare-fastify.ts';
import { adminQuery } from './scratch-database.ts';

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);
const CONNECTIONS = 50;
const PGBENCH_CLIENTS = 10;
const BALANCE_ROWS = 200;

/** One round of one ceiling: its rate and its latency distribution. */
interface Run { perSecond: number; p50Ms: number; p99Ms: number; percentiles: Array<[number, number]> }

const progress = (line: string) => process.stdout.write(`[ceilings] ${line}\n`);

async function load(name: string, options: autocannon.Options): Promise<Run> {
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  // An error answer is cheaper than the real one: a run with any would flatter the ceiling.
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { perSecond: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, percentiles: autocannonPercentiles(result) };
}

/** The debit of ledger's debitAvailable plus one insert, on this script's own tables (bench/transfers.ts's baseline). */
const PGBENCH_SCRIPT = `\\set id random(1, ${BALANCE_ROWS})
BEGIN;
UPDATE bench_ceiling_balances SET available_centavos = available_centavos - 100, pending_out_centavos = pending_out_centavos + 100, updated_at = now()
 WHERE id = :id AND available_centavos >= 100;
INSERT INTO bench_ceiling_transfers (balance_id, amount_centavos, created_at) VALUES (:id, 100, now());
END;
`;

/** pgbench for SECONDS; latencies from its per-transaction log (column 3, microseconds). */
async function pgbench(databaseUrl: string): Promise<Run> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-bench-ceilings-'));
  const script = path.join(dir, 'debit-insert.sql');
  fs.writeFileSync(script, PGBENCH_SCRIPT);
  const url = new URL(databaseUrl);
  try {
    const { stdout } = await promisify(execFile)('pgbench', [
      '-n', '-f', script, '-c', String(PGBENCH_CLIENTS), '-j', '2', '-T', String(SECONDS), '-l', `--log-prefix=${path.join(dir, 'log')}`,
      '-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username) || 'postgres', url.pathname.slice(1),
    ], { cwd: dir, maxBuffer: 10 * 1024 * 1024 });
    const tps = Number(/tps = ([0-9.]+)/.exec(stdout)?.[1]);
    if (!Number.isFinite(tps)) throw new Error(`pgbench printed no tps:\n${stdout}`);
    const samplesMs = fs.readdirSync(dir).filter((name) => name.startsWith('log.')).flatMap((name) =>
      fs.readFileSync(path.join(dir, name), 'utf8').trim().split('\n').map((line) => Number(line.split(' ')[2]) / 1000));
    const percentiles = samplePercentiles(samplesMs);
    const at = (p: number) => percentiles.find(([percentile]) => percentile === p)![1];
    return { perSecond: tps, p50Ms: at(50), p99Ms: at(99), percentiles };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function createTables(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await createPkTable(client);
    await client.query(`create table bench_ceiling_balances (id int primary key, available_centavos bigint not null check (available_centavos >= 0),
        pending_out_centavos bigint not null, updated_at timestamptz not null);
      insert into bench_ceiling_balances select i, 1000000000000, 0, now() from generate_series(1, ${BALANCE_ROWS}) as i;
      create table bench_ceiling_transfers (id bigint generated always as identity primary key, balance_id int not null,
        amount_centavos bigint not null, created_at timestamptz not null);
      analyze;`);
  } finally {
    await client.end();
  }
}

/** The figure of a ceiling: the median round's rate, with that round's latencies; every round in the note. */
function figureOf(name: string, unit: Figure['unit'], how: string, runs: Run[]): Figure {
  const run = runs.find((r) => r.perSecond === median(runs.map((r) => r.perSecond)))!;
  const rounds = runs.map((r) => Math.round(r.perSecond)).join(' / ');
  return {
    group: 'ceilings', name, value: run.perSecond, unit, p50Ms: run.p50Ms, p99Ms: run.p99Ms, percentiles: run.percentiles,
    note: `${how}, ${SECONDS} s a run; median of ${runs.length} rounds (${rounds} ${unit}), the three run in turn in each round`,
  };
}

async function main(): Promise<void> {
  progress(`${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const database = `mps_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(SERVER_URL, `create database ${database}`);
  const databaseUrl = databaseUrlWithName(SERVER_URL, database);
  let bare: BareFastify | null = null;
  try {
    await createTables(databaseUrl);
    bare = await startBareFastify({ pkDatabaseUrl: databaseUrl });
    const hello: autocannon.Options = { url: `${bare.url}/hello` };
    // JIT, and the pool's 10 connections opened, before anything counts.
    await load('warm-up', { ...hello, duration: 2 });
    await load('warm-up', { ...roundRobinPk(bare.url), duration: 2 });
    const runs: Record<'hello' | 'pk' | 'pgbench', Run[]> = { hello: [], pk: [], pgbench: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      runs.hello.push(await load('GET /hello', hello));
      runs.pk.push(await load('GET /pk/{id}', roundRobinPk(bare.url)));
      runs.pgbench.push(await pgbench(databaseUrl));
      progress(`round ${round}/${ROUNDS}: /hello ${Math.round(runs.hello.at(-1)!.perSecond)} req/s, /pk/{id} ${Math.round(runs.pk.at(-1)!.perSecond)} req/s, pgbench ${Math.round(runs.pgbench.at(-1)!.perSecond)} tps`);
    }
    progress(`load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    reportFigures([
      figureOf('bare Fastify GET /hello', 'req/s', `autocannon, ${CONNECTIONS} connections`, runs.hello),
      figureOf('PK select through pg behind Fastify (GET /pk/{id})', 'req/s',
        `autocannon, ${CONNECTIONS} connections, ${PK_ROWS} rows round-robin, pg.Pool of 10`, runs.pk),
      figureOf('pgbench, one debit + one insert a transaction', 'tps', `${PGBENCH_CLIENTS} clients, -j 2, ${BALANCE_ROWS} balance rows at random`, runs.pgbench),
    ]);
  } finally {
    // The server first: dropping the database `with (force)` would cut its pool's connections under it.
    await bare?.stop();
    await adminQuery(SERVER_URL, `drop database if exists ${database} with (force)`);
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
