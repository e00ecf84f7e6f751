// Database adapter for a PostgreSQL server through a `pg` pool, plus one dedicated listening connection.
import pg from 'pg';
import type { Database, QueryResult, Transaction } from './database.ts';
import { int8ToNumber, isDatabaseUnavailable, SqlState, TransactionEndedError } from './database.ts';
import { CommitHooks } from './commit-hooks.ts';
import { PendingWrites } from './pending-writes.ts';
import { CoalescingNotifier } from './notifier.ts';
import { Listener } from './postgres-listener.ts';

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

const DEFAULT_QUERY_TIMEOUT_MS = 15_000;

export interface PostgresOptions {
  url: string;
  maxConnections?: number;
  /**
   * Longest a statement may wait for its answer before the request gets a 503 (default 15 s): a network
   * cut without a reset, or a server that stopped answering, must not hold requests until TCP gives up
   * (minutes). 0: no limit (migrations, which may legitimately run long).
   */
  queryTimeoutMs?: number;
  onBackgroundError?: (error: unknown, context: string) => void;
  /** Every transaction read-only (default_transaction_read_only): a replica's pool, where a write is a bug. */
  readOnly?: boolean;
}

export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const onBackgroundError = options.onBackgroundError ?? (() => {});
  const connections = options.maxConnections ?? 10;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: connections,
    types: typeParsers,
    connectionTimeoutMillis: 5_000,
    query_timeout: options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
    // Pooled connections whose peer vanished without a reset are found by TCP keep-alive, not left to hang.
    keepAlive: true,
    application_name: 'merchant-payments',
    // Statements go out without waiting for the answer to the one before, inside a begun transaction only
    // (Transaction.awaitBeforeCommit): each keeps its own Sync, and the transaction block makes a failure
    // abort what follows it.
    pipeline: true,
    ...(options.readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
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
  }, onBackgroundError);

  const database: Database = {
    kind: 'postgres',
    connections,
    async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
      const result = await run(pool, sql, params);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      const committed = new CommitHooks();
      const pending = new PendingWrites();
      /** Set once the work is over: the handle then refuses statements (TransactionEndedError). */
      let ending = false;
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
        // Awaited, not pipelined with the work's first statement: a cancel landing on BEGIN would fail it
        // alone, and the statements behind it would run and commit one by one outside any transaction.
        await client.query('begin isolation level read committed');
        const tx: Transaction = {
          async query<Row>(sql: string, params?: readonly unknown[]) {
            if (ending) throw new TransactionEndedError();
            const result = await run(client, sql, params);
            return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
          },
          afterCommit: (hook) => committed.add(hook),
          notifyAfterCommit: (channel, payload = '') => committed.add(() => notifier.notify(channel, payload)),
          awaitBeforeCommit: (write) => {
            if (ending) throw new TransactionEndedError();
            pending.add(write);
          },
        };
        const value = await work(tx);
        await pending.succeeded();
        ending = true;
        // COMMIT of a transaction a failed statement aborted answers ROLLBACK, not an error: a failure the
        // work caught and carried on from must not pass for a commit.
        const { command } = await client.query('commit');
        if (command !== 'COMMIT') {
          throw Object.assign(new Error(`the transaction ended in ${command} at commit: a statement in it had failed`), {
            code: SqlState.IN_FAILED_SQL_TRANSACTION,
          });
        }
        committed.run(onBackgroundError);
        return value;
      } catch (thrown) {
        await pending.settled();
        ending = true;
        const error = pending.causeOf(thrown);
        // A dead or unanswering connection is destroyed, not asked to roll back (that would wait on it
        // again); the server rolls back what the closed connection left open.
        if (isDatabaseUnavailable(error)) broken = true;
        else {
          try {
            await client.query('rollback');
          } catch {
            broken = true; // the connection itself failed: do not return it to the pool
          }
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
    listen: (channel, handler, onReconnect) => notifier.listen(channel, handler, () => listener.subscribe(channel, handler, onReconnect)),
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
