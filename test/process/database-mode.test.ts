// A database belongs to the mode it was first started in (migration 026, src/db/database-mode.ts), as an
// operator meets it: the live service's first start records MODE=live; then a MODE=sandbox CLI cannot mint a
// terminal key on it, nor a MODE=sandbox service start on it — each exits 2 with one line saying why — while
// the live CLI still works. On an embedded DATA_DIR (test/cli covers PostgreSQL).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from '../../scripts/build.mjs';
import { openDatabase } from '../../src/db/open.ts';
import { ADMIN_TOKEN, TEST_ENCRYPTION_KEYS } from '../helpers/app.ts';
import { freePort, startBankFor } from '../helpers/baneco.ts';
import { runCli } from '../helpers/cli.ts';
import type { BanecoSimulator } from '../../simulators/baneco/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const linesOf = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

interface Run {
  child: ChildProcess;
  exit: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
}

/** The service as `npm start` runs it (node scripts/run.mjs main), with only what a user's shell would have plus `env`. */
function start(env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['scripts/run.mjs', 'main'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exit, stdout: () => stdout, stderr: () => stderr };
}

// A first start creates and migrates an embedded database: well over a minute on a loaded 2-core machine.
describe('a database remembers the mode it was first started in', { timeout: 240_000 }, () => {
  let root: string;
  let dataDir: string;
  let bank: BanecoSimulator;
  let port: number;
  let live: Record<string, string>;
  beforeAll(async () => {
    buildIfStale();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-database-mode-'));
    dataDir = path.join(root, 'data');
    port = await freePort();
    bank = await startBankFor(port);
    live = { ...bank.env, MODE: 'live', ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS, ADMIN_TOKEN, DATA_DIR: dataDir };
  }, 180_000);
  afterAll(async () => {
    await bank?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('the first start records its mode', async () => {
    const run = start({ ...live, PORT: String(port) });
    let code: number | null = null;
    try {
      const deadline = Date.now() + 180_000;
      for (;;) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
        if (ready?.status === 200) break;
        if (run.child.exitCode !== null || Date.now() > deadline) throw new Error(`the live service did not become ready:\n${run.stdout()}${run.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      run.child.kill('SIGTERM');
      // The next tests open the DATA_DIR: its lock must be gone.
      code = await run.exit;
    }
    expect(code, run.stderr()).toBe(0);
    const db = await openDatabase({ kind: 'pglite', dataDir }, { purpose: 'cli' });
    try {
      expect((await db.query('select mode from database_mode')).rows).toEqual([{ mode: 'live' }]);
    } finally {
      await db.close();
    }
  });

  it('a MODE=sandbox CLI refuses it in one line, exit 2, and mints no key', async () => {
    const keys = async () => {
      const db = await openDatabase({ kind: 'pglite', dataDir }, { purpose: 'cli' });
      try {
        return (await db.query<{ keys: number }>('select count(*)::int as keys from api_keys')).rows[0]!.keys;
      } finally {
        await db.close();
      }
    };
    const before = await keys();
    for (const args of [['key', 'create', '1001', '--kind', 'terminal'], ['migrate', '--dry-run']]) {
      const result = await runCli(args, { DATA_DIR: dataDir });
      expect(result.exitCode, result.stderr).toBe(2);
      expect(result.stdout).toBe('');
      expect(linesOf(result.stderr)).toEqual([expect.stringMatching(/^mps: configuration error: MODE=sandbox, but this database belongs to MODE=live \(recorded by its first start, \d{4}-\d\d-\d\dT[\d:.]+Z\): .*start it with MODE=live/)]);
    }
    expect(await keys()).toBe(before);
  });

  it('a MODE=sandbox service (any ROLE) refuses to start on it: exit 2, one line, no sandbox keys', async () => {
    for (const role of ['all', 'worker']) {
      const run = start({ DATA_DIR: dataDir, ROLE: role, SANDBOX_SETTLEMENT: 'off' });
      expect(await run.exit, run.stdout() + run.stderr()).toBe(2);
      expect(linesOf(run.stderr()), role).toEqual([expect.stringMatching(/^Configuration error: MODE=sandbox, but this database belongs to MODE=live \(recorded by its first start, .*\): refusing to run a sandbox process on a live database; start it with MODE=live, or point DATABASE_URL or DATA_DIR at a sandbox database$/)]);
      expect(run.stdout()).not.toMatch(/First run|mk_test_/);
    }
  });

  it('the CLI in the database\'s own mode still works', async () => {
    const result = await runCli(['partner', 'list'], live);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(Array.isArray(result.json.data)).toBe(true);
  });
});
