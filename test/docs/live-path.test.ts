// README's "The live path on your desk", run as written — runnable-samples.test.ts skips it, because it
// needs the bank simulator and the service as processes. Its commands are read from README.md itself, so
// the page cannot drift from what is tested. What the test changes, and why:
//   - `npm run bank` runs as written, on free ports instead of 3900 and 3000 (other runs may hold those):
//     BANK_PORT and BANK_CALLBACK_BASE, both documented in simulators/baneco/README.md; the callback secret
//     in that base is the test's, so that it can knock with a wrong one; and BANK_KNOBS (documented there
//     too) has the bank decide a batch's items 200 ms after the upload rather than 2 s, which each transfer
//     here would otherwise wait for — the service's side, the printed line, runs unchanged;
//   - the line it prints runs as printed (it carries the service's PORT, as it does for any callback port
//     but 3000), with two variables added to its environment: LOG_LEVEL=trace, so that every line the
//     service can write is checked below, and BANECO_TIMEOUT=2s, so that the bank timeout costs 2 s, not 10;
//   - each curl runs in bash as written, with the ports, the printed merchant key and the placeholders
//     (<id>, <rail_reference>, <transfer_id>) filled in from earlier answers. It must answer below 400, or
//     the status its comment names (`# 201 → …`); a `"status": "X"` its comment promises must be in the
//     answer — a read is run again until it is (every 200 ms, 30 s at most), as a reader runs it again a few
//     seconds later.
// Then, against the same two processes, what a reader may meet and the section leaves out: a refused bank
// call, a bank timeout, expired tokens, callbacks with a wrong secret and an unreadable one, the bank
// calling twice, a rejected batch item. Last, the service is stopped, and everything it wrote over the
// whole run must hold none of the bank's secrets, the platform's account or a full account of anybody.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from '../../scripts/build.mjs';
import { encryptField } from '../../simulators/baneco/crypto.ts';
import { blocksOf, commandsOf, type Command } from './doc-blocks.ts';
import { freePort, runToEnd, startCommand, type DocProcess } from './processes.ts';

const HEADING = '### The live path on your desk';

/** The section's fenced blocks: from its heading to the next heading outside a fence. */
function sectionBlocks() {
  const lines = readFileSync('README.md', 'utf8').split('\n');
  const start = lines.indexOf(HEADING) + 1;
  expect(start, `README.md has no "${HEADING}"`).toBeGreaterThan(0);
  let end = lines.length;
  let fenced = false;
  for (let i = start; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(lines[i]!)) {
      end = i + 1;
      break;
    }
  }
  return blocksOf('README.md').filter((block) => block.line > start && block.line < end);
}

interface Session {
  bankPort: number;
  servicePort: number;
  key: string;
  seen: { id?: string; railReference?: string; transferId?: string };
  /** Each command's parsed answer, in order. */
  answers: { command: string; answer: Record<string, unknown> }[];
}

function fill(text: string, session: Session): string {
  const filled = text
    .replaceAll('127.0.0.1:3900', `127.0.0.1:${session.bankPort}`)
    .replaceAll('127.0.0.1:3000', `127.0.0.1:${session.servicePort}`)
    .replaceAll('mk_test_…', session.key)
    .replace(/<id>/g, () => session.seen.id ?? '<id>')
    .replace(/<rail_reference>/g, () => session.seen.railReference ?? '<rail_reference>')
    .replace(/<transfer_id>/g, () => session.seen.transferId ?? '<transfer_id>');
  expect(filled, 'a placeholder no earlier answer fills').not.toMatch(/<[a-z_]+>/);
  return filled;
}

// curl writes the status it got on stderr, after the answer.
const CURL = `curl() { command curl --max-time 35 -w '%{stderr}\\nHTTP_STATUS=%{http_code}\\n' "$@"; }\n`;

