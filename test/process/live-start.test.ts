// `npm start` in MODE=live, as an operator runs it: refused in one line naming RAIL without a bank's rail
// (the pretend bank never runs live), and on RAIL=baneco — here against the bank simulator — a banner that
// says which bank it talks to without a single secret, and a QR the bank issues and a payer pays.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from '../../scripts/build.mjs';
import { ADMIN_TOKEN, TEST_ENCRYPTION_KEYS } from '../helpers/app.ts';
import { freePort, SECRETS, startBankFor } from '../helpers/baneco.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Run {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout: () => string;
  stderr: () => string;
}

/** `npm start` with only what a user's shell would have, plus `env` (vitest sets MODE=test, which the service refuses). */
function npmStart(env: Record<string, string>): Run {
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, exit, stdout: () => stdout, stderr: () => stderr };
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, run: Run, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (run.child.exitCode !== null || Date.now() > deadline) throw new Error(`${what}:\n${run.stdout()}${run.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('npm start in MODE=live', () => {
  beforeAll(() => buildIfStale(), 120_000);

  it('without RAIL: exits 2 before opening the database, with one line naming RAIL', { timeout: 60_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-live-start-'));
    try {
      const run = npmStart({ MODE: 'live', ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS, DATA_DIR: dataDir, PORT: '0' });
      const exit = await run.exit;
      expect(exit, run.stderr()).toEqual({ code: 2, signal: null });
      const lines = run.stderr().split('\n').filter((line) => line.trim() !== '');
      expect(lines, run.stderr()).toEqual([expect.stringMatching(/^Configuration error: RAIL=sandbox \(the default: RAIL is unset\) cannot run with MODE=live; set RAIL=baneco /)]);
      expect(run.stdout()).toBe('');
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('with RAIL=baneco: names the bank and the callback base but no secret, takes a payment through the bank, stops on SIGTERM', { timeout: 90_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-live-start-'));
    const port = await freePort();
    const bank = await startBankFor(port);
    let run: Run | undefined;
    try {
      run = npmStart({ ...bank.env, MODE: 'live', ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS, ADMIN_TOKEN, DATA_DIR: dataDir, PORT: String(port) });
      const base = `http://127.0.0.1:${port}`;
      await until(async () => {
        const ready = await fetch(`${base}/readyz`).catch(() => null);
        return ready?.status === 200 ? true : undefined;
      }, 'the live service did not become ready', run);

      const banner = run.stdout();
      const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
      expect(banner).toContain(`Merchant Payments Service ${version} (live) listening on ${base}`);
      expect(banner).toContain(`Rail:      baneco (Banco Económico) at http://127.0.0.1:${bank.port}\n`);
      expect(banner).toContain(`Bank callbacks: http://localhost:${port}/rails/baneco/<BANECO_CALLBACK_SECRET>/`);
      // What this trial start leaves unconfigured, each under its variable; ADMIN_TOKEN only listens on loopback here.
      const checks = banner.slice(banner.indexOf('Check before taking money'));
      expect(checks.match(/^  [A-Z_]+(?= )/gm)).toEqual(['  BANKS_FILE', '  PUBLIC_BASE_URL', '  DATABASE_URL', '  METRICS_TOKEN']);
      expect(checks).toContain('BANKS_FILE is unset');
      expect(banner).not.toMatch(/sandbox accounts|mk_test_/);
      const output = run.stdout() + run.stderr();
      for (const secret of [...SECRETS, ADMIN_TOKEN, TEST_ENCRYPTION_KEYS.split(':')[1]!]) expect(output).not.toContain(secret);

      // Money in: a live merchant's QR is issued by the bank, a payer pays it there, the bank's callback records it.
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const created = await fetch(`${base}/admin/v1/merchants`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Tienda en vivo' }) });
      expect(created.status).toBe(201);
      const merchant = (await created.json()) as { business_code: number; api_key: string };
      expect(merchant.api_key).toMatch(/^mk_live_/);
      const headers = { 'x-api-key': merchant.api_key, 'content-type': 'application/json' };
      const qrResponse = await fetch(`${base}/api/v2/simple-qrs`, { method: 'POST', headers, body: JSON.stringify({ business_code: merchant.business_code, amount: 25.5 }) });
      expect(qrResponse.status).toBe(201);
      const qr = (await qrResponse.json()) as { id: string; rail: string; rail_reference: string };
      expect(qr.rail).toBe('baneco');
      bank.pay(qr.rail_reference);
      const paid = await until(async () => {
        const read = (await (await fetch(`${base}/api/v2/simple-qrs/${qr.id}`, { headers })).json()) as { status: string; payments_count: number };
        return read.status === 'PAID' ? read : undefined;
      }, 'the bank\'s payment was not recorded', run, 15_000);
      expect(paid.payments_count).toBe(1);
      const balance = (await (await fetch(`${base}/api/v2/balance`, { headers })).json()) as { available: number };
      expect(balance.available).toBe(25.5);

      run.child.kill('SIGTERM');
      expect(await run.exit, run.stdout() + run.stderr()).toEqual({ code: 0, signal: null });
      expect(fs.existsSync(path.join(dataDir, 'mps.lock')), 'the embedded database was not closed').toBe(false);
    } finally {
      if (run && run.child.exitCode === null) {
        run.child.kill('SIGKILL');
        await run.exit;
      }
      await bank.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
