// The Database interface every module talks to, with one adapter for PostgreSQL and one for PGlite.
// Both return the same JS types for the same SQL: int8 → number (throws past 2^53), numeric → string,
// timestamptz → Date, json/jsonb → parsed value.

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

/** Anything a store can run one statement on: a transaction, or the database for a single read. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<Row>>;
}

/** A READ COMMITTED transaction. Stores take it as their first parameter. */
export interface Transaction extends Queryable {
  /**
   * Runs `hook` once this transaction has committed, before the transaction call returns; never if it
   * rolls back. For effects that must not be seen before the commit (a wake-up, a metric of committed
   * work); a hook that throws is reported, not thrown. A hook added inside a savepoint that is rolled back
   * to still runs if the transaction commits: add hooks after the savepoint's work is settled, or only
   * for effects that tolerate it (a wake-up).
   */
  afterCommit(hook: () => void): void;
  /**
   * `Database.notify(channel, payload)` once this transaction has committed (never if it rolls back),
   * through the database's coalescing notifier (docs/architecture.md, rule 9: NOTIFY inside a money
   * transaction would take PostgreSQL's commit-time notify lock and serialize every payment).
   */
  notifyAfterCommit(channel: string, payload?: string): void;
  /**
   * Lets a write go on without waiting for its answer: the transaction waits for `write` before it
   * commits, and rolls back with its error if it failed. On PostgreSQL the statements after it are sent at
   * once, behind it on the same connection (pipeline mode), so a write whose result nothing needs — an
   * event, say — costs no round trip of its own. Not for a write inside a savepoint the work may roll back
   * to: its failure would still refuse the commit. Like `query`, refused once the transaction is ending.
   */
  awaitBeforeCommit(write: Promise<unknown>): void;
}

export type DatabaseKind = 'postgres' | 'pglite';

/**
 * What a read needs: single statements, and a transaction when several must read one snapshot. The work
 * given to `transaction` only reads and returns what it read (db/replica.ts may run it again elsewhere).
 */
export interface ReadDatabase extends Queryable {
  /** Runs `work` in one transaction at READ COMMITTED; commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
}

/**
 * Where reads that may lag go (db/replica.ts): a streaming replica when DATABASE_REPLICA_URL names one,
 * else the primary itself.
 */
export interface LaggingReads extends ReadDatabase {
  /**
   * The same reads for one request that reads several times (a page and its total, an export's batches):
   * they all go to one server — once one of them has gone to the primary, the rest follow — so a request
   * never mixes a lagging replica's answers with the primary's newer ones.
   */
  session(): ReadDatabase;
}

export interface Database extends ReadDatabase {
  readonly kind: DatabaseKind;
  /** How many transactions can run at once (the pool's size; PGlite runs one at a time). */
  readonly connections: number;
  /** Runs a multi-statement SQL script (migrations) inside `tx`. */
  executeScript(tx: Transaction, sql: string): Promise<void>;
  /**
   * Subscribes to a channel, in this process and through the database: a notification reaches every
   * listener at least once, this process's at once (db/notifier.ts). `onReconnect` runs after a lost
   * listening connection is back (notifications may have been missed).
   */
  listen(channel: string, handler: (payload: string) => void, onReconnect?: () => void): Promise<() => Promise<void>>;
  /** Tells this process's listeners now, and every process's through the database (coalesced with others pending alike). */
  notify(channel: string, payload?: string): void;
  /** Resolves when every notification asked for so far has been sent. */
  flushNotifications(): Promise<void>;
  close(): Promise<void>;
}

/** PostgreSQL error codes the service reacts to by name. */
export const SqlState = {
  UNIQUE_VIOLATION: '23505',
  CHECK_VIOLATION: '23514',
  FOREIGN_KEY_VIOLATION: '23503',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
  ADMIN_SHUTDOWN: '57P01',
  CRASH_SHUTDOWN: '57P02',
  CANNOT_CONNECT_NOW: '57P03',
  TOO_MANY_CONNECTIONS: '53300',
  IN_FAILED_SQL_TRANSACTION: '25P02',
} as const;

export interface DatabaseErrorFields {
  code?: string;
  constraint?: string;
}

/**
 * Thrown by a transaction's handle used after its transaction began to end (its work resolved or threw):
 * a statement sent then would land in whatever the connection runs next, or commit on its own.
 */
export class TransactionEndedError extends Error {
  constructor() {
    super('a statement was sent through a transaction that had already ended');
    this.name = 'TransactionEndedError';
  }
}

/** The SQLSTATE and constraint name of a database error, or undefined for anything else. */
export function databaseErrorOf(error: unknown): DatabaseErrorFields | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return undefined;
  return { code, constraint: typeof constraint === 'string' ? constraint : undefined };
}

const UNREACHABLE_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN']);

/** True when the database could not be reached or dropped the connection (answered 503, not 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (UNREACHABLE_NETWORK_CODES.has(code)) return true;
    if (code.startsWith('08')) return true; // connection exception class
    if (code === SqlState.ADMIN_SHUTDOWN || code === SqlState.CRASH_SHUTDOWN || code === SqlState.CANNOT_CONNECT_NOW) return true;
    // The server refused a new connection because all its slots are taken: as unreachable as a refused socket.
    if (code === SqlState.TOO_MANY_CONNECTIONS) return true;
  }
  // node-postgres's own words for a connection that died: while a query ran, before one was sent ("not
  // queryable": a pooled client whose connection was cut after its last query), or while connecting.
  // "Query read timeout": the pool's query_timeout fired (the server stopped answering).
  return typeof message === 'string'
    && /Connection terminated|not queryable|timeout exceeded when trying to connect|Query read timeout/i.test(message);
}

export class DatabaseUnavailableError extends Error {
  constructor(message = 'database unreachable') {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

/** int8 values come back as numbers; one past 2^53 would lose centavos silently, so it throws instead. */
export function int8ToNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is beyond 2^53`);
  return value;
}
