// Webhook delivery benchmark on PostgreSQL (figures in BENCHMARKS.md).
//   npx tsx bench/webhooks-throughput.ts [events=5000]
// BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server; the bench
// creates a scratch database there and drops it at the end. Everything runs in this one process: a fast
// local receiver (node:http, answers 200 at once), the service's own dispatcher job in the WorkerRunner
// (woken by LISTEN/NOTIFY, as in production), and the code that emits events (each event's deliveries are
// written with it, by the database).
//  1. baseline: the receiver's raw throughput from a plain keep-alive HTTP client loop (same body, same
//     concurrency as the dispatcher's connection pool), in this same run;
//  2. drain: N events committed first, then the workers start: deliveries/s until the last arrives;
//  3. sustained: events committed one per transaction by 32 concurrent writers while the workers run;
//  4. latency: one event per transaction at a steady 100/s; time from the emit's commit to receipt;
//  5. payment → receipt: sandbox payments of a multi-use QR (POST /api/v2/sandbox/simple-qrs/{id}/payments,
//     the payment, its ledger credit, its fee if any and its simple_qr.payment_received event in one
//     transaction) at a steady 50/s, alternately to a merchant without fees and one on a 1.5 % + 0.30
//     plan; time from sending the payment request to the receiver getting the webhook, for each.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import * as events from '../src/events/service.ts';
import { buildApp } from '../src/http/app.ts';
import { createLogger } from '../src/kernel/logging.ts';
import * as merchants from '../src/merchants/service.ts';
import { systemClock } from '../src/time.ts';
import * as webhooks from '../src/webhooks/service.ts';
import { destinationPolicyOf } from '../src/webhooks/ssrf.ts';
import { backgroundJobs } from '../src/workers/jobs.ts';
import { WorkerRunner } from '../src/workers/runner.ts';
import { createAppContext } from '../src/composition.ts';
import { databaseUrlWithName } from '../src/db/url.ts';
import { reportFigures, samplePercentiles, type Figure } from './lib/figures.ts';
import { FEE_PLAN, FEE_PLAN_TEXT } from './lib/fees.ts';

const EVENTS = Number(process.argv[2] ?? 5000);
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SAMPLE_DATA = { qr: { id: '6f1c2a7e-2d7b-4c38-9a57-1f0a2b3c4d5e', amount: 150.5, currency: 'BOB', status: 'PAID' }, payment: { id: 1, amount: 150.5, account_number: '*****-4821' } };

interface Receiver { url: string; count: number; arrivals: Map<string, number>; close(): Promise<void>; waitFor(n: number): Promise<void> }

async function startReceiver(): Promise<Receiver> {
  let waiter: { n: number; resolve: () => void } | null = null;
  const receiver: Receiver = {
    url: '', count: 0, arrivals: new Map(),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
    waitFor: (n) => new Promise((resolve) => { if (receiver.count >= n) resolve(); else waiter = { n, resolve }; }),
  };
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    request.resume();
    request.on('end', () => {
      const id = request.headers['webhook-id'];
      if (typeof id === 'string') receiver.arrivals.set(id, performance.now());
      receiver.count++;
      response.writeHead(200).end();
      if (waiter && receiver.count >= waiter.n) { waiter.resolve(); waiter = null; }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

async function baseline(receiver: Receiver, requests: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const body = JSON.stringify({ id: 'evt_x', type: 'simple_qr.payment_received', created_at: new Date().toISOString(), data: SAMPLE_DATA });
  const url = new URL(receiver.url);
  let next = 0;
  const send = () => new Promise<void>((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => resolve());
    });
    request.on('error', reject);
    request.end(body);
  });
  const started = performance.now();
  await Promise.all(Array.from({ length: 64 }, async () => { while (next++ < requests) await send(); }));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return requests / seconds;
}

