// Load test of POST /api/v2/transfers on PostgreSQL (RATE_LIMIT=off), against a pgbench baseline run in
// the same invocation: one debit (the ledger's guarded UPDATE of a balance) plus one INSERT per transaction,
// which is the least any transfer must cost the database. Reports the ratio app / baseline for many
// merchants, and throughput and p99 when every transfer comes from one merchant (one hot balance row).
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/transfers.ts
//
// Options (environment): BENCH_DURATION seconds per phase (default 10), BENCH_CONNECTIONS HTTP connections
// (default 32), BENCH_MERCHANTS (default 200), BENCH_PGBENCH_CLIENTS (default 10, the service's pool size).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import * as ledger from '../src/ledger/service.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import { centavos } from '../src/money.ts';
import { waitUntilReady } from './ready.ts';

const run = promisify(execFile);
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const durationSeconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const merchantCount = Number(process.env.BENCH_MERCHANTS ?? 200);
const pgbenchClients = Number(process.env.BENCH_PGBENCH_CLIENTS ?? 10);
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const PORT = 3900 + Math.floor(Math.random() * 50);

interface Merchant { businessCode: number; apiKey: string }


async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function startService(databaseUrl: string): Promise<ChildProcess> {
  // BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service.
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env, DATABASE_URL: databaseUrl, PORT: String(PORT), RATE_LIMIT: 'off', ADMIN_TOKEN,
      SANDBOX_SETTLEMENT: 'off', MODE: 'sandbox', LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitUntilReady(`http://127.0.0.1:${PORT}`);
    return child;
  } catch (error) {
    child.kill();
    throw error;
  }
}

async function createMerchants(count: number): Promise<Merchant[]> {
  const merchants: Merchant[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`http://127.0.0.1:${PORT}/admin/v1/merchants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Bench ${i}`, ach_enabled: true }),
    });
    const body = (await response.json()) as { business_code: number; api_key: string };
    merchants.push({ businessCode: body.business_code, apiKey: body.api_key });
  }
  return merchants;
}

/** The debit of ledger's debitAvailable plus one insert: a transfer's irreducible work (on copies of the tables). */
function baselineScript(first: number, last: number): string {
  return `\\set bc random(${first}, ${last})
BEGIN;
UPDATE bench_baseline_balances SET available_centavos = available_centavos - 100, pending_out_centavos = pending_out_centavos + 100, updated_at = now()
 WHERE business_code = :bc AND available_centavos >= 100;
INSERT INTO bench_baseline_transfers (business_code, amount_centavos, created_at) VALUES (:bc, 100, now());
END;
`;
}

async function pgbench(databaseUrl: string, scriptText: string): Promise<{ tps: number }> {
  const script = path.join(os.tmpdir(), `mps-bench-${process.pid}-${randomBytes(3).toString('hex')}.sql`);
  fs.writeFileSync(script, scriptText);
  const url = new URL(databaseUrl);
  try {
    const { stdout } = await run('pgbench', [
      '-n', '-f', script, '-c', String(pgbenchClients), '-j', '2', '-T', String(durationSeconds),
      '-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username) || 'postgres', url.pathname.slice(1),
    ], { maxBuffer: 10 * 1024 * 1024 });
    return { tps: Number(/tps = ([0-9.]+)/.exec(stdout)?.[1] ?? 'NaN') };
  } finally {
    fs.rmSync(script, { force: true });
  }
}

