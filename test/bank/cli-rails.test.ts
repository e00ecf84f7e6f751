// `mps rails sweep` and `mps rails reconcile` (docs/rails.md, docs/operators.md) as an operator's cron runs
// them: the real bin/mps.js in a child process, on a database of each kind (an embedded DATA_DIR, a
// PostgreSQL database through DATABASE_URL), against the bank simulator. What a cron reads is pinned: the exit
// code — reconcile: 0 balanced, 3 breaks, 4 the bank refused or did not answer (nothing stored, ask again
// later), 1 a date or rail the command cannot take — and the JSON on stdout, with nothing on stderr but one
// line when the command was refused or the bank gave no comparison (exit 4). The sweep itself (sweepRailDay) is exercised against the simulator in sweep.test.ts
// and pay-in.test.ts, and as a CLI process on a cluster by `npm run faults -- bank`. Each spawn costs about a
// second, and an embedded DATA_DIR's first one several more (it creates and migrates the database): one
// database per kind serves every command, in order.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BanecoSimulator } from '../../simulators/baneco/index.ts';
import { formatWallClock } from '../../src/time.ts';
import { freePort, SECRETS, startBankFor } from '../helpers/baneco.ts';
import { CLI_TIMEOUT_MS, runCli, type CliResult } from '../helpers/cli.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.ts';

const ZONE = 'America/La_Paz'; // SERVICE_TIMEZONE's default, which the CLI runs with here

describe('mps rails sweep and reconcile: what is refused before any database is opened (exit 1)', { timeout: CLI_TIMEOUT_MS }, () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-cli-rails-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('lists both in --help, reconcile with its exit codes', async () => {
    const help = await runCli(['--help'], {});
    expect(help.stdout).toContain('rails sweep --date YYYY-MM-DD');
    expect(help.stdout).toContain('rails reconcile --date YYYY-MM-DD');
    expect(help.stdout).toContain('exit 3 when there are breaks, 4 when the bank refused or did not answer');
  });

  it('refuses a date that is not a real YYYY-MM-DD, or an argument, before opening a database', async () => {
    const cases: string[][] = [
      ...['2026-02-30', '26-11-01', 'yesterday'].map((date) => ['rails', 'sweep', '--date', date]),
      ...[['--date', '2026-02-30'], ['--date', 'yesterday'], [], ['2026-11-01']].map((args) => ['rails', 'reconcile', ...args]),
    ];
    // No database is opened, so the commands can run side by side.
    const results = await Promise.all(cases.map((args) => runCli(args, { DATA_DIR: path.join(root, 'never') })));
    for (const [n, result] of results.entries()) {
      expect(result.exitCode, cases[n]!.join(' ')).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^mps: (--date must be a real date YYYY-MM-DD|rails (sweep|reconcile) takes no arguments but --date)/);
    }
    expect(fs.existsSync(path.join(root, 'never'))).toBe(false);
  });
});

