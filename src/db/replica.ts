// Reads that may lag behind the primary — lists, movements, statements, the journal export — go to a
// streaming replica when DATABASE_REPLICA_URL names one (docs/operators.md#read-replica). Everything that
// must read its own writes (a QR's status and its long poll, idempotency keys, balances, every write)
// stays on the primary: those reads are never handed a ReadDatabase from here.
//
// The replica is an offload, never a dependency: a read it cannot serve — it is unreachable, starting,
// shutting down, or it cancelled the query because replaying the primary's changes conflicted with it —
// is run again on the primary, so losing the replica costs the primary its load, not the API its lists.
import { databaseErrorOf, isDatabaseUnavailable, SqlState, type Database, type ReadDatabase } from './database.ts';

/**
 * The replica, running a read again on `primary` when the replica could not serve it. Rerunning is safe
 * because a ReadDatabase's work only reads and returns what it read: nothing of a failed attempt has
 * left the process. (The journal export reads in keyset batches, one `query` each, so a batch that moves
 * to the primary continues exactly where the last one stopped.)
 */
export function replicaWithFallback(replica: Database, primary: Database, onFallback: (error: unknown) => void): ReadDatabase {
  const retryOnPrimary = (error: unknown): boolean => {
    if (!isDatabaseUnavailable(error) && !isRecoveryConflict(error)) return false;
    onFallback(error);
    return true;
  };
  return {
    async query(sql, params) {
      try {
        return await replica.query(sql, params);
      } catch (error) {
        if (!retryOnPrimary(error)) throw error;
        return primary.query(sql, params);
      }
    },
    async transaction(work) {
      try {
        return await replica.transaction(work);
      } catch (error) {
        if (!retryOnPrimary(error)) throw error;
        return primary.transaction(work);
      }
    },
  };
}

/**
 * A hot standby cancels a query whose snapshot would block replay (after max_standby_streaming_delay)
 * with SQLSTATE 40001, "canceling statement due to conflict with recovery"; a read of the replica never
 * runs at a stricter isolation, so 40001 from it means nothing else.
 */
function isRecoveryConflict(error: unknown): boolean {
  return databaseErrorOf(error)?.code === SqlState.SERIALIZATION_FAILURE;
}