async function emitBatch(db: Database, owner: events.EventOwner, count: number): Promise<void> {
  for (let done = 0; done < count; done += 500) {
    await db.transaction(async (tx) => {
      for (let i = 0; i < Math.min(500, count - done); i++) await events.emit(tx, owner, 'simple_qr.payment_received', SAMPLE_DATA, systemClock.now());
    });
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const name = `mps_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = databaseUrlWithName(SERVER_URL, name);
  const db = await openPostgres({ url, maxConnections: 10 });
  const receiver = await startReceiver();
  try {
    await migrate(db);
    const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT: 'off' });
    const context = createAppContext({ config, db, clock: systemClock });
    const created = await merchants.createMerchant(db, { name: 'Bench' }, 'sandbox', new Date());
    const owner: events.EventOwner = { kind: 'merchant', businessCode: created.merchant.business_code };
    await webhooks.createEndpoint(db, owner, { url: receiver.url }, destinationPolicyOf(config), new Date(), context.secrets);
    // Phase 5's second merchant: every payment to it also posts its fee movement and journal entry.
    const charged = await merchants.createMerchant(db, { name: 'Bench with fees', plan: FEE_PLAN }, 'sandbox', new Date());
    const chargedOwner: events.EventOwner = { kind: 'merchant', businessCode: charged.merchant.business_code };
    await webhooks.createEndpoint(db, chargedOwner, { url: receiver.url }, destinationPolicyOf(config), new Date(), context.secrets);

    const baselineRate = await baseline(receiver, EVENTS);
    receiver.count = 0;

    // 2. drain
    await emitBatch(db, owner, EVENTS);
    const runner = new WorkerRunner(db, createLogger('silent'), backgroundJobs(context));
    let started = performance.now();
    await runner.start();
    await receiver.waitFor(EVENTS);
    const drainRate = EVENTS / ((performance.now() - started) / 1000);

    // 3. sustained: 32 writers, one event per transaction, while the workers run
    receiver.count = 0;
    let emitted = 0;
    started = performance.now();
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (emitted++ < EVENTS) {
        await db.transaction((tx) => events.emit(tx, owner, 'simple_qr.payment_received', SAMPLE_DATA, systemClock.now()));
      }
    }));
    const emitSeconds = (performance.now() - started) / 1000;
    await receiver.waitFor(EVENTS);
    const sustainedRate = EVENTS / ((performance.now() - started) / 1000);

    // 4. latency at a steady 100 events/s
    const latencyEvents = Math.min(1000, EVENTS);
    const committedAt = new Map<string, number>();
    receiver.count = 0;
    receiver.arrivals.clear();
    for (let i = 0; i < latencyEvents; i++) {
      const due = performance.now() + 10;
      const event = await db.transaction((tx) => events.emit(tx, owner, 'simple_qr.payment_received', SAMPLE_DATA, systemClock.now()));
      committedAt.set(event.id, performance.now());
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    await receiver.waitFor(latencyEvents);
    const latencies = [...committedAt].map(([id, at]) => receiver.arrivals.get(id)! - at).sort((a, b) => a - b);

    // 5. through the API, on loopback: a real QR payment (the sandbox rail) of a multi-use QR, whose one
    // simple_qr.payment_received event commits with the payment; timed from sending the request.
    const app = await buildApp(context, { logger: createLogger('silent') });
    await context.lifecycle.start(); // the render threads and key cache, as startService runs them
    await app.listen({ port: 0, host: '127.0.0.1' });
    const apiBase = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v2`;
    const multiUseQr = async (merchant: merchants.CreatedMerchant) => {
      const headers = { 'content-type': 'application/json', 'x-api-key': merchant.apiKey };
      const response = await fetch(`${apiBase}/simple-qrs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ business_code: merchant.merchant.business_code, amount: '10.50', is_multi_use: true, description: 'webhook latency' }),
      });
      if (response.status !== 201) throw new Error(`POST /simple-qrs answered ${response.status}`);
      return { headers, id: ((await response.json()) as { id: string }).id };
    };
    // Fees off and on in turn, so both see the same machine.
    const payees = { free: await multiUseQr(created), charged: await multiUseQr(charged) };
    const apiRequests = Math.min(500, EVENTS);
    const apiLatencies: Record<keyof typeof payees, number[]> = { free: [], charged: [] };
    receiver.count = 0;
    for (let i = 0; i < 2 * apiRequests; i++) {
      const payee = i % 2 === 0 ? 'free' : 'charged';
      const qr = payees[payee];
      const due = performance.now() + 20;
      const sent = performance.now();
      const response = await fetch(`${apiBase}/sandbox/simple-qrs/${qr.id}/payments`, { method: 'POST', headers: qr.headers, body: '{}' });
      if (response.status !== 201) throw new Error(`POST /sandbox/simple-qrs/{id}/payments answered ${response.status}`);
      await response.arrayBuffer();
      await receiver.waitFor(i + 1);
      apiLatencies[payee].push(performance.now() - sent);
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    const fees = await db.query<{ count: number }>("select count(*)::int as count from movements where type = 'fee' and business_code = $1::bigint", [charged.merchant.business_code]);
    if (fees.rows[0]!.count !== apiRequests) throw new Error(`expected ${apiRequests} fee movements, found ${fees.rows[0]!.count}`);
    apiLatencies.free.sort((a, b) => a - b);
    apiLatencies.charged.sort((a, b) => a - b);
    await context.lifecycle.stop(() => app.close());
    await runner.stop();

    const row = (label: string, value: string) => process.stdout.write(`${label.padEnd(58)} ${value}\n`);
    process.stdout.write(`\nWebhook delivery on PostgreSQL, ${EVENTS} events, one endpoint, receiver on loopback (${new Date().toISOString()})\n`);
    row('baseline: plain keep-alive HTTP client loop (64 conns)', `${baselineRate.toFixed(0)} req/s`);
    row('drain: events committed first, then workers start', `${drainRate.toFixed(0)} deliveries/s (${((drainRate / baselineRate) * 100).toFixed(0)}% of baseline)`);
    row('sustained: 32 writers emitting while workers deliver', `${sustainedRate.toFixed(0)} deliveries/s (emit alone: ${(EVENTS / emitSeconds).toFixed(0)} events/s)`);
    row(`latency, commit → receipt, ${latencyEvents} events at 100/s`, `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`);
    for (const [payee, label] of [['free', 'no fees'], ['charged', `fees ${FEE_PLAN_TEXT}`]] as const) {
      const latenciesOf = apiLatencies[payee];
      row(`latency, QR payment request → receipt, ${label}, ${apiRequests}`, `p50 ${percentile(latenciesOf, 50).toFixed(1)} ms, p99 ${percentile(latenciesOf, 99).toFixed(1)} ms, max ${latenciesOf.at(-1)!.toFixed(1)} ms`);
    }
    const ceiling = { name: 'plain keep-alive HTTP client, 64 connections', value: Math.round(baselineRate) };
    const round1 = (ms: number) => Math.round(ms * 10) / 10;
    reportFigures([
      { group: 'webhooks', name: `drain: ${EVENTS} committed events, then the workers start`, value: Math.round(drainRate), unit: 'deliveries/s', ceiling,
        target: { text: '≥ 1,500 deliveries/s', met: drainRate >= 1500 }, note: 'claim, sign (Standard Webhooks) and record each delivery (written with its event); receiver in the same process' },
      { group: 'webhooks', name: '32 writers emit while the workers deliver', value: Math.round(sustainedRate), unit: 'deliveries/s', ceiling,
        note: `bounded by the emit rate: ${(EVENTS / emitSeconds).toFixed(0)} events/s committed` },
      { group: 'webhooks', name: `commit → receipt, ${latencyEvents} events at 100/s`, value: round1(percentile(latencies, 99)), unit: 'ms',
        p50Ms: round1(percentile(latencies, 50)), p99Ms: round1(percentile(latencies, 99)), percentiles: samplePercentiles(latencies) },
      ...(['free', 'charged'] as const).map((payee): Figure => ({
        group: 'webhooks',
        name: `QR payment request → signed webhook received, ${apiRequests} payments, ${payee === 'free' ? 'no fees' : `fees on (${FEE_PLAN_TEXT})`}`,
        value: round1(percentile(apiLatencies[payee], 99)), unit: 'ms',
        p50Ms: round1(percentile(apiLatencies[payee], 50)), p99Ms: round1(percentile(apiLatencies[payee], 99)), percentiles: samplePercentiles(apiLatencies[payee]),
        target: { text: 'p99 < 100 ms', met: percentile(apiLatencies[payee], 99) < 100 },
        note: 'one payment at a time, ≤ 50/s, the two merchants in turn (one without fees, one whose payments each post a fee movement and entry too)',
      })),
    ]);
  } finally {
    await receiver.close();
    await db.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
