// QR benchmarks (BENCHMARKS.md): POST /api/v2/simple-qrs with its image, and GET /api/v2/simple-qrs/{id}
// (POS polling) with and without If-None-Match, each beside a baseline measured in the same run.
// Runs the real service (the compiled `dist/main.js`, bench/lib/service.ts) as its own process on a fresh PostgreSQL database with
// RATE_LIMIT=off, and a bare Fastify process as the baseline.
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/qr.ts [seconds per run, 5] [rounds, 3]
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import autocannon from 'autocannon';
import { availableParallelism, loadavg } from 'node:os';
import { databaseUrlWithName } from '../src/db/url.ts';
import { adminQuery } from './scratch-database.ts';
import QRCode from 'qrcode';
import { autocannonPercentiles, reportFigures, type Figure } from './lib/figures.ts';
import { startBareFastify, type BareFastify } from './lib/bare-fastify.ts';
import { qrReadRequests } from './lib/requests.ts';
import { startBenchService, type BenchService } from './lib/service.ts';

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const seconds = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);
/** The service's address, once started. */
let serviceUrl = '';
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef0123';
const CONNECTIONS = 50;

const admin = (sql: string) => adminQuery(serverUrl, sql);

interface Result {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  percentiles: Array<[number, number]>;
}

/** One autocannon run; fails on an error or an answer other than the case's own (cheap errors would flatter it). */
async function run(name: string, options: autocannon.Options, expected: string[] = ['200', '201']): Promise<Result> {
  const result = await autocannon({ connections: CONNECTIONS, duration: seconds, ...options });
  const statuses = Object.keys((result as unknown as { statusCodeStats?: Record<string, unknown> }).statusCodeStats ?? {});
  const unexpected = statuses.filter((status) => !expected.includes(status));
  if (result.errors > 0 || unexpected.length > 0) throw new Error(`${name}: ${result.errors} errors, statuses ${statuses.join(', ')} (expected ${expected.join(' or ')})`);
  const summary = {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    percentiles: autocannonPercentiles(result),
  };
  process.stdout.write(`${JSON.stringify({ ...summary, percentiles: undefined })}\n`);
  return summary;
}

