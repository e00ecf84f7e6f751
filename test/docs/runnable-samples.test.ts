// Every command and code block in the docs runs, so none can rot. Each page is run against a service as
// a first `npm start` leaves it (sandbox, embedded database, merchant 1001 and its partner), its blocks
// in the page's order, its commands one by one:
//   - `sh` blocks: each command (a line, with its `\` continuations and quoted line breaks) runs in bash,
//     with the reader's placeholders filled in (the rules are in `fill` below). It must exit 0 and answer
//     HTTP statuses below 400, or the one its comment names (`# 422 → …`); a `"status": "PAID"` in the
//     comment must be in the answer, and so must an `Idempotent-Replayed: true` it promises.
//   - `js` blocks: run as an ES module after a prelude that defines `base`, `key` and `id` (a QR that the
//     sandbox pays a second later); it must finish.
// A block that cannot run here says so and why in a `<!-- not run: reason -->` line before it; a block
// that shows a whole file is `<!-- sample: path -->` (test/docs/samples.test.ts, and the file runs).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/kernel/logging.ts';
import type { SandboxCredentials } from '../../src/merchants/sandbox-setup.ts';
import { startService } from '../../src/startup.ts';
import { trackOpen } from '../helpers/open-resources.ts';

const PAGES = [
  'README.md',
  ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
  'sdk/README.md',
  ...readdirSync('examples', { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('README.md')).map((name) => path.join('examples', name)),
];
/** Languages that are code to run; `json` blocks are data and the rest are pictures. */
const CODE = new Set(['sh', 'js', 'ts']);
const BLOCK = /(?:<!-- (sample|not run): ([^\n]*?) -->\n)?```(\w*)\n([\s\S]*?)```/g;
const ADMIN_TOKEN = 'docs-samples-admin-token-0123';

interface Block {
  page: string;
  line: number;
  lang: string;
  code: string;
  /** `sample` or `not run`, with its path or reason. */
  marker?: { kind: string; note: string };
}

function blocksOf(page: string): Block[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(BLOCK)]
    .filter((match) => CODE.has(match[3]!))
    .map((match) => ({
      page,
      line: text.slice(0, match.index).split('\n').length + (match[1] ? 1 : 0),
      lang: match[3]!,
      code: match[4]!,
      marker: match[1] ? { kind: match[1], note: match[2]! } : undefined,
    }));
}

const blocks = PAGES.flatMap(blocksOf);
const runnable = blocks.filter((block) => !block.marker);

/** One command of an `sh` block, with what its comments promise. */
interface Command {
  text: string;
  /** Comment lines and the trailing comment that follow the command, before the next one. */
  comment: string;
}

