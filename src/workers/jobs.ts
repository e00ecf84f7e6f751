// The background jobs of this process. Each capability adds its own job here.
import type { Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { purgeExpiredOutcomes } from '../idempotency/service.ts';
import { Dispatcher } from '../webhooks/dispatcher.ts';
import { Fanout } from '../webhooks/fanout.ts';
import { webhookMetrics } from '../webhooks/metrics.ts';
import type { Job } from './runner.ts';

export interface BackgroundJobOptions {
  /** Registry of /metrics, so worker metrics are served with the HTTP ones. */
  metrics?: Registry;
  onError?: (error: unknown, context: string) => void;
}

export function backgroundJobs({ config, db, clock }: AppContext, options: BackgroundJobOptions = {}): Job[] {
  const metrics = options.metrics ? webhookMetrics(options.metrics) : undefined;
  const dispatcher = new Dispatcher({
    db, clock, metrics, mode: config.mode, timeoutMs: config.webhookTimeoutMs, retryScheduleMs: config.webhookRetryScheduleMs,
    onError: options.onError,
  });
  return [
    {
      name: 'idempotency-purge',
      intervalMs: 10 * 60_000,
      // Batches of 1,000 keep each delete short; a full batch means more may be waiting.
      runOnce: async () => (await purgeExpiredOutcomes(db, clock.now(), 1000)) === 1000,
    },
    // Woken by every committed emit (EVENTS_CHANNEL); wakes this process's dispatcher directly after its commit.
    new Fanout({ db, clock, metrics, onDeliveriesCreated: () => dispatcher.wake() }).job(),
    dispatcher.job(),
  ];
}