async function loadTransfers(merchants: Merchant[]): Promise<{ created: number; perSecond: number; p99Ms: number; p50Ms: number; other: number }> {
  let counter = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${PORT}`,
    connections,
    duration: durationSeconds,
    requests: [{
      method: 'POST',
      path: '/api/v2/transfers',
      setupRequest: (request) => {
        const merchant = merchants[counter++ % merchants.length]!;
        return {
          ...request,
          headers: { 'content-type': 'application/json', 'x-api-key': merchant.apiKey, 'idempotency-key': randomUUID() },
          body: JSON.stringify({
            business_code: merchant.businessCode, amount: '1.00', currency: 'BOB', reference: 'bench',
            destination: { type: 'bank_account', bank_code: 1001, account_number: '1000-2000-3000', account_titular: 'Bench Payee' },
          }),
        };
      },
    }],
  });
  const created = result['2xx'];
  return { created, perSecond: created / durationSeconds, p99Ms: result.latency.p99, p50Ms: result.latency.p50, other: result.non2xx + result.errors };
}

async function main(): Promise<void> {
  const name = `mps_bench_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  const databaseUrl = databaseUrlWithName(serverUrl, name);
  let service: ChildProcess | null = null;
  try {
    const db = await openPostgres({ url: databaseUrl });
    await migrate(db);
    // The baseline works on copies of the tables, so the service's ledger stays consistent.
    await db.query('create table bench_baseline_transfers (id bigint generated always as identity primary key, business_code bigint not null, amount_centavos bigint not null, created_at timestamptz not null)');
    service = await startService(databaseUrl);
    const merchants = await createMerchants(merchantCount);
    for (const merchant of merchants) {
      await db.transaction((tx) => ledger.credit(tx, { businessCode: merchant.businessCode, amountCentavos: centavos(100_000_000), reference: 'bench funding', snapshot: {}, now: new Date() }));
    }

    await db.query('create table bench_baseline_balances (like balances including all)');
    await db.query('insert into bench_baseline_balances select * from balances');
    const first = merchants[0]!.businessCode;
    const last = merchants.at(-1)!.businessCode;
    const baseline = await pgbench(databaseUrl, baselineScript(first, last));
    const many = await loadTransfers(merchants);
    // Rows committed by one transaction share its xmin: transfers per transaction is the mean batch size.
    const batches = await db.query<{ transfers: number; transactions: number }>(
      'select count(*)::int8 as transfers, count(distinct xmin::text)::int8 as transactions from transfers where business_code = any($1::bigint[])',
      [merchants.map((merchant) => merchant.businessCode)],
    );
    // BENCH_SKIP_HOT=1 measures only the many-merchants case (e.g. while profiling).
    const hot = process.env.BENCH_SKIP_HOT ? null : await loadTransfers(merchants.slice(0, 1));
    const { rows } = await db.query<{ total: number }>('select count(*) as total from transfers');
    const check = await ledger.checkLedger(db);
    await db.close();

    const ratio = many.perSecond / baseline.tps;
    const lines = [
      `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), load average ${os.loadavg().map((n) => n.toFixed(1)).join(' ')}`,
      `pgbench baseline (debit + insert, ${pgbenchClients} clients, ${durationSeconds}s): ${baseline.tps.toFixed(0)} tps`,
      `POST /api/v2/transfers, ${merchants.length} merchants, ${connections} connections, ${durationSeconds}s: ${many.perSecond.toFixed(0)} created/s, p50 ${many.p50Ms} ms, p99 ${many.p99Ms} ms, non-2xx ${many.other}, ${(batches.rows[0]!.transfers / batches.rows[0]!.transactions).toFixed(1)} transfers per transaction`,
      `ratio app / baseline: ${ratio.toFixed(2)} (target >= 0.30)`,
      hot
        ? `hot merchant (one balance), ${connections} connections, ${durationSeconds}s: ${hot.perSecond.toFixed(0)} created/s, p50 ${hot.p50Ms} ms, p99 ${hot.p99Ms} ms, non-2xx ${hot.other}`
        : 'hot merchant: skipped (BENCH_SKIP_HOT)',
      // autocannon counts answers received within the duration; requests still in flight at the end are
      // committed but not counted, so the table holds up to `connections` more rows per phase.
      `transfers in the database: ${rows[0]!.total} (${many.created + (hot?.created ?? 0)} 201s counted); ledger check ${check.violations.length === 0 && check.problems.length === 0 ? "passes" : "FAILS"}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    if (service && service.exitCode === null) {
      const exited = new Promise((resolve) => service!.once('exit', resolve));
      service.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    }
    await admin((client) => client.query(`drop database if exists ${name} with (force)`));
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
