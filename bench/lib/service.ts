// Starts the service as production runs it — the compiled build, `node dist/main.js` (built first when
// stale) — as a child process of a benchmark, on a free port, and stops it with SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { anyFreePort } from '../../faults/ports.ts';
import { buildIfStale } from '../../scripts/build.mjs';
import { waitUntilReady } from '../ready.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BenchService {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The service with `env` over a benchmark's defaults (RATE_LIMIT=off, sandbox, info logs to /dev/null),
 * on a port the kernel says is free; resolves once its /readyz answers (a ROLE=worker process serves it
 * too). Rejects if the process exits first: a port taken meanwhile must fail the run, not let it measure
 * whatever else answers there. BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles it.
 */
export async function startBenchService(env: Record<string, string>): Promise<BenchService> {
  buildIfStale();
  const port = await anyFreePort();
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'dist/main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin', RATE_LIMIT: 'off', PUBLIC_RATE_LIMIT: 'off',
      MODE: 'sandbox', LOG_LEVEL: 'info', SANDBOX_SETTLEMENT: 'off', ...env, PORT: String(port),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await Promise.race([
      waitUntilReady(url),
      exited.then(() => { throw new Error(`the service on port ${port} exited (code ${child.exitCode}) before it was ready`); }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, process: child, stop };
}
