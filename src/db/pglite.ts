// Database adapter for the embedded PGlite (PostgreSQL compiled to WASM): one connection in this process,
// so transactions run one at a time. The default of `npm start`; several processes need PostgreSQL.
import { AsyncLocalStorage } from 'node:async_hooks';
import { PGlite, types, type Transaction as PGliteTransaction } from '@electric-sql/pglite';
import type { Database, QueryResult, Transaction } from './database.ts';
import { int8ToNumber, TransactionEndedError } from './database.ts';
import { CommitHooks } from './commit-hooks.ts';
import { PendingWrites } from './pending-writes.ts';
import { CoalescingNotifier } from './notifier.ts';

export interface PgliteOptions {
  /** Folder of the database files; undefined keeps everything in memory. */
  dataDir?: string;
  /**
   * Start from this snapshot of a data directory (`dumpDataDir`) instead of an empty cluster: the tests
   * clone one migrated template per file, as they do on PostgreSQL, which skips initdb and migrations.
   */
  loadDataDir?: Blob;
  onBackgroundError?: (error: unknown, context: string) => void;
}

/** Thrown instead of the deadlock PGlite would hit (its one connection is held by the open transaction). */
export class ReentrantQueryError extends Error {
  constructor() {
    super('db.query was called inside db.transaction on PGlite: use the transaction handle instead');
    this.name = 'ReentrantQueryError';
  }
}

/** The embedded adapter, which can also snapshot its data directory (for `loadDataDir`, and `mps backup`). */
export interface PgliteDatabase extends Database {
  /** A tarball of the data directory, taken between two statements (none runs meanwhile); gzip-compressed if asked. */
  dumpDataDir(compression?: 'none' | 'gzip'): Promise<Blob>;
}

export async function openPglite(options: PgliteOptions = {}): Promise<PgliteDatabase> {
  const onBackgroundError = options.onBackgroundError ?? (() => {});
  // One options object: PGlite(dataDir, options) ignores `options` when dataDir is undefined (in memory).
  const pglite = new PGlite({
    dataDir: options.dataDir,
    loadDataDir: options.loadDataDir,
    parsers: { [types.INT8]: int8ToNumber },
  });
  await pglite.waitReady;
  const insideTransaction = new AsyncLocalStorage<true>();
  const pgliteTransactions = new WeakMap<Transaction, PGliteTransaction>();

  const notifier = new CoalescingNotifier(async (batch) => {
    await pglite.query('select pg_notify(channel, payload) from unnest($1::text[], $2::text[]) as n(channel, payload)', [
      batch.map((n) => n.channel),
      batch.map((n) => n.payload),
    ]);
  }, onBackgroundError);

  const database: PgliteDatabase = {
    kind: 'pglite',
    connections: 1,
    async query<Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>> {
      if (insideTransaction.getStore()) throw new ReentrantQueryError();
      const result = await pglite.query<Row>(sql, params as unknown[] | undefined);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      if (insideTransaction.getStore()) throw new ReentrantQueryError();
      const committed = new CommitHooks();
      const value = await pglite.transaction((pgliteTx) =>
        insideTransaction.run(true, async () => {
          // PGlite runs one statement at a time: a write awaited only before the commit saves no round trip
          // here, but it must still have succeeded before the commit, and settled before a rollback.
          const pending = new PendingWrites();
          let ending = false;
          const tx: Transaction = {
            async query<Row>(sql: string, params?: readonly unknown[]) {
              if (ending) throw new TransactionEndedError();
              const result = await pgliteTx.query<Row>(sql, params as unknown[] | undefined);
              return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
            },
            afterCommit: (hook) => committed.add(hook),
            notifyAfterCommit: (channel, payload = '') => committed.add(() => notifier.notify(channel, payload)),
            awaitBeforeCommit: (write) => {
              if (ending) throw new TransactionEndedError();
              pending.add(write);
            },
          };
          pgliteTransactions.set(tx, pgliteTx);
          try {
            const result = await work(tx);
            await pending.succeeded();
            ending = true;
            return result;
          } catch (error) {
            await pending.settled();
            ending = true;
            throw pending.causeOf(error);
          }
        }),
      );
      committed.run(onBackgroundError);
      return value;
    },
    async executeScript(tx, sql) {
      // PGlite's `query` takes one statement; its transaction's `exec` runs a whole script.
      const pgliteTx = pgliteTransactions.get(tx);
      if (!pgliteTx) throw new Error('executeScript needs a transaction of this database');
      await pgliteTx.exec(sql);
    },
    listen: (channel, handler) => notifier.listen(channel, handler, async () => {
      const unlisten = await pglite.listen(channel, handler);
      return async () => {
        await unlisten();
      };
    }),
    notify: (channel, payload) => notifier.notify(channel, payload),
    flushNotifications: () => notifier.flush(),
    async close() {
      await notifier.flush();
      await pglite.close();
    },
    dumpDataDir: (compression = 'none') => pglite.dumpDataDir(compression),
  };
  return database;
}
