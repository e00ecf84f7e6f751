// `npm run bench`: every benchmark in one go, then BENCHMARKS.md's "Latest run" and bench/latency.svg.
//
//   npm run bench                      # everything (about 20–25 minutes; PostgreSQL needed)
//   npm run bench -- qr transfers      # only these scripts (the report says which were left out)
//
// BENCH_DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
// each script creates its scratch database there and drops it, and the scale script makes a throwaway
// cluster of its own (initdb, pg_basebackup) for the replica — it never stops the server it is given.
// Scripts run one after another, each as its own process with its output on screen, so no two
// measurements share the machine. A script that fails is reported and the others still run; the
// command then exits 1. Ctrl-C stops the run without a report; the scratch databases it leaves are
// dropped when the next run starts.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildIfStale } from '../scripts/build.mjs';
import { postgresBinDir } from '../faults/cluster.ts';
import type { Figure } from './lib/figures.ts';
import { renderLatencySvg, renderMarkdown, type RunFacts } from './lib/report.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const BEGIN = '<!-- npm run bench: begin (generated; edit bench/lib/report.ts, not this part) -->';
const END = '<!-- npm run bench: end -->';
const PLOT = 'bench/latency.svg';

/** The scripts in the order they run: the machine's ceilings first, then the service's paths. */
const SCRIPTS: Array<{ name: string; args: string[]; env?: Record<string, string> }> = [
  { name: 'ceilings', args: ['bench/ceilings.ts'] },
  { name: 'qr', args: ['bench/qr.ts', '5', '3'] },
  { name: 'transfers', args: ['bench/transfers.ts'] },
  { name: 'bank', args: ['bench/bank.ts'] },
  { name: 'movements', args: ['bench/movements.ts'] },
  { name: 'statement', args: ['bench/statement.ts', '1000000'] },
  { name: 'webhooks', args: ['bench/webhooks-throughput.ts', '5000'] },
  { name: 'pglite', args: ['bench/pglite.ts'] },
  { name: 'scale', args: ['bench/scale.ts'] },
  { name: 'terminal', args: ['bench/terminal-speed.ts', '3'] },
];

