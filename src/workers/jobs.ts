// The background jobs of this process. Each capability adds its own job here.
import type { AppContext } from '../context.ts';
import { purgeExpiredOutcomes } from '../idempotency/service.ts';
import { sweepExpiredQrs } from '../qr/service.ts';
import type { Job } from './runner.ts';

export function backgroundJobs({ config, db, clock }: AppContext): Job[] {
  return [
    {
      name: 'idempotency-purge',
      intervalMs: 10 * 60_000,
      // Batches of 1,000 keep each delete short; a full batch means more may be waiting.
      runOnce: async () => (await purgeExpiredOutcomes(db, clock.now(), 1000)) === 1000,
    },
    {
      // Records expired QRs as CANCELED with their simple_qr.canceled event. Reads never wait for it (the
      // effective status applies expiry at once), so a few seconds of delay only delay the webhook.
      name: 'qr-expiry-sweep',
      intervalMs: 5_000,
      runOnce: async () => (await sweepExpiredQrs(db, config, clock.now(), 500)) === 500,
    },
  ];
}
