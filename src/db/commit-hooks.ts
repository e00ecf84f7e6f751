// What a transaction does once it has committed (Transaction.afterCommit), shared by both adapters.
// Hooks run in order, right after COMMIT and before the transaction call returns; never after a rollback.

export class CommitHooks {
  private readonly hooks: Array<() => void> = [];

  add(hook: () => void): void {
    this.hooks.push(hook);
  }

  /**
   * Runs every hook. A hook that throws is reported and the others still run: the transaction has
   * committed, so its caller must get its result, not an error that suggests nothing happened.
   */
  run(onError: (error: unknown, context: string) => void): void {
    for (const hook of this.hooks) {
      try {
        hook();
      } catch (error) {
        onError(error, 'after-commit hook');
      }
    }
  }
}