async function main(): Promise<number> {
  if (process.argv.includes('--report')) return rewriteReport();
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !SCRIPTS.some((script) => script.name === name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; the benchmarks are ${SCRIPTS.map((s) => s.name).join(', ')}\n`);
    return 2;
  }
  const chosen = wanted.length === 0 ? SCRIPTS : SCRIPTS.filter((script) => wanted.includes(script.name));
  const postgres = await postgresVersion();
  if (postgres === null) return 1;
  // Checked before minutes of measuring, not after: the report must have somewhere to go.
  const page = fs.readFileSync(path.join(root, 'BENCHMARKS.md'), 'utf8');
  if (!page.includes(BEGIN) || !page.includes(END)) {
    process.stderr.write(`[bench] BENCHMARKS.md has lost its markers ${BEGIN} … ${END}: put them back where the latest run goes\n`);
    return 1;
  }
  if (chosen.some((script) => script.name === 'scale')) {
    try {
      postgresBinDir();
    } catch (error) {
      process.stderr.write(`[bench] the scale benchmark makes a throwaway cluster and a replica: ${(error as Error).message}\n`);
      return 1;
    }
  }
  await dropLeftovers();
  const startedAt = new Date();
  const loadAtStart = loadAverage();
  process.stdout.write(`[bench] ${chosen.length} benchmark(s) on ${describeMachine()}, ${postgres}, load average ${loadAtStart}\n`);
  buildIfStale(); // every script runs the compiled service; building once here keeps build time out of them

  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-bench-'));
  const failures: RunFacts['failures'] = [];
  const measured: RunFigure[] = [];
  const thisRun = { startedAt: startedAt.toISOString(), commit: commitOf() };
  for (const [index, script] of chosen.entries()) {
    process.stdout.write(`\n[bench ${index + 1}/${chosen.length}] ${script.name}: ${script.args.join(' ')}\n`);
    const started = performance.now();
    const file = path.join(scratch, `${script.name}.jsonl`);
    const code = await runScript(script.args, { BENCH_FIGURES: file, BENCH_DATABASE_URL: serverUrl, ...script.env });
    measured.push(...readFigures(file).map((figure) => ({ ...figure, script: script.name, run: thisRun })));
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`[bench ${index + 1}/${chosen.length}] ${script.name} ${code === 0 ? 'done' : `FAILED (exit ${code})`} in ${seconds.toFixed(0)} s\n`);
    if (code !== 0) failures.push({ script: script.name, reason: `exit code ${code}; see the run's output` });
  }
  fs.rmSync(scratch, { recursive: true, force: true });

  // A partial run keeps the figures of the scripts it did not run from the run before, and says so.
  const previous = readPreviousRun();
  const carried = previous
    ? previous.figures
      .filter((figure) => !chosen.some((script) => script.name === scriptOf(figure)))
      .map((figure) => ({ ...figure, run: figure.run ?? { startedAt: previous.facts.startedAt, commit: previous.facts.commit } }))
    : [];
  const figures = [...measured, ...carried];
  const facts: RunFacts = {
    startedAt,
    minutes: (Date.now() - startedAt.getTime()) / 60_000,
    commit: commitOf(),
    machine: describeMachine(),
    node: `Node ${process.version}`,
    postgres,
    loadAverage: { start: loadAtStart, end: loadAverage() },
    failures,
    carried: provenanceOf(carried),
    skipped: SCRIPTS.filter((script) => !chosen.includes(script) && !carried.some((figure) => scriptOf(figure) === script.name)).map((script) => script.name),
  };
  // The raw figures first: whatever happens to the page, the run is kept. The file is committed beside
  // BENCHMARKS.md, so a partial run on a fresh clone keeps the other scripts' figures, as here.
  fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bench/results/latest.json'), `${JSON.stringify({ facts, figures }, null, 2)}\n`);
  writeReport(figures, facts);
  const missed = figures.filter((figure) => figure.target && !figure.target.met);
  process.stdout.write(`\n[bench] ${figures.length} figures written to BENCHMARKS.md and ${PLOT} in ${facts.minutes.toFixed(1)} minutes\n`);
  if (failures.length > 0) process.stdout.write(`[bench] FAILED: ${failures.map((f) => f.script).join(', ')} (their figures are missing)\n`);
  process.stdout.write(missed.length === 0 ? '[bench] every target measured was met\n' : `[bench] targets not met: ${missed.map((f) => f.name).join('; ')}\n`);
  return failures.length === 0 ? 0 : 1;
}

function writeReport(figures: Figure[], facts: RunFacts): void {
  fs.writeFileSync(path.join(root, PLOT), renderLatencySvg(figures));
  writeIntoBenchmarksPage(renderMarkdown(figures, facts, PLOT));
}

/** `npm run bench -- --report`: BENCHMARKS.md and the plot again from the last run's figures (after a change to bench/lib/report.ts). */
function rewriteReport(): number {
  const last = readPreviousRun();
  if (!last) {
    process.stderr.write('[bench] no bench/results/latest.json: run the benchmarks first\n');
    return 1;
  }
  const facts = last.facts as unknown as RunFacts & { startedAt: string };
  writeReport(last.figures, {
    ...facts,
    startedAt: new Date(facts.startedAt),
    carried: (facts.carried ?? []).map((run) => ({ ...run, startedAt: new Date(run.startedAt) })),
  });
  process.stdout.write(`[bench] BENCHMARKS.md and ${PLOT} rewritten from bench/results/latest.json\n`);
  return 0;
}

