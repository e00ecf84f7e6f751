// Entry point of `npm run faults [-- scenario…]`: starts the throwaway cluster, runs each scenario under its hard timeout, prints the summary, exits non-zero on any failed check.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cluster } from './cluster.ts';
import { digestScenarioLogs } from './logs.ts';
import { Report } from './report.ts';
import { runBounded, Scope } from './scope.ts';
import type { ScenarioContext } from './setup.ts';
import { bankScenario } from './scenarios/bank.ts';
import { dbOutageScenario } from './scenarios/db-outage.ts';
import { killScenario } from './scenarios/kill.ts';
import { soakScenario } from './scenarios/soak.ts';
import { webhookReceiverScenario } from './scenarios/webhook-receiver.ts';

interface Scenario {
  name: string;
  summary: string;
  timeoutMs: () => number;
  run(ctx: ScenarioContext, scope: Scope): Promise<void>;
}

const SCENARIOS: Scenario[] = [killScenario, dbOutageScenario, webhookReceiverScenario, bankScenario, soakScenario];

function usage(): string {
  return ['usage: npm run faults [-- <scenario>…]', '', ...SCENARIOS.map((s) => `  ${s.name.padEnd(17)} ${s.summary}`),
    '', 'env: FAULTS_SOAK_MINUTES (10), FAULTS_SOAK_CLIENTS (8), FAULTS_KILL_ROUNDS (2), FAULTS_PG_BIN, FAULTS_PG_PORT (first port tried, 55432), FAULTS_KEEP=1 keeps the temp dir'].join('\n');
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  const unknown = args.filter((a) => !SCENARIOS.some((s) => s.name === a));
  if (unknown.length > 0) {
    process.stderr.write(`unknown scenario: ${unknown.join(', ')}\n${usage()}\n`);
    return 2;
  }
  const selected = args.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => args.includes(s.name));

  const report = new Report();
  const baseDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-faults-'));
  const logDir = path.join(baseDir, 'logs');
  fs.mkdirSync(logDir);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`fault-injection suite: ${selected.map((s) => s.name).join(', ')}; temp dir ${baseDir}`);

  // Ctrl-C (or SIGTERM) aborts the scenario in flight; its clean-ups and the cluster's removal still run.
  const outer = new Scope();
  let interrupted = false;
  const onSignal = (signal: string) => {
    if (interrupted) return;
    interrupted = true;
    say(`\n${signal}: stopping the scenario, its processes and the cluster…`);
    outer.abort();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  let cluster: Cluster | null = null;
  try {
    const started = Date.now();
    cluster = await Cluster.create(baseDir);
    say(`PostgreSQL cluster up on 127.0.0.1:${cluster.port} in ${Date.now() - started} ms (socket dir ${cluster.dir})`);
    const adminToken = randomBytes(24).toString('base64url');
    for (const scenario of selected) {
      if (interrupted) break;
      say(`\n=== ${scenario.name}: ${scenario.summary}`);
      const ctx: ScenarioContext = { name: scenario.name, cluster, report, logDir, adminToken };
      const t0 = Date.now();
      const outcome = await runBounded(scenario.timeoutMs(), (scope) => scenario.run(ctx, scope), (line) => report.note(scenario.name, line), outer);
      const seconds = ((Date.now() - t0) / 1000).toFixed(0);
      if (interrupted) report.check(scenario.name, 'not interrupted', false, 'interrupted by a signal: its results are incomplete');
      else if (outcome.kind === 'timeout') report.check(scenario.name, `finished within its hard timeout of ${scenario.timeoutMs() / 1000} s`, false, 'timed out');
      else if (outcome.kind === 'error') report.check(scenario.name, 'ran to the end', false, errorText(outcome.error));
      else report.check(scenario.name, `finished within its hard timeout of ${scenario.timeoutMs() / 1000} s`, true, `${seconds} s`);
      // A planned outage may have left the server stopped; the next scenario needs it.
      if (!cluster.running && !interrupted) await cluster.start();
      if (report.failed(scenario.name).length > 0) for (const line of digestScenarioLogs(logDir, `${scenario.name}-`)) say(`  ${line}`);
    }
  } catch (error) {
    report.check('suite', 'set-up', false, errorText(error));
  } finally {
    const problems = (await cluster?.destroy()) ?? [];
    for (const p of problems) say(`cluster removal: ${p}`);
  }

  say(report.summary());
  const failed = report.failed().length > 0 || interrupted;
  if (failed || process.env.FAULTS_KEEP === '1') {
    say(`\nservice logs kept in ${logDir} (the cluster itself was removed)`);
  } else {
    fs.rmSync(baseDir, { recursive: true, force: true });
  }
  return interrupted ? 130 : failed ? 1 : 0;
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

main().then((code) => process.exit(code), (error) => {
  process.stderr.write(`fault-injection suite crashed: ${errorText(error)}\n`);
  process.exit(1);
});
