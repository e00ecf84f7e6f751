// The rails' attempt log (migration 017): one row per HTTP exchange with a bank — rail, operation, outcome,
// HTTP status, latency. It is the rails layer's own table; nothing else is written, so no body, secret or
// account number can reach it. Operation names are the rail's own (generateQr, uploadBatch…), kept generic
// enough for pay-in and pay-out alike.
import type { Queryable } from '../db/database.ts';
import type { Clock } from '../time.ts';
import type { RailName } from './names.ts';

export interface RailAttempt {
  operation: string;
  outcome: 'ok' | 'refused' | 'unknown' | 'unauthorized';
  httpStatus: number | null;
  latencyMs: number;
}

export class RailAttemptLog {
  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    private readonly rail: RailName,
    /** Told when a write fails (the call's outcome stands: the log is not the bank's answer). */
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Writes the attempts of one call, in one statement outside any transaction; never throws. */
  async record(attempts: readonly RailAttempt[]): Promise<void> {
    if (attempts.length === 0) return;
    try {
      await this.db.query(
        `insert into rail_attempts (rail, operation, outcome, http_status, latency_ms, created_at)
         select $1::text, operation, outcome, http_status, latency_ms, $6::timestamptz
           from unnest($2::text[], $3::text[], $4::integer[], $5::integer[]) as a(operation, outcome, http_status, latency_ms)`,
        [this.rail, attempts.map((a) => a.operation), attempts.map((a) => a.outcome), attempts.map((a) => a.httpStatus),
          attempts.map((a) => Math.max(0, Math.round(a.latencyMs))), this.clock.now()],
      );
    } catch (error) {
      this.onError(error);
    }
  }
}