/** The server's version, or null (with the reason on stderr) when it cannot be reached or pgbench is missing. */
async function postgresVersion(): Promise<string | null> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('show server_version');
    const pgbench = await runQuiet('pgbench', ['--version']);
    if (!pgbench) {
      process.stderr.write('[bench] pgbench is not on PATH: install the PostgreSQL client tools (apt-get install postgresql-client)\n');
      return null;
    }
    return `PostgreSQL ${rows[0]!.server_version.split(' ')[0]}`;
  } catch (error) {
    process.stderr.write(`[bench] PostgreSQL is needed and ${new URL(serverUrl).host} did not answer (${(error as Error).message}); set BENCH_DATABASE_URL=postgres://user@host:port/database\n`);
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Scratch databases an interrupted run left behind (a script killed by Ctrl-C never reaches its cleanup).
 * Every benchmark names its own `mps_bench_…`; one running now from elsewhere would lose its database —
 * BENCHMARKS.md asks for one benchmark at a time per server, which its figures need anyway.
 */
async function dropLeftovers(): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>("select datname from pg_database where datname like 'mps\\_bench\\_%'");
    for (const { datname } of rows) {
      process.stdout.write(`[bench] dropping ${datname}, left by an interrupted run\n`);
      await client.query(`drop database if exists "${datname}" with (force)`);
    }
  } finally {
    await client.end();
  }
}

function runScript(args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    child.on('error', () => resolve(1));
  });
}

function runQuiet(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.on('exit', (code) => resolve(code === 0));
    child.on('error', () => resolve(false));
  });
}

/** A figure with the script and the run that measured it. */
type RunFigure = Figure & { script?: string; run?: { startedAt: string; commit: string } };

/** Which scripts' figures come from which earlier run. */
function provenanceOf(carried: RunFigure[]): RunFacts['carried'] {
  const runs = new Map<string, RunFacts['carried'][number]>();
  for (const figure of carried) {
    const key = `${figure.run!.startedAt} ${figure.run!.commit}`;
    const entry = runs.get(key) ?? { scripts: [], startedAt: new Date(figure.run!.startedAt), commit: figure.run!.commit };
    if (!entry.scripts.includes(scriptOf(figure))) entry.scripts.push(scriptOf(figure));
    runs.set(key, entry);
  }
  return [...runs.values()];
}

/** The script a figure of an earlier run came from (runs before the `script` field: by its section). */
function scriptOf(figure: RunFigure): string {
  if (figure.script) return figure.script;
  if (figure.group === 'history') return figure.name.startsWith('GET /api/v2/balance/movements') ? 'movements' : 'statement';
  if (figure.group === 'replica') return 'scale';
  return figure.group;
}

function readPreviousRun(): { facts: { startedAt: string; commit: string }; figures: RunFigure[] } | null {
  const file = path.join(root, 'bench/results/latest.json');
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
}

function readFigures(file: string): Figure[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Figure);
}

/** Replaces the generated part of BENCHMARKS.md, between its two markers; the pages' other sections stay. */
function writeIntoBenchmarksPage(markdown: string): void {
  const file = path.join(root, 'BENCHMARKS.md');
  const page = fs.readFileSync(file, 'utf8');
  const begin = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`BENCHMARKS.md has lost its markers ${BEGIN} … ${END}`);
  fs.writeFileSync(file, `${page.slice(0, begin + BEGIN.length)}\n${markdown}\n${page.slice(end)}`);
}

function describeMachine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}`;
}

function loadAverage(): string {
  return os.loadavg().map((value) => value.toFixed(1)).join(' / ');
}

/** The commit measured, marked when the working tree differs from it. */
function commitOf(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    // The page and plot this command rewrites are its output, not a change to what was measured.
    const changed = git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!BENCHMARKS.md', `:!${PLOT}`);
    return `${git('rev-parse', '--short', 'HEAD')}${changed === '' ? '' : ' with uncommitted changes'}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

process.exitCode = await main();
