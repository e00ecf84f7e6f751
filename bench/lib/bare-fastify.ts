// The HTTP ceiling of the benchmarks: bench/bare-fastify.ts (Fastify without hooks) as a child process on a
// port the kernel says is free — not in the benchmark's own process, where autocannon runs.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { anyFreePort } from '../../faults/ports.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BareFastify {
  /** http://127.0.0.1:PORT — GET /hello, GET /qr-shaped, and GET /pk/{id} when a database was given. */
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

export interface BareFastifyOptions {
  /** The body of GET /qr-shaped (a QR resource as the service answers it); `{}` by default. */
  qrShaped?: unknown;
  /** A database with bench/ceilings.ts's `bench_pk` table: GET /pk/{id} reads it through a pg.Pool of 10. */
  pkDatabaseUrl?: string;
}

/** Resolves once it listens; rejects with its output if it exits first. */
export async function startBareFastify(options: BareFastifyOptions = {}): Promise<BareFastify> {
  const port = await anyFreePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-fastify.ts', String(port), JSON.stringify(options.qrShaped ?? {})], {
    cwd: root,
    env: { ...process.env, ...(options.pkDatabaseUrl ? { BENCH_PK_DATABASE_URL: options.pkDatabaseUrl } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data.toString();
      if (output.includes('bare fastify on')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => reject(new Error(`bench/bare-fastify.ts exited with ${child.exitCode}:\n${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
