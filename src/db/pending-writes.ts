// Writes a transaction sent without waiting for their answers (Transaction.awaitBeforeCommit), shared by
// both adapters: the commit waits for every one of them and is refused if any failed.
import { databaseErrorOf, SqlState } from './database.ts';

export class PendingWrites {
  private readonly writes: Array<Promise<unknown>> = [];
  private failure: { error: unknown } | null = null;

  /** Holds `write` for the commit. Its rejection is handled here, so it never goes unhandled meanwhile. */
  add(write: Promise<unknown>): void {
    write.catch((error: unknown) => {
      this.failure ??= { error };
    });
    this.writes.push(write);
  }

  /** Resolves once every write has succeeded; rejects with the first failure, in the order they were added. */
  async succeeded(): Promise<void> {
    for (const write of this.writes) await write;
  }

  /** Resolves once every write has settled, however: nothing may still run when the transaction ends. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.writes);
  }

  /**
   * What to report for `error`, which ended the work: a statement refused because the transaction was
   * already aborted (25P02) names no cause; the write whose failure aborted it does.
   */
  causeOf(error: unknown): unknown {
    return this.failure && databaseErrorOf(error)?.code === SqlState.IN_FAILED_SQL_TRANSACTION ? this.failure.error : error;
  }
}
