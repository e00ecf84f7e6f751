// Statements a transaction's work has sent but does not wait for (Transaction.settleAtCommit), shared by
// both adapters: the transaction waits for them at its commit and fails with the first one's error.

export class PendingStatements {
  private readonly answers: Array<Promise<void>> = [];
  private failure: { error: unknown } | undefined;

  /** Takes a statement's answer; a rejection is kept for `settle`, never left unhandled. */
  add(statement: Promise<unknown>): void {
    this.answers.push(statement.then(
      () => undefined,
      (error: unknown) => {
        this.failure ??= { error };
      },
    ));
  }

  /** Resolves once every statement is answered; rejects with the first failure, in the order they were sent. */
  async settle(): Promise<void> {
    await Promise.all(this.answers);
    if (this.failure) throw this.failure.error;
  }
}
