// Fan-out worker: turns committed events of the outbox into one pending delivery per matching enabled
// endpoint of the event's owner, and marks the events published, in one transaction. Events are claimed
// through the events service with SKIP LOCKED, so any number of processes can run it; the unique
// (event, endpoint) constraint makes a repeated fan-out harmless. Woken by the events channel after every
// emit's commit; it wakes the dispatchers in turn after its own commit (this process's at once, others
// through the database: db/notifier.ts).
import type { Database } from '../db/database.ts';
import * as events from '../events/service.ts';
import type { Clock } from '../time.ts';
import type { Job } from '../kernel/job.ts';
import type { WebhookMetrics } from './metrics.ts';
import { DELIVERIES_CHANNEL } from './service.ts';
import * as store from './store.ts';

/** Events per fan-out transaction: large enough for bursts, small enough to keep the transaction short. */
const FANOUT_BATCH = 500;

export interface FanoutOptions {
  db: Database;
  clock: Clock;
  metrics?: WebhookMetrics;
  batchSize?: number;
}

export class Fanout {
  readonly batchSize: number;

  constructor(private readonly options: FanoutOptions) {
    this.batchSize = options.batchSize ?? FANOUT_BATCH;
  }

  /** Fans out one batch; true when the batch was full (more events may be waiting). */
  async runOnce(): Promise<boolean> {
    const { db, clock, metrics } = this.options;
    const now = clock.now();
    const claimed = await db.transaction(async (tx) => {
      const batch = await events.claimUnpublishedEvents(tx, this.batchSize, now);
      if (batch.length === 0) return batch;
      const deliveries = await store.insertDeliveriesForEvents(
        tx,
        batch.map((event) => ({ id: event.id, ownerKind: event.owner_kind, ownerId: event.owner_id, type: event.type })),
        now,
      );
      if (deliveries > 0) tx.notifyAfterCommit(DELIVERIES_CHANNEL);
      if (metrics) tx.afterCommit(() => observeFanout(metrics, batch, deliveries, clock.now()));
      return batch;
    });
    return claimed.length === this.batchSize;
  }

  job(): Job {
    return { name: 'webhook-fanout', intervalMs: 1_000, wakeChannel: events.EVENTS_CHANNEL, runOnce: () => this.runOnce() };
  }
}

/** Counts only what committed: a rolled-back fan-out created nothing and will claim its events again. */
function observeFanout(metrics: WebhookMetrics, claimed: ReadonlyArray<{ created_at: Date }>, deliveries: number, now: Date): void {
  const nowMs = now.getTime();
  for (const event of claimed) metrics.outboxLag.observe(Math.max(0, nowMs - event.created_at.getTime()) / 1000);
  if (deliveries > 0) metrics.deliveriesCreated.inc(deliveries);
}