function commandsOf(code: string): Command[] {
  const commands: Command[] = [];
  let pending = '';
  for (const line of code.split('\n')) {
    if (pending === '' && /^\s*#/.test(line)) {
      if (commands.length > 0) commands[commands.length - 1]!.comment += `${line}\n`;
      continue;
    }
    if (line.trim() === '' && pending === '') continue;
    pending += `${line}\n`;
    // A command goes on past a trailing backslash, and past a line break inside single quotes (a JSON body).
    if (line.endsWith('\\') || (pending.match(/'/g)?.length ?? 0) % 2 === 1) continue;
    // A trailing comment starts at "  # " outside the quotes of these samples.
    const at = pending.search(/\s{2,}#\s/);
    commands.push(at >= 0 ? { text: pending.slice(0, at), comment: `${pending.slice(at)}\n` } : { text: pending, comment: '' });
    pending = '';
  }
  return commands;
}

/** What a page's run knows: the service, the sandbox keys, and the ids its commands have made. */
interface Session {
  baseUrl: string;
  sandbox: SandboxCredentials;
  terminalKey: string;
  /** Shell variables the page set (`KEY=mk_test_…`) and ids seen in answers (ID, PAYMENT_ID, CODE). */
  vars: Record<string, string>;
}

/** The reader's placeholders, as a reader following the page would fill them in. */
function fill(text: string, session: Session): string {
  const { vars } = session;
  return text
    .replaceAll('http://127.0.0.1:3000', session.baseUrl)
    .replaceAll('mk_test_…', session.sandbox.apiKey)
    .replaceAll('pk_master_test_…', session.sandbox.masterKey)
    .replaceAll('tk_test_…', session.terminalKey)
    .replace(/<id>|<qr_id>|\$ID\b/g, () => vars.ID ?? '<no QR made yet>')
    .replace(/<payment_id>/g, () => vars.PAYMENT_ID ?? '<no payment made yet>')
    .replace(/<code>/g, () => vars.CODE ?? '<no intent made yet>');
}

/** Ids a later command may need, read off an answer (the resource its URL names). */
function remember(command: string, output: string, vars: Record<string, string>): void {
  const body = output.slice(output.indexOf('{'));
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(body);
  } catch {
    return;
  }
  if (/\/api\/v2\/simple-qrs\s/.test(`${command} `) && typeof answer.id === 'string') vars.ID = answer.id;
  if (/\/simple-qrs\/[^/\s]+\/payments/.test(command) && typeof answer.id === 'number') vars.PAYMENT_ID = String(answer.id);
  if (/\/onboarding\/intent\s/.test(`${command} `) && typeof answer.code === 'string') vars.CODE = answer.code;
}

/** Runs a program to its end (asynchronously: the service answering it lives in this process). */
function run(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

async function runShell(command: Command, session: Session, cwd: string): Promise<void> {
  const text = fill(command.text, session);
  const where = `\n$ ${text}`;
  const env = { ...process.env, ...session.vars, ADMIN_TOKEN, MPS_BASE_URL: session.baseUrl };
  // A variable the page sets (`KEY=mk_test_…`, `IDEM=$(node -p …)`) is kept for its later commands.
  const assignment = /^([A-Z_][A-Z0-9_]*)=\S/.exec(text.trim());
  if (assignment) {
    const result = await run('bash', ['-c', `${text.trim()}\nprintf '%s' "$${assignment[1]}"`], { cwd, env });
    expect(result.status, `${where}\nexited ${result.status}: ${result.stderr}`).toBe(0);
    session.vars[assignment[1]!] = result.stdout;
    return;
  }
  // curl writes the status it got on stderr, after whatever the sample asked it to write.
  const prelude = `curl() { command curl -w '%{stderr}\\nHTTP_STATUS=%{http_code}\\n' "$@"; }\n`;
  // A command that runs a program of the repository runs where a reader would: at its root.
  const result = await run('bash', ['-c', prelude + text], { cwd: /\bexamples\//.test(text) ? process.cwd() : cwd, env });
  expect(result.status, `${where}\nexited ${result.status}: ${result.stderr}${result.stdout}`).toBe(0);
  const statuses = [...result.stderr.matchAll(/HTTP_STATUS=(\d{3})/g)].map((match) => Number(match[1]));
  // A command is answered below 400, unless its comment says which error it shows (`# 422 → …`).
  const promisedStatus = /^#\s*(\d{3})\b/.exec(command.comment.trim());
  if (promisedStatus) expect(statuses, `${where}\n${result.stdout}`).toEqual([Number(promisedStatus[1])]);
  else for (const status of statuses) expect(status, `${where}\n${result.stdout}`).toBeLessThan(400);
  const promisedQrStatus = /"status":\s*"([A-Z_]+)"/.exec(command.comment);
  if (promisedQrStatus) expect(result.stdout.replace(/"status":\s*/g, '"status":'), where).toContain(`"status":"${promisedQrStatus[1]}"`);
  if (command.comment.includes('Idempotent-Replayed: true')) expect(result.stdout.toLowerCase(), where).toContain('idempotent-replayed: true');
  remember(text, result.stdout, session.vars);
}

async function runJs(code: string, session: Session, cwd: string): Promise<void> {
  const prelude = `
const base = ${JSON.stringify(session.baseUrl)};
const key = ${JSON.stringify(session.sandbox.apiKey)};
const headers = { 'X-API-KEY': key, 'Content-Type': 'application/json' };
const created = await fetch(base + '/api/v2/simple-qrs', { method: 'POST', headers, body: JSON.stringify({ business_code: ${session.sandbox.businessCode}, amount: 12.5 }) });
const id = (await created.json()).id;
setTimeout(() => fetch(base + '/api/v2/sandbox/simple-qrs/' + id + '/payments', { method: 'POST', headers: { 'X-API-KEY': key } }), 1000);
`;
  const result = await run(process.execPath, ['--input-type=module', '-e', prelude + code], { cwd });
  expect(result.status, `${code}\nexited ${result.status}: ${result.stderr}`).toBe(0);
}

describe('commands and code in the docs', () => {
  it('are each run below, or say why not', () => {
    expect(runnable.length).toBeGreaterThan(20);
    for (const block of blocks.filter((b) => b.marker?.kind === 'not run')) {
      expect(block.marker!.note.length, `${block.page}:${block.line} gives no reason`).toBeGreaterThan(20);
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
      const session: Session = { baseUrl, sandbox, terminalKey: ((await minted.json()) as { api_key: string }).api_key, vars: {} };
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
