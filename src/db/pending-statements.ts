// Statements a transaction has sent without waiting for their answers (Transaction.settleAtCommit),
// shared by both adapters: they are answered before the transaction reports its outcome, and the first
// of them to fail — in the order they were sent, not the order their answers were read — is the error
// a rolled-back transaction reports.

import { databaseErrorOf, SqlState } from './database.ts';

export class PendingStatements {
  private readonly answers: Array<Promise<void>> = [];
  private readonly failures: Array<{ sent: number; error: unknown }> = [];

  /** Takes a sent statement's answer; a rejection is kept, never left unhandled. */
  add(answer: Promise<unknown>): void {
    const sent = this.answers.length;
    this.answers.push(answer.then(
      () => undefined,
      (error: unknown) => {
        this.failures.push({ sent, error });
      },
    ));
  }

  /** Resolves once every statement is answered, whatever the answers. */
  async answered(): Promise<void> {
    await Promise.all(this.answers);
  }

  /** After `answered`: the error of the first statement sent that failed, if any. */
  firstFailure(): { error: unknown } | undefined {
    if (this.failures.length === 0) return undefined;
    const first = this.failures.reduce((a, b) => (b.sent < a.sent ? b : a));
    return { error: first.error };
  }

  /**
   * After `answered`: the error a failed work reports. A statement the work awaited after a settled one
   * failed got only "current transaction is aborted"; the settled statement's error is the cause.
   */
  causeOf(workError: unknown): unknown {
    const settled = this.firstFailure();
    return settled && databaseErrorOf(workError)?.code === SqlState.IN_FAILED_TRANSACTION ? settled.error : workError;
  }
}
