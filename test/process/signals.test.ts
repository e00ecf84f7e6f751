// SIGTERM and SIGINT as docker, systemd and Ctrl+C send them, to the service run both ways users run it:
// `npm start` (the signal goes to npm's process, which hands it to the service it started) and
// `node dist/main.js` directly. Each time a long poll is held when the signal comes: it must be answered
// (drained, not cut), the embedded database must be closed (its lock file gone) and the process must exit
// 0 — the service's own bound forces exit 1 after 15 s, so a 0 is also "within the bound".
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from '../../scripts/build.mjs';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Started {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  baseUrl: string;
  apiKey: string;
  output: () => string;
}

/** Starts the service with `command` on a fresh DATA_DIR and waits for its first-run banner. */
async function start(command: string[], dataDir: string): Promise<Started> {
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    // Only what a user's shell would have (vitest sets MODE=test, which the service rightly refuses).
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn', SANDBOX_SETTLEMENT: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 60_000;
  while (!/Merchant API key:\s+mk_test_\w+/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    exit,
    baseUrl: /listening on (http:\/\/\S+)/.exec(output)![1]!,
    apiKey: /Merchant API key:\s+(mk_test_\w+)/.exec(output)![1]!,
    output: () => output,
  };
}

const ways = [
  { name: 'npm start', command: ['npm', 'start', '--silent'] },
  { name: 'node dist/main.js', command: [process.execPath, 'dist/main.js'] },
];

describe('signals', () => {
  beforeAll(() => buildIfStale(), 120_000);

  for (const way of ways) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      it(`${signal} to ${way.name}: the held long poll is answered, the database closed, exit 0`, { timeout: 90_000 }, async () => {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-signals-'));
        try {
          const service = await start(way.command, dataDir);
          // The banner's first request works as printed: the key shown above it, the address it listens on.
          const tryLine = /Try:\s+curl -H "X-API-KEY: (\S+)" (\S+)/.exec(service.output());
          expect(tryLine?.slice(1), service.output()).toEqual([service.apiKey, `${service.baseUrl}/api/v2/balance`]);
          expect((await fetch(tryLine![2]!, { headers: { 'x-api-key': tryLine![1]! } })).status).toBe(200);
          const headers = { 'x-api-key': service.apiKey, 'content-type': 'application/json' };
          const created = await fetch(`${service.baseUrl}/api/v2/simple-qrs`, { method: 'POST', headers, body: JSON.stringify({ business_code: 1001, amount: 10 }) });
          expect(created.status).toBe(201);
          const qr = (await created.json()) as { id: string };
          const held = fetch(`${service.baseUrl}/api/v2/simple-qrs/${qr.id}?wait=25`, { headers })
            .then(async (response) => ({ status: response.status, body: (await response.json()) as { status: string } }));
          // The poll is held (nothing changes the QR) when the signal comes.
          const early = await Promise.race([held, new Promise((resolve) => setTimeout(() => resolve('still held'), 500))]);
          expect(early).toBe('still held');
          expect(fs.existsSync(path.join(dataDir, 'mps.lock'))).toBe(true);

          service.child.kill(signal);
          const [answer, exit] = await Promise.all([held, service.exit]);
          expect(answer).toEqual({ status: 200, body: expect.objectContaining({ status: 'ACTIVE' }) });
          expect(exit, service.output()).toEqual({ code: 0, signal: null });
          expect(fs.existsSync(path.join(dataDir, 'mps.lock')), 'the embedded database was not closed').toBe(false);
          expect(service.output()).not.toMatch(/shutdown took too long|shutdown failed/);
        } finally {
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      });
    }
  }
});
