// Concurrent client loops that run until told to stop, and tallies of the answers they got.
import type { Exchange } from './http.ts';
import { ScenarioAborted, type Scope } from './scope.ts';

export interface Loops {
  /** Asks every loop to finish its current round, and waits for them. */
  stop(): Promise<void>;
}

export function runLoops(count: number, scope: Scope, body: (loop: number, round: number) => Promise<void>): Loops {
  let stopping = false;
  const loops = Array.from({ length: count }, async (_, loop) => {
    for (let round = 0; !stopping && !scope.aborted; round++) await body(loop, round);
  }).map((p) => p.catch((error) => {
    if (!(error instanceof ScenarioAborted)) throw error;
  }));
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** Counts of answers by status (`none` for a lost answer) and the slowest answer. */
export class Tally {
  readonly byStatus = new Map<string, number>();
  readonly samples5xx: string[] = [];
  /** Lost answers by what the client saw: a refused connection was never received; a reset may have been processed. */
  readonly lostBy = new Map<string, number>();
  /** 201s carrying Idempotent-Replayed: true (a retry after a lost answer met the stored outcome). */
  replayed = 0;
  requests = 0;
  maxMs = 0;

  add(exchange: Exchange): void {
    this.requests++;
    const key = exchange.status === null ? 'none' : String(exchange.status);
    this.byStatus.set(key, (this.byStatus.get(key) ?? 0) + 1);
    this.maxMs = Math.max(this.maxMs, exchange.ms);
    if (exchange.status === null) this.lostBy.set(exchange.error ?? '?', (this.lostBy.get(exchange.error ?? '?') ?? 0) + 1);
    if (exchange.headers?.get('idempotent-replayed') === 'true') this.replayed++;
    if (exchange.status !== null && exchange.status >= 500 && exchange.status !== 503 && this.samples5xx.length < 10) {
      this.samples5xx.push(`${exchange.route} → ${exchange.status} ${JSON.stringify(exchange.body).slice(0, 200)} at ${new Date(exchange.endedAt).toISOString()}`);
    }
  }

  count(status: string): number {
    return this.byStatus.get(status) ?? 0;
  }

  /** Answers 500–599 other than 503 (a 503 with Retry-After is the contract while the database is away). */
  errors5xx(): number {
    let n = 0;
    for (const [status, count] of this.byStatus) if (/^5\d\d$/.test(status) && status !== '503') n += count;
    return n;
  }

  describeLost(): string {
    return [...this.lostBy.entries()].sort((a, b) => b[1] - a[1]).map(([e, n]) => `${e}:${n}`).join(' ') || 'none';
  }

  describe(): string {
    return [...this.byStatus.entries()].sort().map(([s, n]) => `${s}:${n}`).join(' ');
  }
}
