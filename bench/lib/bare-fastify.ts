// The HTTP ceiling of the benchmarks: bench/bare-fastify.ts (Fastify without hooks) as a child process on a
// port the kernel says is free — not in the benchmark's own process, where autocannon runs.
import { spawn } from 'node:child_process';
import type autocannon from 'autocannon';
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
  /** A database with the `bench_pk` table (createPkTable): GET /pk/{id} reads it through a pg.Pool of 10. */
  pkDatabaseUrl?: string;
}

/** Rows of `bench_pk`: a load reads them round-robin (roundRobinPk). */
export const PK_ROWS = 1_000;

/** The table GET /pk/{id} reads: a row is a small JSON document, about what the service reads for one resource. */
export async function createPkTable(db: { query(sql: string): Promise<unknown> }): Promise<void> {
  await db.query(`create table bench_pk (id int primary key, body jsonb not null);
    insert into bench_pk select i, jsonb_build_object('id', i, 'name', 'Row ' || i, 'amount', i * 1.5, 'currency', 'BOB', 'created_at', now())
      from generate_series(1, ${PK_ROWS}) as i;
    analyze bench_pk;`);
}

/** autocannon options for GET /pk/{id}, the ids in turn: every request reads another row, as the service's reads do. */
export function roundRobinPk(url: string): autocannon.Options {
  let next = 0;
  return {
    url,
    requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: `/pk/${(next++ % PK_ROWS) + 1}` }) }],
  };
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
