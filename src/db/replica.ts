// Reads that may lag behind the primary — lists, movements, statements, the journal export — go to a
// streaming replica when DATABASE_REPLICA_URL names one (docs/architecture.md#read-replica). Everything that
// must read its own writes (a QR's status and its long poll, idempotency keys, balances, every write)
// stays on the primary: those reads are never handed the LaggingReads made here.
//
// The replica is an offload, never a dependency. A read the replica fails — it is unreachable or hung,
// starting, cancelled the query for a recovery conflict, or has not yet replayed the migration a query
// needs — runs again on the primary. After such a failure the replica is left alone for a while (the
// breaker below), so a replica that hangs costs one request its timeout, not every request.
import { databaseErrorOf, isDatabaseUnavailable, type Database, type LaggingReads, type ReadDatabase } from './database.ts';

/** How long reads skip the replica after it failed one. */
export const REPLICA_PAUSE_MS = 30_000;

/** The primary serving the lagging reads itself (no DATABASE_REPLICA_URL). */
export function primaryReads(primary: Database): LaggingReads {
  return {
    query: (sql, params) => primary.query(sql, params),
    transaction: (work) => primary.transaction(work),
    session: () => primary,
  };
}

/**
 * Reads of `replica`, run again on `primary` when the replica fails them. Running a read again is safe
 * because a ReadDatabase's work only reads and returns what it read: nothing of a failed attempt has
 * left the process. Only database errors move a read (an error of the work itself, such as a 404, would
 * be the same on the primary).
 */
export function replicaWithFallback(
  replica: Database,
  primary: Database,
  options: { onFallback: (error: unknown) => void; now?: () => number },
): LaggingReads {
  const now = options.now ?? (() => performance.now());
  let pausedUntil = -Infinity;
  const replicaFailed = (error: unknown): boolean => {
    if (!isDatabaseUnavailable(error) && databaseErrorOf(error) === undefined) return false;
    pausedUntil = now() + REPLICA_PAUSE_MS;
    options.onFallback(error);
    return true;
  };
  /** One server for a session's reads: the replica until it fails one, the primary from then on. */
  const session = (): ReadDatabase => {
    let onPrimary = now() < pausedUntil;
    const run = async <T>(read: (database: ReadDatabase) => Promise<T>): Promise<T> => {
      if (onPrimary) return read(primary);
      try {
        return await read(replica);
      } catch (error) {
        if (!replicaFailed(error)) throw error;
        onPrimary = true;
        return read(primary);
      }
    };
    return {
      query: (sql, params) => run((database) => database.query(sql, params)),
      transaction: (work) => run((database) => database.transaction(work)),
    };
  };
  return {
    query: (sql, params) => session().query(sql, params),
    transaction: (work) => session().transaction(work),
    session,
  };
}
