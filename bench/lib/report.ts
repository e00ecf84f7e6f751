// Turns one `npm run bench` run's figures into the generated part of BENCHMARKS.md and a latency plot.
// The plot is a small hand-written SVG (percentile curves on log axes): a charting library (vega, say)
// would bring megabytes of dependencies for one static chart that a few dozen lines draw exactly.
import type { Figure } from './figures.ts';

export interface RunFacts {
  startedAt: Date;
  minutes: number;
  commit: string;
  machine: string;
  node: string;
  postgres: string;
  loadAverage: { start: string; end: string };
  /** The scripts that failed, with the reason; their sections are missing from the tables. */
  failures: Array<{ script: string; reason: string }>;
  /** Scripts left out on purpose (npm run bench -- <scripts>) and without figures from an earlier run. */
  skipped: string[];
  /** Scripts not run this time whose figures are kept from earlier runs, by run. */
  carried: Array<{ scripts: string[]; startedAt: Date; commit: string }>;
}

const SECTIONS: Array<{ group: Figure['group']; title: string }> = [
  { group: 'qr', title: 'QR pay-in (bench/qr.ts)' },
  { group: 'transfers', title: 'Transfers (bench/transfers.ts)' },
  { group: 'bank', title: 'A bank rail, and a bank answering every call 5 s late (bench/bank.ts)' },
  { group: 'history', title: 'Movements, statement and export at a million rows (bench/movements.ts, bench/statement.ts)' },
  { group: 'webhooks', title: 'Webhooks (bench/webhooks-throughput.ts)' },
  { group: 'pglite', title: 'The embedded database (bench/pglite.ts)' },
  { group: 'scale', title: 'Two API processes and a worker against one (bench/scale.ts)' },
  { group: 'replica', title: 'A streaming read replica (bench/scale.ts)' },
  { group: 'terminal', title: 'The POS terminal\'s first screen on a throttled phone (bench/terminal-speed.ts)' },
];

