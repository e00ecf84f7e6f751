// The one format every benchmark script reports in, so `npm run bench` (bench/run.ts) can gather the
// scripts' figures into BENCHMARKS.md. A script run on its own prints its figures; run by bench/run.ts
// (BENCH_FIGURES names a file) it also appends them there, one JSON object per line.
import fs from 'node:fs';
import type { Result } from 'autocannon';

export interface Figure {
  /** The section of BENCHMARKS.md it belongs to (bench/run.ts lists them). */
  group: 'ceilings' | 'qr' | 'transfers' | 'bank' | 'history' | 'webhooks' | 'pglite' | 'scale' | 'replica' | 'terminal';
  /** What was measured, as a reader should see it: "GET /api/v2/simple-qrs/{id}, 200 QRs round-robin". */
  name: string;
  /** The throughput (or, for a latency-only figure, its p99) in `unit`. */
  value: number;
  unit: 'req/s' | 'tps' | 'transfers/s' | 'QRs/s' | 'deliveries/s' | 'rows/s' | 'ms' | '×';
  p50Ms?: number;
  p99Ms?: number;
  /** The machine's ceiling this figure is divided by, measured in the same run. */
  ceiling?: { name: string; value: number };
  /** The target and whether this run met it. */
  target?: { text: string; met: boolean };
  /** The latency distribution, as [percentile, milliseconds] pairs, for the plot. */
  percentiles?: Array<[number, number]>;
  /** How it was measured, when the name does not say it (rounds, connections, rows). */
  note?: string;
}

/** Prints the figures and, under bench/run.ts, hands them to it. */
export function reportFigures(figures: Figure[]): void {
  for (const figure of figures) {
    const ratio = figure.ceiling ? ` = ${(figure.value / figure.ceiling.value).toFixed(2)} × ${figure.ceiling.name}` : '';
    const latency = figure.p99Ms === undefined ? '' : `, p50 ${figure.p50Ms ?? '–'} ms, p99 ${figure.p99Ms} ms`;
    const target = figure.target ? ` [${figure.target.text}: ${figure.target.met ? 'met' : 'NOT met'}]` : '';
    process.stdout.write(`  ${figure.name}: ${Math.round(figure.value * 100) / 100} ${figure.unit}${latency}${ratio}${target}\n`);
  }
  const file = process.env.BENCH_FIGURES;
  if (file) fs.appendFileSync(file, figures.map((figure) => `${JSON.stringify(figure)}\n`).join(''));
}

/** autocannon's latency percentiles (ms) as plot points. */
export function autocannonPercentiles(result: Result): Array<[number, number]> {
  const l = result.latency as unknown as Record<string, number>;
  return [[1, l.p1], [2.5, l.p2_5], [10, l.p10], [25, l.p25], [50, l.p50], [75, l.p75], [90, l.p90], [97.5, l.p97_5],
    [99, l.p99], [99.9, l.p99_9], [99.99, l.p99_99]].filter(([, ms]) => typeof ms === 'number') as Array<[number, number]>;
}

/** Percentiles of raw samples (ms), nearest rank, as plot points. */
export function samplePercentiles(samplesMs: number[]): Array<[number, number]> {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  return [1, 10, 25, 50, 75, 90, 97.5, 99, 99.9].map((p) => [p, Math.round(at(p) * 100) / 100]);
}

/** The median of `values` (the middle one; the lower middle for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
