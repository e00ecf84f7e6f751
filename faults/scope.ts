// A scenario's lifetime: an abort signal its loops obey, the clean-ups that always run, and the hard timeout that fails it.
import { setMaxListeners } from 'node:events';

export class ScenarioAborted extends Error {
  constructor() {
    super('scenario aborted');
    this.name = 'ScenarioAborted';
  }
}

export class Scope {
  private readonly controller = new AbortController();

  constructor() {
    // Every sleeping client loop listens on this signal: dozens of listeners are expected, not a leak.
    setMaxListeners(0, this.controller.signal);
  }
  private readonly cleanups: Array<{ what: string; run: () => unknown }> = [];

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  abort(): void {
    this.controller.abort();
  }

  /** Registers a clean-up; they run last-in first-out, each bounded, whatever happened before. */
  defer(what: string, run: () => unknown): void {
    this.cleanups.push({ what, run });
  }

  /** Sleeps `ms`, or throws ScenarioAborted as soon as the scope is aborted (so a timed-out scenario unwinds). */
  sleep(ms: number): Promise<void> {
    return sleep(ms, this.signal);
  }

  async dispose(log: (line: string) => void): Promise<void> {
    while (this.cleanups.length > 0) {
      const { what, run } = this.cleanups.pop()!;
      try {
        // A clean-up that hangs must not hang the whole run: 20 s each, then the next one.
        await Promise.race([Promise.resolve().then(run), sleep(20_000).then(() => { throw new Error('timed out after 20 s'); })]);
      } catch (error) {
        log(`clean-up "${what}" failed: ${(error as Error).message}`);
      }
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ScenarioAborted());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ScenarioAborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export type ScenarioOutcome = { kind: 'done' } | { kind: 'error'; error: unknown } | { kind: 'timeout' };

/**
 * Runs `body` with a fresh scope and a hard timeout. On timeout the scope is aborted (loops stop, sleeps
 * throw) and its clean-ups run anyway (children killed, servers closed), so the next scenario starts clean.
 */
export async function runBounded(timeoutMs: number, body: (scope: Scope) => Promise<void>, log: (line: string) => void, outer?: Scope): Promise<ScenarioOutcome> {
  const scope = new Scope();
  const onOuterAbort = () => scope.abort();
  outer?.signal.addEventListener('abort', onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ScenarioOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
  });
  const run = body(scope).then<ScenarioOutcome, ScenarioOutcome>(() => ({ kind: 'done' }), (error) => ({ kind: 'error', error }));
  const outcome = await Promise.race([run, timeout]);
  clearTimeout(timer);
  scope.abort();
  // Give the body a moment to unwind from its aborted sleeps before the clean-ups pull the rug.
  await Promise.race([run, sleep(2_000)]);
  await scope.dispose(log);
  outer?.signal.removeEventListener('abort', onOuterAbort);
  return outcome;
}