describe.each(databaseKinds())('mps rails reconcile as a process against the bank simulator on %s', { timeout: CLI_TIMEOUT_MS }, (kind) => {
  let root: string;
  let bank: BanecoSimulator;
  /** One line per call the bank received. */
  const bankLog: string[] = [];
  let database: TestDatabase | undefined;
  /** Where the CLI finds the database: DATA_DIR (created by the first command) or DATABASE_URL. */
  let databaseEnv: Record<string, string>;
  let today: string;
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-cli-rails-'));
    // No service listens: the bank's callbacks go nowhere, once, and the CLI reads what the bank lists.
    bank = await startBankFor(await freePort(), { knobs: { callbacks: { retries: 0 } }, log: (line) => bankLog.push(line) });
    if (kind === 'postgres') {
      database = await createTestDatabase(kind);
      databaseEnv = { DATABASE_URL: database.url! };
    } else {
      databaseEnv = { DATA_DIR: path.join(root, 'data') };
    }
    today = formatWallClock(new Date(), ZONE).slice(0, 10);
  });
  afterAll(async () => {
    await bank?.stop();
    await database?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const reconcile = (date: string, env: Record<string, string> = {}) => runCli(['rails', 'reconcile', '--date', date], { ...bank.env, ...databaseEnv, ...env });
  /** What the command wrote, none of the bank's secrets or the platform's account in it. */
  const output = (result: CliResult) => {
    for (const secret of [...SECRETS, bank.env.BANECO_PASSWORD!, bank.env.BANECO_AES_KEY!]) expect(result.stdout + result.stderr).not.toContain(secret);
    return { exitCode: result.exitCode, json: result.json, stderr: result.stderr };
  };
  const storedRuns = async () => (await database!.db.query<{ date: string; origin: string; status: string; break_counts: unknown }>(
    'select business_date::text as date, origin, status, break_counts from rail_reconciliations order by id')).rows;

  it('exit 0 when the day is balanced, its run stored', async () => {
    expect(output(await reconcile(today))).toEqual({
      exitCode: 0,
      json: { date: today, rail: 'baneco', status: 'balanced', payments: { bank: 0, ours: 0 }, transfers: { bank: 0, ours: 0 }, breaks: [] },
      stderr: '',
    });
    if (database) expect(await storedRuns()).toEqual([{ date: today, origin: 'operator', status: 'balanced', break_counts: {} }]);
  });

  it('exit 3 when there are breaks, each listed on stdout and the run stored', async () => {
    // A payer pays at the bank for a QR the service never issued: money in the account that credits nobody.
    const stranger = bank.pay('99999999999999999999', { amount: 10 }) as { transactionId: string };
    expect(output(await reconcile(today))).toEqual({
      exitCode: 3,
      json: {
        date: today, rail: 'baneco', status: 'breaks', payments: { bank: 1, ours: 0 }, transfers: { bank: 0, ours: 0 },
        breaks: [{ kind: 'unmatched_credit', reference: stranger.transactionId, ours: null, bank: 10 }],
      },
      stderr: '',
    });
    if (database) expect((await storedRuns()).at(-1)).toEqual({ date: today, origin: 'operator', status: 'breaks', break_counts: { unmatched_credit: 1 } });
  });

  it('exit 4 when the bank refuses or cannot be reached: what it said on stdout, nothing stored (run it again later)', async () => {
    const runsBefore = database ? (await storedRuns()).length : 0;
    bank.setKnobs({ faults: { accountsHistory: { kind: 'refuse', code: 3, message: 'Cuenta no habilitada' } } });
    try {
      expect(output(await reconcile(today))).toEqual({
        exitCode: 4, json: { outcome: 'refused', day: today, message: 'Cuenta no habilitada' },
        stderr: `mps: the bank refused to list ${today}: Cuenta no habilitada; nothing was compared, run it again later\n`,
      });
    } finally {
      bank.setKnobs({ faults: { accountsHistory: null } });
    }
    // Nothing listens where BANECO_URL points: the connection is refused at once.
    const unreachable = output(await reconcile(today, { BANECO_URL: `http://127.0.0.1:${await freePort()}/ApiGateway/` }));
    expect(unreachable).toEqual({ exitCode: 4, json: { outcome: 'unknown', day: today, problem: expect.any(String) }, stderr: expect.stringMatching(new RegExp(`^mps: the bank did not answer for ${today} \\(.+\\); nothing was compared, run it again later\n$`)) });
    expect(unreachable.json.problem).not.toBe('');
    if (database) expect(await storedRuns()).toHaveLength(runsBefore);
  });

  it('exit 1 with one line for a day after today, before asking the bank', async () => {
    const tomorrow = formatWallClock(new Date(Date.now() + 86_400_000), ZONE).slice(0, 10);
    const calls = bankLog.length;
    const result = await reconcile(tomorrow);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`mps: --date must not be after today (${today} in ${ZONE})\n`);
    expect(bankLog.slice(calls)).toEqual([]);
  });

  it('exit 1 with one line, for either command, when the configured rail has no bank (RAIL=sandbox)', async () => {
    // The same database, without RAIL and the BANECO_* variables: the default sandbox rail.
    const reconciled = await runCli(['rails', 'reconcile', '--date', today], databaseEnv);
    expect(reconciled.exitCode).toBe(1);
    expect(reconciled.stdout).toBe('');
    expect(reconciled.stderr).toBe('mps: the configured rail has no bank to reconcile with (RAIL=sandbox)\n');
    const swept = await runCli(['rails', 'sweep', '--date', today], databaseEnv);
    expect(swept.exitCode).toBe(1);
    expect(swept.stdout).toBe('');
    expect(swept.stderr).toBe('mps: the configured rail has no bank pay-in to sweep (RAIL=sandbox)\n');
  });
});
