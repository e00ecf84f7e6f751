// Starts the service as production runs it — the compiled build, `node dist/main.js` (built first when
// stale) — as a child process of a benchmark, and stops it with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../../scripts/build.mjs';
import { waitUntilReady } from '../ready.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BenchService {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The service on `port` with `env` over a benchmark's defaults (RATE_LIMIT=off, sandbox, info logs to
 * /dev/null); resolves once /readyz answers (a ROLE=worker process serves it too, on its own port).
 * BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles it.
 */
export async function startBenchService(port: number, env: Record<string, string>): Promise<BenchService> {
  await buildIfStale();
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'dist/main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(port), RATE_LIMIT: 'off', PUBLIC_RATE_LIMIT: 'off',
      MODE: 'sandbox', LOG_LEVEL: 'info', SANDBOX_SETTLEMENT: 'off', ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  try {
    await waitUntilReady(url);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, process: child, stop };
}
