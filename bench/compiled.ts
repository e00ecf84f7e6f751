// What running compiled JavaScript (`node dist/main.js`, what `npm start` runs) changes against running the
// TypeScript sources through tsx (`node --import tsx src/main.ts`, what `npm start` ran before and
// `npm run dev` runs now), measured in the same run, alternating the two so that the machine's load falls
// on both alike (BENCHMARKS.md):
//   - start: from spawning the process to the first 200 from /healthz, on an in-memory database;
//   - steady state: GET /api/v2/simple-qrs/{id} (a POS poll, a cached read through the whole stack),
//     autocannon after a warm-up.
//   npx tsx bench/compiled.ts [start rounds, 5] [throughput rounds, 3] [seconds per throughput run, 10]
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { buildIfStale } from '../scripts/build.mjs';
import { waitUntilReady } from './ready.ts';

const START_ROUNDS = Number(process.argv[2] ?? 5);
const THROUGHPUT_ROUNDS = Number(process.argv[3] ?? 3);
const SECONDS = Number(process.argv[4] ?? 10);
const PORT = 4600 + Math.floor(Math.random() * 300);
const BASE = `http://127.0.0.1:${PORT}`;
const CONNECTIONS = 20;

const WAYS = {
  tsx: ['--import', 'tsx', 'src/main.ts'],
  dist: ['dist/main.js'],
} as const;
type Way = keyof typeof WAYS;

function startService(way: Way): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [...WAYS[way]], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(PORT), DATABASE_URL: 'memory://', LOG_LEVEL: 'warn', RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function until(predicate: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    if (await predicate().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${what} within 60 s`);
}

/** Milliseconds from spawn to the first 200 from /healthz. */
async function startTime(way: Way): Promise<number> {
  const started = performance.now();
  const { child } = startService(way);
  try {
    await until(async () => (await fetch(`${BASE}/healthz`)).ok, `${way}: no /healthz`);
    return performance.now() - started;
  } finally {
    await stop(child);
  }
}

/** Requests per second (and p99) of the QR poll, after a 3 s warm-up. */
async function throughput(way: Way): Promise<{ rps: number; p99: number }> {
  const { child, output } = startService(way);
  try {
    await waitUntilReady(BASE);
    await until(async () => /mk_test_\w+/.test(output()), `${way}: no sandbox key printed`);
    const apiKey = /mk_test_\w+/.exec(output())![0];
    const created = await fetch(`${BASE}/api/v2/simple-qrs`, {
      method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ business_code: 1001, amount: 10 }),
    });
    const { id } = (await created.json()) as { id: string };
    const options = { url: `${BASE}/api/v2/simple-qrs/${id}`, headers: { 'x-api-key': apiKey }, connections: CONNECTIONS };
    await autocannon({ ...options, duration: 3 });
    const result = await autocannon({ ...options, duration: SECONDS });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${way}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    return { rps: Math.round(result.requests.average), p99: result.latency.p99 };
  } finally {
    await stop(child);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

buildIfStale();
const starts: Record<Way, number[]> = { tsx: [], dist: [] };
for (let round = 1; round <= START_ROUNDS; round++) {
  for (const way of ['tsx', 'dist'] as const) starts[way].push(Math.round(await startTime(way)));
  process.stdout.write(`start round ${round}: tsx ${starts.tsx.at(-1)} ms, dist ${starts.dist.at(-1)} ms\n`);
}
const rates: Record<Way, number[]> = { tsx: [], dist: [] };
for (let round = 1; round <= THROUGHPUT_ROUNDS; round++) {
  const line: string[] = [];
  for (const way of ['tsx', 'dist'] as const) {
    const { rps, p99 } = await throughput(way);
    rates[way].push(rps);
    line.push(`${way} ${rps} req/s (p99 ${p99} ms)`);
  }
  process.stdout.write(`throughput round ${round}: ${line.join(', ')}\n`);
}
const startRatio = median(starts.dist) / median(starts.tsx);
const rateRatio = median(rates.dist) / median(rates.tsx);
process.stdout.write(`\nstart to /healthz, median: tsx ${median(starts.tsx)} ms, dist ${median(starts.dist)} ms → dist/tsx ${startRatio.toFixed(2)}×\n`);
process.stdout.write(`GET QR, median: tsx ${median(rates.tsx)} req/s, dist ${median(rates.dist)} req/s → dist/tsx ${rateRatio.toFixed(2)}×\n`);
