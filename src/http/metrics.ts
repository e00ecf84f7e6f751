// Prometheus metrics of the HTTP layer: request counts and latency histograms per route and status.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

const DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type Labels = { method: string; route: string; status_code: string };

/** What prom-client's registry reads from a metric when it is scraped. */
interface MetricSnapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }>;
}

/** The requests of one (method, route, status): how many, their total time, and how many per bucket. */
interface Series {
  labels: Labels;
  statusCode: number;
  count: number;
  sumSeconds: number;
  /** Not cumulative; the last slot counts what is above the largest bound. */
  perBucket: number[];
}

/**
 * Counts answered requests in plain numbers and hands them to prom-client only when /metrics is scraped.
 * prom-client's own Counter and Histogram re-validate and re-hash the label set on every observation,
 * even through a labelled child — about 2 µs, a couple of per cent of a POS poll; here a request costs one
 * map lookup and three additions. Both metrics read the same series, so they cannot disagree.
 */
class HttpRequestMetrics {
  /** By route pattern, then a short list per (method, status): no key string is built per request. */
  private readonly byRoute = new Map<string, Series[]>();

  record(method: string, route: string, statusCode: number, seconds: number): void {
    let ofRoute = this.byRoute.get(route);
    if (!ofRoute) this.byRoute.set(route, (ofRoute = []));
    let series: Series | undefined;
    for (const candidate of ofRoute) {
      if (candidate.statusCode === statusCode && candidate.labels.method === method) series = candidate;
    }
    if (!series) {
      const labels = { method, route, status_code: String(statusCode) };
      series = { labels, statusCode, count: 0, sumSeconds: 0, perBucket: new Array<number>(DURATION_BUCKETS_SECONDS.length + 1).fill(0) };
      ofRoute.push(series);
    }
    series.count++;
    series.sumSeconds += seconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS_SECONDS.length && seconds > DURATION_BUCKETS_SECONDS[bucket]!) bucket++;
    series.perBucket[bucket]!++;
  }

  reset(): void {
    this.byRoute.clear();
  }

  private *allSeries(): Iterable<Series> {
    for (const ofRoute of this.byRoute.values()) yield* ofRoute;
  }

  requestsTotal(): MetricSnapshot {
    return {
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      type: 'counter',
      aggregator: 'sum',
      values: [...this.allSeries()].map((series) => ({ labels: series.labels, value: series.count, metricName: 'http_requests_total' })),
    };
  }

  durationHistogram(): MetricSnapshot {
    const name = 'http_request_duration_seconds';
    const values: MetricSnapshot['values'] = [];
    for (const series of this.allSeries()) {
      let cumulative = 0;
      DURATION_BUCKETS_SECONDS.forEach((bound, index) => {
        cumulative += series.perBucket[index]!;
        values.push({ labels: { le: bound, ...series.labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${name}_bucket` });
      values.push({ labels: series.labels, value: series.sumSeconds, metricName: `${name}_sum` });
      values.push({ labels: series.labels, value: series.count, metricName: `${name}_count` });
    }
    return {
      name,
      help: 'Time from receiving a request to sending its response',
      type: 'histogram',
      aggregator: 'sum',
      values,
    };
  }
}

/**
 * Registers the HTTP metrics in `registry` and returns the function that counts one answered request.
 * prom-client's registry reads any object with a name, help, type and `get()`; its types only name its
 * own classes, hence the casts.
 */
export function httpMetrics(registry: Registry): (request: FastifyRequest, reply: FastifyReply) => void {
  const metrics = new HttpRequestMetrics();
  const exposed = (snapshot: () => MetricSnapshot) => {
    const { name, help, type } = snapshot();
    return { name, help, type, aggregator: 'sum', get: async () => snapshot(), reset: () => metrics.reset() } as unknown as Metric;
  };
  registry.registerMetric(exposed(() => metrics.requestsTotal()));
  registry.registerMetric(exposed(() => metrics.durationHistogram()));
  return (request, reply) => {
    // The route pattern, never the raw URL: ids in paths would explode the label set.
    metrics.record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  };
}
