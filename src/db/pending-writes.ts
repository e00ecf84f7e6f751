// Writes a transaction sent without waiting for their answers (Transaction.awaitBeforeCommit), shared by
// both adapters: the commit waits for every one of them and is refused if any failed.

export class PendingWrites {
  private readonly writes: Array<Promise<unknown>> = [];

  /** Holds `write` for the commit. Its rejection is handled here, so it never goes unhandled meanwhile. */
  add(write: Promise<unknown>): void {
    write.catch(() => {});
    this.writes.push(write);
  }

  /** Resolves once every write has succeeded; rejects with the first failure, in the order they were sent. */
  async succeeded(): Promise<void> {
    for (const write of this.writes) await write;
  }

  /** Resolves once every write has settled, however: nothing may still run when the transaction ends. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.writes);
  }
}
