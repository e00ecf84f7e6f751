// A client call's result in the rails layer's neutral terms: its HTTP exchanges written to the attempt log
// first, then ok, refused (the bank's cleaned message) or unknown (what was missing) — nothing of the bank's
// shapes goes above the rail.
import type { RailAttemptLog } from '../attempts.ts';
import type { RailOutcome } from '../outcome.ts';
import type { BanecoResult } from './client.ts';

export async function railOutcomeOf<T, U>(attempts: RailAttemptLog, result: BanecoResult<T>, map: (value: T) => U): Promise<RailOutcome<U>> {
  await attempts.record(result.calls);
  switch (result.outcome) {
    case 'ok':
      return { outcome: 'ok', value: map(result.value) };
    case 'refused':
      return { outcome: 'refused', message: result.message };
    case 'unknown':
      return { outcome: 'unknown', problem: `${result.reason}: ${result.problem}` };
  }
}
