// Every command and code block in the docs runs, so none can rot. Each page is run against a fresh
// service started as `npm start` starts it (sandbox, embedded database, merchant 1001 and its partner) —
// with an operator token for the page that mints a terminal key, and sandbox settlement and rate limits
// off so that nothing moves on its own — its blocks in the page's order, its commands one by one:
//   - `sh` blocks: each command, as bash splits them, runs in bash with the reader's placeholders filled
//     in (`fill` below). It must exit 0 and every curl in it must answer a status below 400, or the one
//     its comment names (`# 422 → …`); a `"status": "PAID"` or an `Idempotent-Replayed: true` the comment
//     promises must be in the answer, and a program's comment lines are the output it must print.
//   - `js` blocks: run as an ES module after a prelude that defines `base`, `key` and `id` (a QR that the
//     sandbox pays a second later); it must finish.
// A block that cannot run here says so and why in a `<!-- not run: reason -->` line before it; a block
// that shows a whole file is `<!-- sample: path -->` (test/docs/samples.test.ts, and the file runs).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/kernel/logging.ts';
import type { SandboxCredentials } from '../../src/merchants/sandbox-setup.ts';
import { startService } from '../../src/startup.ts';
import { trackOpen } from '../helpers/open-resources.ts';
import { ALL_BLOCKS, CODE_LANGUAGES, commandsOf, SHOWN_LANGUAGES, type Command } from './doc-blocks.ts';
import { runProgram } from './processes.ts';

const ADMIN_TOKEN = 'docs-samples-admin-token-0123456789abcdef';
const runnable = ALL_BLOCKS.filter((block) => CODE_LANGUAGES.has(block.lang) && !block.marker);

/** What a page's run knows: the service, the sandbox keys, what the page set and what it was answered. */
interface Session {
  baseUrl: string;
  sandbox: SandboxCredentials;
  terminalKey: string;
  /** Shell variables the page set (`KEY=mk_test_…`, `IDEM=$(…)`), exported to its later commands. */
  vars: Record<string, string>;
  /** What the page's placeholders stand for, read off earlier answers: the QR, payment, intent, ETag. */
  seen: { id?: string; paymentId?: string; intentCode?: string; etag?: string };
}

/** The reader's placeholders, as a reader following the page would fill them in. */
function fill(text: string, session: Session): string {
  const { seen } = session;
  return text
    .replaceAll('http://127.0.0.1:3000', session.baseUrl)
    .replaceAll('mk_test_…', session.sandbox.apiKey)
    .replaceAll('pk_master_test_…', session.sandbox.masterKey)
    .replaceAll('tk_test_…', session.terminalKey)
    .replace(/<id>|<qr_id>/g, () => seen.id ?? '<no QR made yet>')
    .replace(/<payment_id>/g, () => seen.paymentId ?? '<no payment made yet>')
    .replace(/<intent_code>/g, () => seen.intentCode ?? '<no intent made yet>')
    .replace(/<etag>/g, () => seen.etag ?? '<no ETag seen yet>');
}

/** What a later command's placeholders may need, read off an answer (the resource its URL names). */
function remember(command: string, output: string, seen: Session['seen']): void {
  const etag = /^etag:\s*(\S+)/im.exec(output);
  if (etag) seen.etag = etag[1]!;
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(output.slice(output.indexOf('{')));
  } catch {
    return;
  }
  if (/\/api\/v2\/simple-qrs\s/.test(`${command} `) && typeof answer.id === 'string') seen.id = answer.id;
  if (/\/simple-qrs\/[^/\s]+\/payments/.test(command) && typeof answer.id === 'number') seen.paymentId = String(answer.id);
  if (/\/onboarding\/intent\s/.test(`${command} `) && typeof answer.code === 'string') seen.intentCode = answer.code;
}

/** A comment line promising program output, as a pattern: `…` stands for anything, any port for 3000. */
function outputPattern(line: string): RegExp {
  const text = line.replace(/^#\s?/, '').trim();
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '.*?').replace(/:3000\b/g, ':\\d+');
  return new RegExp(escaped);
}

