// Prometheus metrics of webhook delivery: deliveries created and finished by outcome, attempt latency,
// and outbox lag (from an event's commit-time stamp to its fan-out).
import { Counter, Histogram, type Registry } from 'prom-client';

export interface WebhookMetrics {
  deliveriesCreated: Counter;
  /** outcome: succeeded | retry_scheduled | failed | refused (SSRF guard) | stale (lease lost) | endpoint_disabled */
  attempts: Counter<'outcome'>;
  attemptDuration: Histogram<'outcome'>;
  outboxLag: Histogram;
}

const byRegistry = new WeakMap<Registry, WebhookMetrics>();

/** The webhook metrics registered in `registry` (created once per registry, so several jobs can share them). */
export function webhookMetrics(registry: Registry): WebhookMetrics {
  let metrics = byRegistry.get(registry);
  if (!metrics) {
    metrics = {
      deliveriesCreated: new Counter({
        name: 'webhook_deliveries_created_total',
        help: 'Deliveries created by fan-out (one per event and matching endpoint)',
        registers: [registry],
      }),
      attempts: new Counter({
        name: 'webhook_delivery_attempts_total',
        help: 'Delivery attempts by outcome: succeeded, retry_scheduled, failed (after the last retry or 410), refused (SSRF guard), stale (lease lost)',
        labelNames: ['outcome'],
        registers: [registry],
      }),
      attemptDuration: new Histogram({
        name: 'webhook_attempt_duration_seconds',
        help: 'Time from sending a webhook to its answer (or error), by outcome',
        labelNames: ['outcome'],
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        registers: [registry],
      }),
      outboxLag: new Histogram({
        name: 'webhook_outbox_lag_seconds',
        help: 'Time from an event being written to the outbox to its fan-out into deliveries',
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
        registers: [registry],
      }),
    };
    byRegistry.set(registry, metrics);
  }
  return metrics;
}
