// Database adapter for a PostgreSQL server through a `pg` pool, plus one dedicated listening connection.
import pg from 'pg';
import type { Database, QueryResult, Transaction } from './database.ts';
import { int8ToNumber } from './database.ts';
import { CoalescingNotifier } from './notifier.ts';

const INT8_OID = 20;
const INT8_ARRAY_OID = 1016;
const NUMERIC_ARRAY_OID = 1231;

/**
 * A one-dimensional array of numbers (`{1,-2,NULL}`) read element by element: number texts hold no
 * quotes, commas or braces, so splitting is exact for int8[] and numeric[].
 */
function arrayOf<T>(transform: (text: string) => T): (text: string) => Array<T | null> {
  return (text) => (text === '{}' ? [] : text.slice(1, -1).split(',').map((item) => (item === 'NULL' ? null : transform(item))));
}

// Per-pool type parsers, so the adapter never mutates pg's global parser table. They make `pg` return what
// PGlite returns: int8 (and its arrays) as numbers that throw past 2^53, numeric arrays as strings — pg's
// own default would read numeric[] through parseFloat, a float on money.
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return int8ToNumber;
    if (oid === INT8_ARRAY_OID) return arrayOf(int8ToNumber);
    if (oid === NUMERIC_ARRAY_OID) return arrayOf((text) => text);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/**
 * Names parameterised statements so each pooled connection parses a statement once and reuses it (the
 * driver prepares a named statement the first time a connection sees it). Every SQL text of the service
 * is a constant or one of a few constant variants, so the names stay few; past the cap a text simply runs
 * unnamed, and a statement without parameters always does (the simple protocol runs migration scripts).
 */
class StatementNames {
  private names = new Map<string, string>();
  constructor(private readonly cap = 500) {}

  of(sql: string, params: readonly unknown[] | undefined): string | undefined {
    if (!params || params.length === 0) return undefined;
    let name = this.names.get(sql);
    if (name === undefined && this.names.size < this.cap) {
      name = `mps_${this.names.size}`;
      this.names.set(sql, name);
    }
    return name;
  }
}

export interface PostgresOptions {
  url: string;
  maxConnections?: number;
  onBackgroundError?: (error: unknown, context: string) => void;
}

export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const onBackgroundError = options.onBackgroundError ?? (() => {});
  const connections = options.maxConnections ?? 10;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: connections,
    types: typeParsers,
    connectionTimeoutMillis: 5_000,
    application_name: 'merchant-payments',
  });
  // An idle client losing its connection must not crash the process; the next checkout reconnects.
  pool.on('error', (error) => onBackgroundError(error, 'idle pool connection'));
  const listener = new Listener(options.url, onBackgroundError);
  const statementNames = new StatementNames();
  const run = (client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]) =>
    client.query({ text: sql, values: params as unknown[] | undefined, name: statementNames.of(sql, params) });
  const notifier = new CoalescingNotifier(async (batch) => {
    await pool.query('select pg_notify(channel, payload) from unnest($1::text[], $2::text[]) as n(channel, payload)', [
      batch.map((n) => n.channel),
      batch.map((n) => n.payload),
    ]);
  }, (error) => onBackgroundError(error, 'notify'));

  const database: Database = {
    kind: 'postgres',
    connections,
    async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
      const result = await run(pool, sql, params);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      const afterCommit: Array<{ channel: string; payload: string }> = [];
      let broken = false;
      // node-postgres takes the pool's own error listener off a client while it is checked out. A connection
      // dropped in that time (failover, restart, a network reset, pg_terminate_backend on a transaction waiting
      // for a row lock) then raises an 'error' event nobody handles, and Node ends the process. The query in
      // flight rejects by itself (the request answers 503); this listener keeps the event handled and marks
      // the client so it is destroyed, not reused. It stays on a broken client: that client is discarded, and
      // a late second event from it must not find it unguarded either.
      const onConnectionError = (error: Error) => {
        broken = true;
        onBackgroundError(error, 'transaction connection');
      };
      client.on('error', onConnectionError);
      try {
        await client.query('begin isolation level read committed');
        const tx: Transaction = {
          async query<Row>(sql: string, params?: readonly unknown[]) {
            const result = await run(client, sql, params);
            return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
          },
          notifyAfterCommit(channel, payload = '') {
            afterCommit.push({ channel, payload });
          },
        };
        const value = await work(tx);
        await client.query('commit');
        for (const n of afterCommit) notifier.notify(n.channel, n.payload);
        return value;
      } catch (error) {
        try {
          await client.query('rollback');
        } catch {
          broken = true; // the connection itself failed: do not return it to the pool
        }
        throw error;
      } finally {
        if (!broken) client.off('error', onConnectionError);
        client.release(broken);
      }
    },
    async executeScript(tx, sql) {
      // Without parameters, pg uses the simple query protocol, which runs several statements.
      await tx.query(sql);
    },
    listen: (channel, handler, onReconnect) => listener.subscribe(channel, handler, onReconnect),
    notify: (channel, payload) => notifier.notify(channel, payload),
    flushNotifications: () => notifier.flush(),
    async close() {
      await notifier.flush();
      await listener.close();
      await pool.end();
    },
  };
  return database;
}

type Subscription = { channel: string; handler: (payload: string) => void; onReconnect?: () => void };

/**
 * One connection that LISTENs for every subscription of this process. When it drops, it reconnects with
 * exponential back-off plus jitter, LISTENs again, and tells subscribers to poll (they may have missed
 * notifications meanwhile).
 */
class Listener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private subscriptions = new Set<Subscription>();
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly onBackgroundError: (error: unknown, context: string) => void,
  ) {}

  async subscribe(channel: string, handler: (payload: string) => void, onReconnect?: () => void) {
    const subscription: Subscription = { channel, handler, onReconnect };
    this.subscriptions.add(subscription);
    try {
      await this.ensureConnected();
      if (this.client && this.listenersOf(channel) === 1) await this.client.query(`listen ${quoteIdentifier(channel)}`);
    } catch (error) {
      // The database may be down right now: keep the subscription and keep trying in the background,
      // so the service still starts and answers 503 until the database is back.
      this.onBackgroundError(error, 'listening connection');
      this.scheduleReconnect();
    }
    return async () => {
      this.subscriptions.delete(subscription);
      if (this.client && this.listenersOf(channel) === 0) {
        await this.client.query(`unlisten ${quoteIdentifier(channel)}`).catch(() => {});
      }
    };
  }

  private listenersOf(channel: string): number {
    let count = 0;
    for (const s of this.subscriptions) if (s.channel === channel) count++;
    return count;
  }

  private ensureConnected(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'merchant-payments-listener' });
    client.on('notification', (message) => {
      for (const s of this.subscriptions) if (s.channel === message.channel) s.handler(message.payload ?? '');
    });
    client.on('error', (error) => {
      this.onBackgroundError(error, 'listening connection');
      this.dropAndReconnect(client);
    });
    client.on('end', () => this.dropAndReconnect(client));
    await client.connect();
    for (const channel of new Set([...this.subscriptions].map((s) => s.channel))) {
      await client.query(`listen ${quoteIdentifier(channel)}`);
    }
    this.client = client;
    this.failures = 0;
  }

  private dropAndReconnect(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const backoff = Math.min(30_000, 250 * 2 ** this.failures);
    const delay = backoff / 2 + Math.random() * (backoff / 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.ensureConnected().then(
        () => {
          for (const s of this.subscriptions) s.onReconnect?.();
        },
        (error) => {
          this.failures++;
          this.onBackgroundError(error, 'listening connection reconnect');
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
