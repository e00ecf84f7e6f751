// Prometheus metrics of webhook delivery: attempts by outcome, attempt latency, and dispatch lag (from an
// attempt being due to a dispatcher claiming it: how far behind the dispatchers are).
import { Counter, Histogram, type Registry } from 'prom-client';

export interface WebhookMetrics {
  /** outcome: succeeded | retry_scheduled | failed | refused (SSRF guard) | stale (lease lost) | endpoint_disabled */
  attempts: Counter<'outcome'>;
  attemptDuration: Histogram<'outcome'>;
  dispatchLag: Histogram;
}

const byRegistry = new WeakMap<Registry, WebhookMetrics>();

/** The webhook metrics registered in `registry` (created once per registry, so several jobs can share them). */
export function webhookMetrics(registry: Registry): WebhookMetrics {
  let metrics = byRegistry.get(registry);
  if (!metrics) {
    metrics = {
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
      dispatchLag: new Histogram({
        name: 'webhook_dispatch_lag_seconds',
        help: 'Time from a delivery attempt being due (the event written, a retry or a redelivery scheduled) to a dispatcher claiming it',
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
        registers: [registry],
      }),
    };
    byRegistry.set(registry, metrics);
  }
  return metrics;
}
