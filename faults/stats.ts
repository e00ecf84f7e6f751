// Small measurement helpers: percentiles, and the RSS of a service process sampled every second from /proc.
import type { ServiceProcess } from './service.ts';

export interface Summary { count: number; min: number; p50: number; p99: number; max: number; mean: number }

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function summarize(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    min: sorted[0] ?? NaN,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

export interface RssSample { atMs: number; kib: number }

/** Samples VmRSS of whichever process `target()` names now (it changes when a killed process is restarted). */
export class RssSampler {
  readonly samples: RssSample[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly target: () => ServiceProcess | null, private readonly everyMs = 1_000) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private sample(): void {
    const kib = this.target()?.rssKiB();
    if (kib) this.samples.push({ atMs: Date.now(), kib });
  }

  between(fromMs: number, toMs: number): number[] {
    return this.samples.filter((s) => s.atMs >= fromMs && s.atMs < toMs).map((s) => s.kib);
  }
}

export const mib = (kib: number) => kib / 1024;

/** Least-squares slope of y over x (per unit of x); NaN with fewer than two points. */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

export interface HeapSample { atMs: number; heapUsedMiB: number; externalMiB: number }

/**
 * Samples the service's own view of its memory from /metrics (prom-client's default Node metrics), to tell
 * JS heap growth (objects kept) from native growth when RSS climbs.
 */
export class HeapSampler {
  readonly samples: HeapSample[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly baseUrl: () => string, private readonly everyMs = 10_000) {}

  start(): this {
    this.timer = setInterval(() => void this.sample(), this.everyMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async sample(): Promise<void> {
    try {
      const response = await fetch(`${this.baseUrl()}/metrics`, { signal: AbortSignal.timeout(5_000) });
      const text = await response.text();
      const read = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024;
      this.samples.push({ atMs: Date.now(), heapUsedMiB: read('nodejs_heap_size_used_bytes'), externalMiB: read('nodejs_external_memory_bytes') });
    } catch {
      // a missed sample is not evidence of anything
    }
  }

  between(fromMs: number, toMs: number): HeapSample[] {
    return this.samples.filter((s) => s.atMs >= fromMs && s.atMs < toMs);
  }
}
