// The background jobs of this process. Each capability adds its own job here.
import type { AppContext } from '../context.ts';
import { purgeExpiredOutcomes } from '../idempotency/service.ts';
import type { Job } from './runner.ts';

export function backgroundJobs({ db, clock }: AppContext): Job[] {
  return [
    {
      name: 'idempotency-purge',
      intervalMs: 10 * 60_000,
      // Batches of 1,000 keep each delete short; a full batch means more may be waiting.
      runOnce: async () => (await purgeExpiredOutcomes(db, clock.now(), 1000)) === 1000,
    },
  ];
}