async function runCurl(command: Command, session: Session): Promise<Record<string, unknown>> {
  const text = fill(command.text, session);
  const where = `\n$ ${text}`;
  const promisedCode = /^#\s*(\d{3})\b/.exec(command.comment.trim())?.[1];
  const promised = [...command.comment.matchAll(/"status":\s*"(\w+)"/g)].map((match) => match[1]!);
  const isRead = !/\s(-d|-X|--data)\s/.test(` ${text} `);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const result = await runToEnd(CURL + text);
    expect(result.status, `${where}\nexited ${result.status}: ${result.stderr}`).toBe(0);
    const codes = [...result.stderr.matchAll(/HTTP_STATUS=(\d{3})/g)].map((match) => Number(match[1]));
    expect(codes.length, `${where}\none curl per command here`).toBe(1);
    if (promisedCode) expect(codes[0], `${where}\n${result.stdout}`).toBe(Number(promisedCode));
    else expect(codes[0], `${where}\n${result.stdout}`).toBeLessThan(400);
    const compact = result.stdout.replace(/"status":\s*/g, '"status":');
    const missing = promised.find((status) => !compact.includes(`"status":"${status}"`));
    if (missing === undefined) {
      const answer = JSON.parse(result.stdout) as Record<string, unknown>;
      session.answers.push({ command: text, answer });
      return answer;
    }
    if (!isRead || Date.now() > deadline) expect(compact, `${where}\npromised "status": "${missing}"`).toContain(`"status":"${missing}"`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('README: the live path on your desk', () => {
  const blocks = sectionBlocks();
  const runs = blocks.filter((block) => block.lang === 'sh');
  const commands = runs.flatMap((block) => commandsOf(block.code));
  const secret = randomBytes(32).toString('base64url');
  const session: Session = { bankPort: 0, servicePort: 0, key: '', seen: {}, answers: [] };
  let bank: DocProcess | undefined;
  let service: DocProcess | undefined;
  let printed: Record<string, string> = {};

  beforeAll(async () => {
    buildIfStale(); // npm start would, within the wait for its banner
    session.bankPort = await freePort();
    session.servicePort = await freePort();
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await bank?.stop();
  }, 60_000);

  it('is a simulator, the line it prints, and curl commands; runnable-samples is told why it skips them', () => {
    expect(runs.length).toBeGreaterThan(1);
    for (const block of runs) expect(block.marker, `README.md:${block.line}`).toMatchObject({ kind: 'not run', reason: expect.stringContaining('live-path.test.ts') });
    expect(commands[0]!.text).toBe('npm run bank');
    for (const command of commands.slice(1)) expect(command.text).toMatch(/^curl /);
    expect(blocks.filter((block) => block.lang === '').map((block) => block.code)).toEqual([expect.stringMatching(/^RAIL=baneco .* npm start\n$/)]);
  });

  it('npm run bank prints the line the README shows', { timeout: 60_000 }, async () => {
    bank = startCommand(commands[0]!.text, {
      BANK_PORT: String(session.bankPort),
      BANK_CALLBACK_BASE: `http://127.0.0.1:${session.servicePort}/rails/baneco/${secret}/`,
      BANK_KNOBS: JSON.stringify({ batchDecisionDelayMs: 200 }),
    });
    const line = (await bank.waitFor(/^RAIL=baneco .* npm start$/m, 45_000))[0];
    // The README's line with its … as any value; the PORT the test's callback port adds is the only difference.
    const shown = blocks.find((block) => block.lang === '')!.code.trim().replaceAll('127.0.0.1:3900', `127.0.0.1:${session.bankPort}`);
    const pattern = new RegExp(`^${shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '\\S+')}$`);
    expect(line.replace(` PORT=${session.servicePort}`, '')).toMatch(pattern);
    expect(line).toContain(` PORT=${session.servicePort} `);
    printed = Object.fromEntries(line.replace(/ npm start$/, '').split(' ').map((pair) => pair.split('=', 2) as [string, string]));
    expect(printed.BANECO_CALLBACK_SECRET).toBe(secret);
  });

  it('the printed line starts the service on the bank\'s rail, printing sandbox keys', { timeout: 120_000 }, async () => {
    const line = /^RAIL=baneco .* npm start$/m.exec(bank!.output())![0];
    service = startCommand(line, { LOG_LEVEL: 'trace', BANECO_TIMEOUT: '2s' });
    session.key = (await service.waitFor(/Merchant API key:\s+(mk_test_\w+)/, 90_000))[1]!;
    expect(service.output()).toContain(`listening on http://127.0.0.1:${session.servicePort}`);
  });

  it('the curl commands: a QR the bank issues, paid at the bank, a transfer COMPLETED through a batch', { timeout: 120_000 }, async () => {
    for (const command of commands.slice(1)) {
      const answer = await runCurl(command, session);
      if (/\/api\/v2\/simple-qrs\s/.test(`${command.text} `)) {
        session.seen.id = answer.id as string;
        session.seen.railReference = answer.rail_reference as string;
      }
      if (/\/api\/v2\/transfers\s/.test(`${command.text} `)) session.seen.transferId = String(answer.id);
      // The events promised, newest first, are the answer's.
      if (command.text.includes('/api/v2/events')) {
        const types = command.comment.match(/\b[a-z_]+\.[a-z_]+\b/g);
        expect(types?.length).toBeGreaterThan(0);
        expect((answer.data as { type: string }[]).map((event) => event.type)).toEqual(types);
      }
    }
    const state = await control('state');
    // The QR is the bank's: issued under our id, its rail_reference the bank's qrId.
    const created = session.answers.find((each) => /\/simple-qrs\s/.test(`${each.command} `))!.answer;
    expect(created).toMatchObject({ rail: 'baneco', status: 'ACTIVE' });
    expect(state.qrs).toContainEqual(expect.objectContaining({ qrId: session.seen.railReference, transactionId: session.seen.id }));
    // Paid once: one payment, the bank's, as the long poll saw it.
    const paid = session.answers.find((each) => each.command.includes('?wait='))!.answer;
    expect(paid).toMatchObject({ status: 'PAID', payments_count: 1, last_payment: { rail: 'baneco' } });
    // Through a batch: the bank holds the transfer as an item of our batch, accepted.
    const batch = (state.batches as { batchId: string; items: { batchDetailId: string; status: string }[] }[])
      .find((each) => each.items.some((item) => item.batchDetailId === `mps-transfer-${session.seen.transferId}`));
    expect(batch?.batchId).toMatch(/^mps-b-\d+$/);
    expect(batch!.items).toEqual([expect.objectContaining({ batchDetailId: `mps-transfer-${session.seen.transferId}`, status: 'ACEP' })]);
  });

  /** The simulator's control API (GET without a body, POST with one). */
  async function control(route: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`http://127.0.0.1:${session.bankPort}/_control/${route}`, body === undefined ? {} : {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    expect(response.status, `/_control/${route}`).toBeLessThan(300);
    return (await response.json()) as Record<string, unknown>;
  }

  /** The service's API with the printed merchant key. */
  async function api(route: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; answer: Record<string, unknown>; text: string }> {
    const response = await fetch(`http://127.0.0.1:${session.servicePort}${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-api-key': session.key, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, answer: JSON.parse(text) as Record<string, unknown>, text };
  }

  // The simulator masks a payer's account as the bank does, so a full one reaches the service only in a
  // forged callback: both kinds are sent below.
  const PAYER = '4011223344556677';
  const FORGED_PAYER = '5022334455667788';
  const REJECTED = '1000-2000-0000';

  it('along the way: refused, timed out, expired tokens, wrong-secret and unreadable callbacks, a repeat, a rejection', { timeout: 120_000 }, async () => {
    const { BANECO_ACCOUNT: account, BANECO_PASSWORD: password } = printed as Record<string, string>;
    // A refusal whose message echoes the platform's account and password: the bank's words are cleaned.
    await control('knobs', { faults: { generateQR: { kind: 'refuse', message: `Cuenta ${account} no habilitada (${password})` } } });
    const refused = await api('/api/v2/simple-qrs', { business_code: 1001, amount: 10 });
    expect(refused).toMatchObject({ status: 502, answer: { code: 'RAIL_REFUSED' } });
    expect(refused.text).not.toContain(account);
    expect(refused.text).not.toContain(password);
    // No answer within BANECO_TIMEOUT.
    await control('knobs', { faults: { generateQR: { kind: 'stall' } } });
    expect(await api('/api/v2/simple-qrs', { business_code: 1001, amount: 10 })).toMatchObject({ status: 503, answer: { code: 'RAIL_UNAVAILABLE' } });

    // Every token expired: the next call authenticates again. The bank calls back twice for the payment.
    await control('tokens/expire', {});
    await control('knobs', { callbacks: { duplicate: true } });
    const second = await api('/api/v2/simple-qrs', { business_code: 1001, amount: 10 });
    expect(second.status).toBe(201);
    await control(`qrs/${second.answer.rail_reference as string}/pay`, { senderAccount: PAYER, senderName: 'MARIA QUISPE' });
    const secondPaid = await api(`/api/v2/simple-qrs/${second.answer.id as string}?wait=25`);
    expect(secondPaid.answer).toMatchObject({ status: 'PAID', payments_count: 1 });

    // Callbacks with a wrong secret (one character off) are the 404 of a path that does not exist.
    const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    const base = `http://127.0.0.1:${session.servicePort}/rails/baneco`;
    const payment = { qrId: second.answer.rail_reference, transactionId: '1', paymentDate: '2026-01-01', paymentTime: '10:00:00', currency: 'BOB', amount: 10, senderBankCode: '1016', senderName: 'X', senderDocumentId: '0', senderAccount: FORGED_PAYER, description: '', branchCode: '' };
    const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await post(`${base}/${wrong}/api/qrsimple/notifyPaymentQR`, payment)).status).toBe(404);
    expect((await post(`${base}/${wrong}/api/notifyStatus`, { bankBatchId: 1, batchId: 'mps-b-1', batchDetailId: 'mps-transfer-1', status: 'RECH', descriptionStatus: `Cuenta ${REJECTED}`, transactionIdDebit: 0, transactionIdCredit: '' })).status).toBe(404);
    // The right secret with a body out of shape: refused, logged by the problem, never by the body.
    const unreadable = await post(`${base}/${secret}/api/qrsimple/notifyPaymentQR`, { qrId: 5, senderAccount: FORGED_PAYER });
    expect(await unreadable.json()).toMatchObject({ responseCode: 1 });

    // A batch item the bank rejects (an account ending in 0000): FAILED, the money back.
    const rejected = await api('/api/v2/transfers', {
      business_code: 1001, amount: '5.00', currency: 'BOB', destination: { type: 'bank_account', bank_code: 1001, account_number: REJECTED, account_titular: 'Ana Pérez' },
    }, { 'idempotency-key': randomUUID() });
    expect(rejected.status).toBe(201);
    const deadline = Date.now() + 30_000;
    let transfer = rejected.answer;
    while (transfer.status !== 'FAILED' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      transfer = (await api(`/api/v2/transfers/${rejected.answer.id as number}`)).answer;
    }
    expect(transfer).toMatchObject({ status: 'FAILED', failure_code: 'REJECTED_BY_BANK' });

    // Each payment recorded once, whatever the bank repeated: 150.50 + 10.00 in, the 25.00 transfer out.
    expect((await api(`/api/v2/simple-qrs/${session.seen.id!}`)).answer).toMatchObject({ payments_count: 1, amount_collected: 150.5 });
    expect((await api('/api/v2/balance')).answer).toMatchObject({ available: 135.5 });
    const callbacks = (await control('callbacks')).callbacks as { kind: string; copy?: number }[];
    expect(callbacks.filter((each) => each.kind === 'notifyPaymentQR' && each.copy === 2).length).toBeGreaterThan(0);
  });

  it('the service wrote no secret and no full account over the whole run', { timeout: 60_000 }, async () => {
    expect(service, 'the service never started').toBeDefined();
    await service!.stop(); // its logs are buffered: they are all written once it has exited
    const output = service!.output();
    // The run is in it, at trace level: the refusal, the unreadable callback, the shutdown.
    for (const line of ['RAIL_REFUSED', 'bank payment callback unreadable', 'shutting down']) expect(output).toContain(line);

    // Every token the simulator issues is a JWT with the same header: ours has it, the service's had it.
    const auth = await fetch(`http://127.0.0.1:${session.bankPort}/ApiGateway/api/authentication/authenticate`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: printed.BANECO_USER, password: encryptField(printed.BANECO_PASSWORD!, printed.BANECO_AES_KEY!) }),
    });
    const token = ((await auth.json()) as { token: string }).token;
    const beneficiary = /"account_number":"([^"]+)"/.exec(commands.map((command) => command.text).join('\n'))![1]!;
    const secrets: Record<string, string> = {
      BANECO_PASSWORD: printed.BANECO_PASSWORD!,
      BANECO_AES_KEY: printed.BANECO_AES_KEY!,
      BANECO_CALLBACK_SECRET: secret,
      'BANECO_CALLBACK_SECRET, its first 16 characters (the wrong one shares them)': secret.slice(0, 16),
      'the platform\'s BANECO_ACCOUNT': printed.BANECO_ACCOUNT!,
      'a bank token (the header of every token the simulator issues)': token.split('.')[0]!,
      'a bearer token': 'Bearer ',
      [`the README's beneficiary ${beneficiary}`]: beneficiary,
      'the README\'s beneficiary, digits only': beneficiary.replace(/\D/g, ''),
      [`the rejected beneficiary ${REJECTED}`]: REJECTED,
      'the rejected beneficiary, digits only': REJECTED.replace(/\D/g, ''),
      'the payer\'s account': PAYER,
      'the forged payer\'s account': FORGED_PAYER,
    };
    for (const [name, value] of Object.entries(secrets)) {
      expect(value.length, name).toBeGreaterThan(6);
      const at = output.indexOf(value);
      expect(at === -1 ? null : output.slice(Math.max(0, output.lastIndexOf('\n', at)), output.indexOf('\n', at)), `${name} is in the service's output`).toBeNull();
    }
  });
});