async function json(method: string, path: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(`${serviceUrl}${path}`, {
    method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<any>;
}

/** The `qrcode` library's own PNG data URL, single thread, for the create baseline. */
async function qrcodeLibraryRate(payload: string): Promise<number> {
  const started = performance.now();
  let count = 0;
  while (performance.now() - started < 3000) {
    await QRCode.toDataURL(payload, { errorCorrectionLevel: 'M' });
    count++;
  }
  return Math.round(count / ((performance.now() - started) / 1000));
}

async function main(): Promise<void> {
  const loadAverageAtStart = loadavg().map((l) => l.toFixed(2));
  process.stdout.write(`cores ${availableParallelism()}, load average ${loadAverageAtStart.join(' ')}\n`);
  const database = `mps_bench_${randomBytes(4).toString('hex')}`;
  await admin(`create database ${database}`);
  let bare: BareFastify | null = null;
  let service: BenchService | null = null;
  try {
    service = await startBenchService({
      DATABASE_URL: databaseUrlWithName(serverUrl, database), ADMIN_TOKEN, PUBLIC_BASE_URL: 'https://pay.example.com',
    });
    serviceUrl = service.url;
    const merchant = await json('POST', '/admin/v1/merchants', { name: 'Bench Tienda Pérez', city: 'La Paz' }, { authorization: `Bearer ${ADMIN_TOKEN}` });
    const key = { 'x-api-key': merchant.api_key as string };
    const createBody = JSON.stringify({ business_code: merchant.business_code, amount: 150.5, description: 'Order 42', qr_expiration: '+1d' });

    // POS polling: 200 QRs polled round-robin.
    const qrs: any[] = [];
    for (let i = 0; i < 200; i++) qrs.push(await json('POST', '/api/v2/simple-qrs', JSON.parse(createBody), key));
    bare = await startBareFastify({ qrShaped: qrs[0] });
    const etags = new Map<string, string>();
    for (const qr of qrs) {
      const response = await fetch(`${serviceUrl}/api/v2/simple-qrs/${qr.id}`, { headers: key });
      etags.set(qr.id, response.headers.get('etag')!);
    }
    const roundRobin = (withTag: boolean) => qrReadRequests(qrs.map((qr) => qr.id as string), merchant.api_key as string, withTag ? etags : undefined);

    const libraryRate = await qrcodeLibraryRate(qrs[0].qr_payload);
    process.stdout.write(`qrcode.toDataURL single thread: ${libraryRate}/s\n`);

    const warm = { duration: 2 };
    const hello: autocannon.Options = { url: `${bare.url}/hello` };
    await run('warm-up', { ...hello, ...warm });
    await run('warm-up', { url: `${serviceUrl}`, requests: roundRobin(false), ...warm });
    // The machine is shared and its speed swings from one run to the next (bare /hello alone has moved by
    // 2x between two runs 30 s apart). So every case is run between two runs of the bare /hello baseline
    // and divided by their mean, in ROUNDS rounds; the report gives each case's median round.
    const cases: Array<[string, autocannon.Options, string[]?]> = [
      ['bare Fastify GET, static QR-sized body', { url: `${bare.url}/qr-shaped` }],
      ['service GET /healthz (the app\'s hooks, no database)', { url: `${serviceUrl}/healthz` }],
      ['GET /api/v2/simple-qrs/{id}', { url: `${serviceUrl}`, requests: roundRobin(false) }],
      // One QR through a fixed URL and headers, like the baselines: autocannon's per-request setupRequest
      // of the round-robin cases costs the client (on the same 2 cores) more than a static request.
      ['GET one QR, static request', { url: `${serviceUrl}/api/v2/simple-qrs/${qrs[0].id}`, headers: key }],
      ['GET /api/v2/simple-qrs/{id} + If-None-Match (304)', { url: `${serviceUrl}`, requests: roundRobin(true) }, ['304']],
      ['POST /api/v2/simple-qrs (with image)', {
        url: `${serviceUrl}/api/v2/simple-qrs`, method: 'POST', body: createBody,
        headers: { 'content-type': 'application/json', ...key },
      }],
    ];
    type Measured = Result & { baseline: number; ratio: number };
    const rounds: Measured[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results: Measured[] = [];
      let before = await run('bare Fastify GET /hello', hello);
      for (const [name, options, expected] of cases) {
        const result = await run(name, options, expected);
        const after = await run('bare Fastify GET /hello', hello);
        const baseline = (before.requestsPerSecond + after.requestsPerSecond) / 2;
        results.push({ ...result, baseline: Math.round(baseline), ratio: result.requestsPerSecond / baseline });
        before = after;
      }
      rounds.push(results);
    }
    const median = <T>(items: T[], key: (item: T) => number) => [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)]!;
    const results = cases.map((_, index) => median(rounds.map((r) => r[index]!), (r) => r.ratio));
    // Sending the ~1.7 KB resource costs bare Fastify a good part of its /hello rate: the QR-sized bare
    // route (case 0) is the like-for-like baseline of the GETs, reported beside /hello.
    const sameBodyRatios = cases.map((_, index) => rounds.map((r) => r[index]!.requestsPerSecond / r[0]!.requestsPerSecond));
    mkdirSync('bench/results', { recursive: true });
    const report = { rounds, at: new Date().toISOString(), cores: availableParallelism(), loadAverageAtStart, loadAverageAtEnd: loadavg().map((l) => l.toFixed(2)), seconds, connections: CONNECTIONS, qrcodeLibraryToDataUrlPerSecond: libraryRate, results };
    writeFileSync('bench/results/qr-latest.json', `${JSON.stringify(report, null, 2)}\n`);
    const percent = (ratio: number) => `${(ratio * 100).toFixed(0)}`;
    process.stdout.write(`load average at the end: ${report.loadAverageAtEnd.join(' ')}\n`);
    process.stdout.write('\nmedian round per case (ratio to the mean of the bare /hello runs just before and after it):\n');
    process.stdout.write('| run | req/s | p50 ms | p99 ms | non-2xx | vs bare /hello around it | each round | vs bare QR-sized body, each round |\n|---|---:|---:|---:|---:|---:|---:|---:|\n');
    results.forEach((r, index) => {
      const perRound = rounds.map((round) => percent(round[index]!.ratio)).join(' / ');
      const sameBody = sameBodyRatios[index]!.map(percent).join(' / ');
      process.stdout.write(`| ${r.name} | ${r.requestsPerSecond} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${percent(r.ratio)} % | ${perRound} % | ${sameBody} % |\n`);
    });
    reportFigures(figuresOf(results, rounds));
  } finally {
    await service?.stop();
    await bare?.stop();
    await admin(`drop database if exists ${database} with (force)`);
  }
}

/** The cases as report figures: each its median round, divided by the bare /hello runs around it, with the targets. */
function figuresOf(results: Array<Result & { baseline: number; ratio: number }>, rounds: Array<Array<{ ratio: number }>>): Figure[] {
  const [, healthz, roundRobin, staticRead, notModified, create] = results;
  const perRound = (index: number) => `ratio per round ${rounds.map((round) => round[index]!.ratio.toFixed(2)).join(' / ')}; ${CONNECTIONS} connections, ${seconds} s per run, median of ${rounds.length} rounds`;
  const figure = (r: Result & { baseline: number; ratio: number }, index: number, target?: Figure['target']): Figure => ({
    group: 'qr', name: r.name, value: r.requestsPerSecond, unit: 'req/s', p50Ms: r.p50, p99Ms: r.p99,
    ceiling: { name: 'bare Fastify GET /hello', value: r.baseline }, percentiles: r.percentiles, target, note: perRound(index),
  });
  return [
    figure(healthz!, 1),
    figure(roundRobin!, 2, { text: '≥ 0.60 × bare Fastify', met: roundRobin!.ratio >= 0.6 }),
    figure(staticRead!, 3, { text: '≥ 0.60 × bare Fastify', met: staticRead!.ratio >= 0.6 }),
    figure(notModified!, 4, { text: 'higher than the 200 read', met: notModified!.ratio > roundRobin!.ratio }),
    figure(create!, 5, { text: '≥ 900 req/s', met: create!.requestsPerSecond >= 900 }),
  ];
}

await main();