async function runShell(command: Command, session: Session, cwd: string): Promise<void> {
  const text = fill(command.text, session);
  const where = `\n$ ${text}`;
  const env = { ...process.env, ...session.vars, ADMIN_TOKEN, MPS_BASE_URL: session.baseUrl };
  // A variable the page sets (`KEY=mk_test_…`, `IDEM=$(node -p …)`) is kept for its later commands.
  const assignment = /^([A-Z_][A-Z0-9_]*)=(\$\(.*\)|\S+)$/.exec(text.trim());
  if (assignment) {
    const result = await runProgram('bash', ['-c', `${text.trim()} && printf '%s' "$${assignment[1]}"`], { cwd, env });
    expect(result.status, `${where}\nexited ${result.status}: ${result.stderr}`).toBe(0);
    session.vars[assignment[1]!] = result.stdout;
    return;
  }
  expect(text, `${where}\na sample's own --write-out would hide the status from this test`).not.toMatch(/\s(-w|--write-out)\s/);
  // curl writes the status it got on stderr, after whatever the sample asked it to write.
  const prelude = `curl() { command curl --max-time 35 -w '%{stderr}\\nHTTP_STATUS=%{http_code}\\n' "$@"; }\n`;
  // A program of the repository runs where a reader runs it, at its root (and may not write there).
  const atRoot = /\bexamples\//.test(text);
  if (atRoot) expect(text, `${where}\nwould write into the repository`).not.toMatch(/>|\s-o\s/);
  const result = await runProgram('bash', ['-c', prelude + text], { cwd: atRoot ? process.cwd() : cwd, env });
  expect(result.status, `${where}\nexited ${result.status}: ${result.stderr}${result.stdout}`).toBe(0);
  const statuses = [...result.stderr.matchAll(/HTTP_STATUS=(\d{3})/g)].map((match) => Number(match[1]));
  const curls = text.match(/(?:^|[\s;&|(])curl\s/g)?.length ?? 0;
  expect(statuses.length, `${where}\nevery curl must report its status`).toBe(curls);
  // A command is answered below 400, unless its comment says which error it shows (`# 422 → …`).
  const promisedStatus = /^#\s*(\d{3})\b/.exec(command.comment.trim());
  if (promisedStatus) expect(statuses, `${where}\n${result.stdout}`).toEqual([Number(promisedStatus[1])]);
  else for (const status of statuses) expect(status, `${where}\n${result.stdout}`).toBeLessThan(400);
  for (const promised of command.comment.matchAll(/"status":\s*"(\w+)"/g)) {
    expect(result.stdout.replace(/"status":\s*/g, '"status":'), where).toContain(`"status":"${promised[1]}"`);
  }
  if (command.comment.includes('Idempotent-Replayed: true')) expect(result.stdout.toLowerCase(), where).toContain('idempotent-replayed: true');
  // A program's comment lines are the output it promises, line by line.
  if (curls === 0) {
    for (const line of command.comment.split('\n').filter((l) => l.trim() !== '')) expect(result.stdout, `${where}\npromised: ${line}`).toMatch(outputPattern(line));
  }
  remember(text, result.stdout, session.seen);
}

async function runJs(code: string, session: Session, cwd: string): Promise<void> {
  const prelude = `
const base = ${JSON.stringify(session.baseUrl)};
const key = ${JSON.stringify(session.sandbox.apiKey)};
const headers = { 'X-API-KEY': key, 'Content-Type': 'application/json' };
const created = await fetch(base + '/api/v2/simple-qrs', { method: 'POST', headers, body: JSON.stringify({ business_code: ${session.sandbox.businessCode}, amount: 12.5 }) });
if (created.status !== 201) throw new Error('the prelude could not create a QR: ' + created.status);
const id = (await created.json()).id;
setTimeout(() => fetch(base + '/api/v2/sandbox/simple-qrs/' + id + '/payments', { method: 'POST', headers: { 'X-API-KEY': key } }), 1000);
`;
  const result = await runProgram(process.execPath, ['--input-type=module', '-e', prelude + code], { cwd });
  expect(result.status, `${code}\nexited ${result.status}: ${result.stderr}`).toBe(0);
}

describe('commands and code in the docs', () => {
  it('are each run below, or say why not', () => {
    expect(runnable.length).toBeGreaterThan(20);
    for (const block of ALL_BLOCKS) {
      const where = `${block.page}:${block.line}`;
      expect([...CODE_LANGUAGES, ...SHOWN_LANGUAGES], `${where}: fence language "${block.lang}" (use sh, js, ts, json, ini or none)`).toContain(block.lang);
      if (block.marker?.kind === 'not run') expect(block.marker.reason.length, `${where} gives no reason`).toBeGreaterThan(20);
    }
    for (const block of runnable) expect(['sh', 'js'], `${block.page}:${block.line}: a ${block.lang} block is run only as a sample file`).toContain(block.lang);
  });

  const pages = [...new Set(runnable.map((block) => block.page))];
  it.each(pages)('%s, from a first start', { timeout: 180_000 }, async (page) => {
    const config = loadConfig({ DATABASE_URL: 'memory://', PORT: '0', ADMIN_TOKEN, LOG_LEVEL: 'silent', RATE_LIMIT: 'off', PUBLIC_RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off' });
    const service = await startService(config, { log: createLogger('silent') });
    const closed = trackOpen(`the service of ${page}`);
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'mps-doc-samples-'));
    try {
      const address = service.app!.server.address();
      const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
      const sandbox = (await service.ready)!;
      const minted = await fetch(`${baseUrl}/admin/v1/merchants/${sandbox.businessCode}/api-keys`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'terminal' }),
      });
      const session: Session = { baseUrl, sandbox, terminalKey: ((await minted.json()) as { api_key: string }).api_key, vars: {}, seen: {} };
      for (const block of runnable.filter((b) => b.page === page)) {
        if (block.lang === 'js') await runJs(block.code, session, cwd);
        else for (const command of commandsOf(block.code)) await runShell(command, session, cwd);
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
      await service.close();
      closed();
    }
  });
});