const number = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: value < 10 ? 2 : value < 100 ? 1 : 0 });
const ms = (value: number | undefined) => (value === undefined ? '' : `${number(value)} ms`);
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The generated Markdown: facts of the run, the ceilings, then one table per section of the service. */
export function renderMarkdown(figures: Figure[], facts: RunFacts, plotPath: string): string {
  const lines: string[] = [];
  lines.push(`Run of ${facts.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${facts.minutes.toFixed(0)} minutes, commit \`${facts.commit}\`.`);
  lines.push(`Machine: ${facts.machine}; load average ${facts.loadAverage.start} at the start, ${facts.loadAverage.end} at the end. ${facts.node}; ${facts.postgres}.`);
  for (const run of facts.carried) {
    lines.push(`Figures of ${run.scripts.join(', ')} are kept from the run of ${run.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (commit \`${run.commit}\`).`);
  }
  if (facts.skipped.length > 0) lines.push(`Not run: ${facts.skipped.join(', ')}.`);
  for (const failure of facts.failures) lines.push(`**${failure.script} failed**: ${cell(failure.reason)}`);
  lines.push('');

  const ceilings = figures.filter((f) => f.group === 'ceilings');
  if (ceilings.length > 0) {
    lines.push('### The machine\'s ceilings', '', '| ceiling | throughput | p50 | p99 | how |', '|---|---:|---:|---:|---|');
    for (const f of ceilings) lines.push(`| ${cell(f.name)} | ${number(f.value)} ${f.unit} | ${ms(f.p50Ms)} | ${ms(f.p99Ms)} | ${cell(f.note ?? '')} |`);
    lines.push('');
  }
  for (const section of SECTIONS) {
    const rows = figures.filter((f) => f.group === section.group);
    if (rows.length === 0) continue;
    lines.push(`### ${section.title}`, '', '| measured | figure | p50 | p99 | ratio to its ceiling (same run) | target | how |', '|---|---:|---:|---:|---|---|---|');
    for (const f of rows) {
      const ratio = f.ceiling ? `**${(f.value / f.ceiling.value).toFixed(2)}×** ${cell(f.ceiling.name)} (${number(f.ceiling.value)})` : '';
      const target = f.target ? `${cell(f.target.text)}: ${f.target.met ? 'met' : '**not met**'}` : '';
      // A quotient of two ratios is read against a bar such as 0.90: always two decimals (1.00, not 1).
      const figure = f.unit === '×' ? `${f.value.toFixed(2)} ×` : `${number(f.value)} ${f.unit}`;
      lines.push(`| ${cell(f.name)} | ${figure} | ${ms(f.p50Ms)} | ${ms(f.p99Ms)} | ${ratio} | ${target} | ${cell(f.note ?? '')} |`);
    }
    lines.push('');
  }
  if (figures.some((f) => f.percentiles)) {
    lines.push(`Latency distributions of this run (percentile on a "nines" axis, milliseconds on a log axis):`, '', `![latency percentiles](${plotPath})`, '');
  }
  return lines.join('\n');
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#393b79', '#637939', '#843c39', '#7b4173'];

/** Percentile curves of every figure that has them: x = −log10(1 − p), so p50, p90, p99 and p99.9 are equally spaced. */
export function renderLatencySvg(figures: Figure[]): string {
  const curves = figures.filter((f) => f.percentiles && f.percentiles.length > 1);
  const width = 960;
  const legendRow = 18;
  const plot = { left: 70, top: 30, width: 560, height: 360 };
  const height = Math.max(plot.top + plot.height + 60, plot.top + curves.length * legendRow + 20);
  const nines = (p: number) => -Math.log10(1 - Math.min(p, 99.99) / 100);
  const maxX = nines(99.99);
  const all = curves.flatMap((f) => f.percentiles!.map(([, v]) => Math.max(v, 0.1)));
  const minY = Math.pow(10, Math.floor(Math.log10(Math.min(...all, 1))));
  const maxY = Math.pow(10, Math.ceil(Math.log10(Math.max(...all, 10))));
  const x = (p: number) => plot.left + (nines(p) / maxX) * plot.width;
  const y = (v: number) => plot.top + plot.height - ((Math.log10(Math.max(v, minY)) - Math.log10(minY)) / (Math.log10(maxY) - Math.log10(minY))) * plot.height;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  for (const p of [0, 50, 90, 99, 99.9, 99.99]) {
    parts.push(`<line x1="${x(p).toFixed(1)}" y1="${plot.top}" x2="${x(p).toFixed(1)}" y2="${plot.top + plot.height}" stroke="#ddd"/>`);
    parts.push(`<text x="${x(p).toFixed(1)}" y="${plot.top + plot.height + 16}" text-anchor="middle">p${p}</text>`);
  }
  for (let v = minY; v <= maxY; v *= 10) {
    parts.push(`<line x1="${plot.left}" y1="${y(v).toFixed(1)}" x2="${plot.left + plot.width}" y2="${y(v).toFixed(1)}" stroke="#ddd"/>`);
    parts.push(`<text x="${plot.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v >= 1 ? v : v.toFixed(1)} ms</text>`);
  }
  parts.push(`<text x="${plot.left + plot.width / 2}" y="${plot.top + plot.height + 40}" text-anchor="middle">percentile of requests</text>`);
  parts.push(`<text x="${plot.left}" y="${plot.top - 12}" font-weight="bold">Latency by percentile (lower is better)</text>`);
  curves.forEach((f, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const points = f.percentiles!.map(([p, v]) => `${x(p).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${points}"/>`);
    const legendY = plot.top + i * legendRow;
    parts.push(`<rect x="${plot.left + plot.width + 20}" y="${legendY}" width="12" height="12" fill="${color}"/>`);
    parts.push(`<text x="${plot.left + plot.width + 38}" y="${legendY + 10}">${escapeXml(shorten(`${f.name}`, 52))}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
