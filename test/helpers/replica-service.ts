// The service with a real streaming replica (DATABASE_REPLICA_URL): a throwaway primary made with initdb,
// its replica made with pg_basebackup, both on ports of their own (never the shared test server), and the
// HTTP calls, queries and waits the replica suites share.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import pg from 'pg';
import { Cluster } from '../../faults/cluster.ts';
import { loadConfig } from '../../src/config.ts';
import { startService, type RunningService } from '../../src/startup.ts';
import { ADMIN_TOKEN } from './app.ts';
import { trackOpen } from './open-resources.ts';

/** The warning the service logs when it sends a read the replica failed to the primary. */
export const FALLBACK_WARNING = 'the read replica could not serve a read: sent to the primary';

export interface LoggedWarning {
  msg: string;
  reads?: number;
  error?: { sqlstate?: string; message?: string };
}

export interface ReplicaService {
  primary: Cluster;
  standby: Cluster;
  baseUrl: string;
  apiKey: string;
  businessCode: number;
  /** What the service logged at warn and above, parsed. */
  warnings: LoggedWarning[];
  queryOn<Row>(cluster: Cluster, sql: string, params?: unknown[]): Promise<Row[]>;
  /**
   * Waits until the standby has replayed every WAL record the primary has inserted so far — also those
   * no commit has flushed yet, such as a lock taken in a transaction still open. The WAL writer flushes
   * only up to the last asynchronous commit, so this makes one: a transaction that writes nothing but
   * its xid commits asynchronously, after every record inserted before it.
   */
  caughtUp(): Promise<void>;
  /** Polls until `check` holds (the replica replays within milliseconds; the bound is for a loaded machine). */
  eventually(check: () => Promise<boolean>, what: string): Promise<void>;
  call(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  get(url: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

export async function startReplicaService(): Promise<ReplicaService> {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-replica-'));
  let primary: Cluster | undefined;
  let standby: Cluster | undefined;
  let service: RunningService | undefined;
  let closed: (() => void) | undefined;
  const close = async () => {
    try {
      await service?.close();
      closed?.();
    } finally {
      for (const cluster of [standby, primary]) await cluster?.destroy();
      fs.rmSync(parent, { recursive: true, force: true });
    }
  };
  try {
    primary = await Cluster.create(parent);
    await primary.adminQuery('create database mps');
    standby = await Cluster.standbyOf(primary, parent);
    const config = loadConfig({
      DATABASE_URL: primary.url('mps'), DATABASE_REPLICA_URL: standby.url('mps'), PORT: '0', ADMIN_TOKEN,
      RATE_LIMIT: 'off', PUBLIC_RATE_LIMIT: 'off', LOG_LEVEL: 'silent', SANDBOX_SETTLEMENT: 'off',
    });
    const warnings: LoggedWarning[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) }) as unknown as FastifyBaseLogger;
    service = await startService(config, { log });
    closed = trackOpen('the service with a replica');
    const sandbox = await service.ready;
    if (!sandbox) throw new Error('a new database should have created the sandbox accounts');
    const address = service.app.server.address();
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

    const queryOn = async <Row>(cluster: Cluster, sql: string, params: unknown[] = []): Promise<Row[]> => {
      const client = new pg.Client({ connectionString: cluster.url('mps') });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows as Row[];
      } finally {
        await client.end();
      }
    };
    const eventually = async (check: () => Promise<boolean>, what: string) => {
      const deadline = Date.now() + 20_000;
      let last: unknown = null;
      for (;;) {
        try {
          if (await check()) return;
        } catch (error) {
          last = error; // a standby still starting refuses connections: try again
        }
        if (Date.now() > deadline) throw new Error(`the replica never showed ${what}${last ? ` (last error: ${String(last)})` : ''}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const caughtUp = async () => {
      const lsn = (await queryOn<{ lsn: string }>(primary!, 'select txid_current(), pg_current_wal_insert_lsn()::text as lsn'))[0]!.lsn;
      await eventually(async () => {
        return (await queryOn<{ done: boolean }>(standby!, 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [lsn]))[0]!.done;
      }, 'the primary\'s writes');
    };
    const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(baseUrl + url, {
        method,
        headers: { 'x-api-key': sandbox.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, headers: response.headers, body: await response.json() as any };
    };
    // Before any list: a replica that has not replayed the migrations yet would fail the read, which would
    // then go to the primary (and leave the replica alone for 30 s).
    await caughtUp();
    return {
      primary, standby, baseUrl, apiKey: sandbox.apiKey, businessCode: sandbox.businessCode, warnings,
      queryOn, caughtUp, eventually, call,
      get: (url, headers = {}) => call('GET', url, undefined, headers),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
