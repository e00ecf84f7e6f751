// The Banco Económico simulator (simulators/baneco/), tested through HTTP as a client of the bank would
// use it, with a merchant callback receiver started here. The tests encrypt with their own few lines of
// node:crypto (not the simulator's) so that a mistake in the simulator's scheme cannot agree with itself.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decryptField, encryptField } from '../../simulators/baneco/crypto.ts';
import { qrPngBase64 } from '../../simulators/baneco/emv.ts';
import { type BanecoSimulator, startBanecoSimulator } from '../../simulators/baneco/index.ts';

// jsqr is CommonJS with an ES-style default export: depending on the loader the function is the module or its `.default`.
type JsQr = typeof import('jsqr').default;
const jsQR: JsQr = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as JsQr;

const SECRET = 'test-secret-0123456789-abcdefghijklmnop';
const KEY = '0123456789ABCDEF0123456789ABCDEF';
const ACCOUNT = '1041070563';

// ── The test's own encryption (AES-256-CBC, key = the 32 ASCII bytes, base64(IV ‖ ciphertext)) ──────
function enc(text: string, key = KEY): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', Buffer.from(key, 'ascii'), iv);
  return Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final()]).toString('base64');
}
function dec(text: string, key = KEY): string {
  const raw = Buffer.from(text, 'base64');
  const decipher = createDecipheriv('aes-256-cbc', Buffer.from(key, 'ascii'), raw.subarray(0, 16));
  return Buffer.concat([decipher.update(raw.subarray(16)), decipher.final()]).toString('utf8');
}

/** Today in La Paz (UTC−4, no daylight saving), computed here independently of the simulator. */
function laPazDay(offsetDays = 0): string {
  return new Date(Date.now() - 4 * 3600_000 + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

// ── The merchant's callback receiver ─────────────────────────────────────────────────────────────────
interface Received {
  path: string;
  body: Record<string, unknown>;
}
type Behaviour = (path: string, count: number) => { status: number; body: string } | 'hang';
const received: Received[] = [];
const acknowledge: Behaviour = () => ({ status: 200, body: JSON.stringify({ responseCode: 0, message: '' }) });
let behaviour: Behaviour = acknowledge;
const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const path = request.url ?? '';
    received.push({ path, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
    const answer = behaviour(path, received.length);
    if (answer === 'hang') return;
    response.writeHead(answer.status, { 'content-type': 'application/json' });
    response.end(answer.body);
  });
});

let bank: BanecoSimulator;
let callbackPrefix: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  callbackPrefix = `/rails/baneco/${SECRET}/`;
  bank = await startBanecoSimulator({
    port: 0,
    userName: 'mps',
    password: 'clave-secreta',
    aesKey: KEY,
    account: ACCOUNT,
    callbackBase: `http://127.0.0.1:${port}${callbackPrefix}`,
    // Tests set their own timings; the defaults are for people.
    knobs: { batchDecisionDelayMs: 30, callbacks: { retryBaseMs: 50, timeoutMs: 1000 } },
  });
});

afterAll(async () => {
  await bank?.stop();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

beforeEach(() => {
  bank.reset();
  received.length = 0;
  behaviour = acknowledge;
});

// ── A client of the bank ─────────────────────────────────────────────────────────────────────────────
interface Answer {
  status: number;
  text: string;
  json: Record<string, any>;
}

async function call(method: string, path: string, options: { body?: unknown; token?: string; raw?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(new URL(path, bank.baseUrl), { method, headers, body, signal: options.signal });
  const text = await response.text();
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(text) as Record<string, any>;
  } catch {
    // left empty: some tests expect a body that is not JSON
  }
  return { status: response.status, text, json };
}

async function controlCall(method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(new URL(path, bank.controlUrl), {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

async function login(): Promise<string> {
  const answer = await call('POST', 'api/authentication/authenticate', { body: { userName: 'mps', password: enc('clave-secreta') } });
  expect(answer.json.responseCode).toBe(0);
  return answer.json.token as string;
}

function qrBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transactionId: `qr-${Math.random().toString(36).slice(2)}`,
    accountCredit: enc(ACCOUNT),
    currency: 'BOB',
    amount: 150.5,
    description: 'Pedido 42',
    dueDate: laPazDay(30),
    singleUse: true,
    modifyAmount: false,
    ...overrides,
  };
}

async function newQr(token: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const answer = await call('POST', 'api/qrsimple/generateQR', { token, body: qrBody(overrides) });
  expect(answer.json).toMatchObject({ responseCode: 0, message: '' });
  return answer.json.qrId as string;
}

function batchBody(items: { id: string; amount: number; account: string }[], overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const aml = { AMLSource: 'Cobros QR de comercios', AMLDestination: 'Pago a comercio' };
  return {
    batchId: `mps-b-${Math.floor(Math.random() * 1e9)}`,
    type: 'PROVIDERS',
    description: 'Pagos a comercios',
    detailedDebit: true,
    accountCode: enc(ACCOUNT),
    batchCurrency: 'BOB',
    batchAmount: Math.round(items.reduce((sum, item) => sum + item.amount * 100, 0)) / 100,
    AMLData: aml,
    paymentCount: items.length,
    paymentList: items.map((item) => ({
      batchDetailId: item.id, amount: item.amount, accountCode: enc(item.account), accountTypeCode: 'CCAD',
      bankCode: '1001', beneficiaryName: 'Comercio Uno S.R.L.', note: 'liquidación', AMLData: aml,
    })),
    ...overrides,
  };
}

function decodePng(base64: string): string | null {
  const png = PNG.sync.read(Buffer.from(base64, 'base64'));
  const result = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  return result ? result.data : null;
}

const callbacksOf = (suffix: string) => received.filter((each) => each.path === `${callbackPrefix}${suffix}`);

// ─────────────────────────────────────────────────────────────────────────────────────────────────────

describe('encryption', () => {
  it("decrypts the bank's published example to 1234", () => {
    expect(decryptField('KJAzqjmwjxIOqVo5J3IH0/7fGmNdzuyszrlqexVSeos=', '40A318B299F245C2B697176723088629')).toBe('1234');
    expect(dec('KJAzqjmwjxIOqVo5J3IH0/7fGmNdzuyszrlqexVSeos=', '40A318B299F245C2B697176723088629')).toBe('1234');
  });

  it('agrees with an independent implementation both ways, with a fresh IV each time', () => {
    expect(decryptField(enc('1041-070563 ñ'), KEY)).toBe('1041-070563 ñ');
    const once = encryptField('1234', KEY);
    expect(dec(once)).toBe('1234');
    expect(encryptField('1234', KEY)).not.toBe(once);
    expect(Buffer.from(once, 'base64')).toHaveLength(32); // IV + one block
  });

  it('refuses what does not decrypt under the key', () => {
    expect(decryptField(enc('1234', 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF'), KEY)).toBeNull();
    expect(decryptField('1234', KEY)).toBeNull();
    expect(decryptField('not base64!', KEY)).toBeNull();
    expect(decryptField(42, KEY)).toBeNull();
  });

  it('offers the encrypt and decrypt helper calls, answering bare text', async () => {
    const encrypted = await call('GET', `api/authentication/encrypt?text=1234&aesKey=${KEY}`);
    expect(encrypted.status).toBe(200);
    expect(dec(encrypted.text)).toBe('1234');
    const decrypted = await call('GET', `api/authentication/decrypt?text=${encodeURIComponent(enc('abc'))}&aesKey=${KEY}`);
    expect(decrypted.text).toBe('abc');
  });
});

describe('authentication and tokens', () => {
  it('answers a JWT (HS256) for the right user and encrypted password', async () => {
    const answer = await call('POST', 'api/authentication/authenticate', { body: { userName: 'mps', password: enc('clave-secreta') } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ responseCode: 0, message: '' });
    const [head] = (answer.json.token as string).split('.');
    expect(JSON.parse(Buffer.from(head!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
  });

  it.each([
    ['a wrong password', { userName: 'mps', password: enc('otra') }, 2],
    ['a wrong user', { userName: 'otro', password: enc('clave-secreta') }, 2],
    ['a password in clear', { userName: 'mps', password: 'clave-secreta' }, 1],
    ['a password under another key', { userName: 'mps', password: enc('clave-secreta', 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF') }, 1],
    ['no password', { userName: 'mps' }, 1],
    ['a numeric user', { userName: 5, password: enc('clave-secreta') }, 1],
  ])('refuses %s', async (_what, body, code) => {
    const answer = await call('POST', 'api/authentication/authenticate', { body });
    expect(answer.status).toBe(200);
    expect(answer.json.responseCode).toBe(code);
    expect(answer.json.message).not.toBe('');
    expect(answer.json.token).toBeUndefined();
  });

  it('refuses a body that is not JSON, and a non-JSON content type', async () => {
    const broken = await call('POST', 'api/authentication/authenticate', { raw: '{"userName":', headers: { 'content-type': 'application/json' } });
    expect(broken.json.responseCode).toBe(1);
    const form = await call('POST', 'api/authentication/authenticate', { raw: 'userName=mps', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    expect(form.json.responseCode).not.toBe(0);
  });

  it('answers 401 without a token, with a foreign one, and after expiry', async () => {
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250101')).status).toBe(401);
    const forged = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"sub":"mps"}').toString('base64url')}.abc`;
    const foreign = await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token: forged });
    expect(foreign.status).toBe(401);
    expect(foreign.json.responseCode).not.toBe(0);

    bank.setKnobs({ tokenLifetimeMs: 300 });
    const token = await login();
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token })).status).toBe(200);
    await sleep(400);
    for (const [method, path, body] of [
      ['GET', 'api/qrsimple/v2/paidQR/20250101', undefined],
      ['POST', 'api/qrsimple/generateQR', qrBody()],
      ['DELETE', 'api/qrsimple/cancelQR', { qrId: '1' }],
      ['GET', 'api/qrsimple/v2/statusQR/1', undefined],
      ['POST', 'api/accounts/history', {}],
      ['POST', 'api/batchPayment/upload', {}],
    ] as const) {
      expect((await call(method, path, { token, body })).status, path).toBe(401);
    }
  });

  it('expires every token at once through the control API', async () => {
    const token = await login();
    const expired = await controlCall('POST', 'tokens/expire');
    expect(expired.json).toEqual({ expired: 1 });
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token })).status).toBe(401);
    const fresh = await login();
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token: fresh })).status).toBe(200);
  });
});

describe('generateQR', () => {
  it('issues a 20-digit qrId and a PNG whose QR code holds an EMV payload with the qrId and amount', async () => {
    const token = await login();
    const answer = await call('POST', 'api/qrsimple/generateQR', { token, body: qrBody({ amount: 150.5 }) });
    expect(answer.json).toMatchObject({ responseCode: 0, message: '' });
    expect(answer.json.qrId).toMatch(/^\d{20}$/);
    expect(answer.json.qrImage).not.toMatch(/^data:/);
    const text = decodePng(answer.json.qrImage as string);
    expect(text).not.toBeNull();
    expect(text).toMatch(/^000201/);
    expect(text).toContain(answer.json.qrId);
    expect(text).toContain('5406150.50');
    expect(text).toContain('5303068');
    expect(text).toMatch(/6304[0-9A-F]{4}$/);
    const second = await newQr(token);
    expect(second).not.toBe(answer.json.qrId);
  });

  it('draws the pixels of qrcode\'s own PNG (300 × 300 RGBA, margin 4, level M, mask 2), only encoded more cheaply', async () => {
    // The simulator writes its PNG itself (emv.ts says why): whatever the payload's length, the image a
    // client decodes is the one QRCode.toBuffer would have drawn.
    for (const length of [1, 40, 184, 400, 900]) {
      const text = Array.from({ length }, (_, i) => String.fromCharCode(33 + ((i * 7 + length) % 90))).join('');
      const ours = PNG.sync.read(Buffer.from(await qrPngBase64(text), 'base64'));
      const theirs = PNG.sync.read(await QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 300, maskPattern: 2 }));
      expect([ours.width, ours.height], `length ${length}`).toEqual([theirs.width, theirs.height]);
      expect(ours.data.equals(theirs.data), `length ${length}`).toBe(true);
    }
  });

  it.each([
    ['no transactionId', { transactionId: undefined }],
    ['a numeric transactionId', { transactionId: 12 }],
    ['no accountCredit', { accountCredit: undefined }],
    ['an accountCredit in clear', { accountCredit: ACCOUNT }],
    ['another account', { accountCredit: enc('999999') }],
    ['currency EUR', { currency: 'EUR' }],
    ['amount as text', { amount: '150.50' }],
    ['three decimals', { amount: 1.005 }],
    ['amount zero', { amount: 0 }],
    ['a negative amount', { amount: -5 }],
    ['no amount', { amount: undefined }],
    ['dueDate in another format', { dueDate: '31/12/2030' }],
    ['dueDate not a day', { dueDate: '2030-02-30' }],
    ['dueDate in the past', { dueDate: '2020-01-01' }],
    ['no dueDate', { dueDate: undefined }],
    ['singleUse as text', { singleUse: 'true' }],
    ['no modifyAmount', { modifyAmount: undefined }],
    ['a branchCode over 5 characters', { branchCode: '123456' }],
    ['a numeric description', { description: 5 }],
  ])('refuses %s', async (_what, overrides) => {
    const token = await login();
    const answer = await call('POST', 'api/qrsimple/generateQR', { token, body: qrBody(overrides) });
    expect(answer.status).toBe(200);
    expect(answer.json.responseCode).not.toBe(0);
    expect(answer.json.message).toEqual(expect.any(String));
    expect(answer.json.message).not.toBe('');
    expect(answer.json.qrId).toBeUndefined();
  });

  it('accepts two decimals that floating point writes inexactly, and a 5-character branch', async () => {
    const token = await login();
    // 1.15 × 100 is 114.99999999999999 in binary floating point: still two decimals.
    await newQr(token, { amount: 1.15, branchCode: '12345' });
    await newQr(token, { amount: 0.29, description: null });
  });
});

describe('paying a QR', () => {
  it('lists the payment in statusQR, in paidQR of the day, in the account history, and notifies the merchant', async () => {
    const token = await login();
    const qrId = await newQr(token, { amount: 150.5, branchCode: 'SC01' });
    const pay = await controlCall('POST', `qrs/${qrId}/pay`, { senderName: 'MARIA LOPEZ', senderBankCode: '1003', senderAccount: '4011561913' });
    expect(pay.status).toBe(201);

    const status = await call('GET', `api/qrsimple/v2/statusQR/${qrId}`, { token });
    expect(status.json).toMatchObject({ responseCode: 0, message: '', statusQRCode: 1 });
    expect(status.json.statusQrCode).toBeUndefined();
    expect(status.json.payment).toHaveLength(1);
    const payment = status.json.payment[0];
    expect(payment).toEqual({
      qrId,
      transactionId: expect.stringMatching(/^\d+$/),
      paymentDate: `${laPazDay()}T00:00:00`,
      paymentTime: expect.stringMatching(/^\d{2}:\d{2}:\d{2}$/),
      currency: 'BOB',
      amount: 150.5,
      senderBankCode: '1003',
      senderName: 'MARIA LOPEZ',
      senderDocumentId: '0',
      senderAccount: '******1913',
      description: 'Pedido 42',
      branchCode: 'SC01',
    });

    const today = laPazDay().replaceAll('-', '');
    const paid = await call('GET', `api/qrsimple/v2/paidQR/${today}`, { token });
    expect(paid.json).toMatchObject({ responseCode: 0, message: '' });
    expect(paid.json.paymentList).toEqual([payment]);
    const yesterday = await call('GET', `api/qrsimple/v2/paidQR/${laPazDay(-1).replaceAll('-', '')}`, { token });
    expect(yesterday.json.paymentList).toEqual([]);

    const history = await call('POST', 'api/accounts/history', { token, body: { accountCode: enc(ACCOUNT), startDate: laPazDay(), endDate: laPazDay() } });
    expect(history.json).toMatchObject({ responseCode: 0, message: '', accountWithheldList: [] });
    expect(dec(history.json.accountHeader.accountCode)).toBe(ACCOUNT);
    expect(history.json.accountHeader).toMatchObject({ accountTypeCode: 'CC', status: 'ACTIVA', currency: 'BOB', balance: 1_000_150.5 });
    expect(history.json.accountDetailList).toEqual([{
      transactionId: Number(payment.transactionId), date: laPazDay(), time: payment.paymentTime, documentNumber: expect.any(Number),
      transactionType: 'C', amount: 150.5, description: expect.stringContaining(qrId), clienteNote: expect.any(String),
    }]);

    await waitFor(() => callbacksOf('api/qrsimple/notifyPaymentQR').length === 1, 'the payment callback');
    expect(callbacksOf('api/qrsimple/notifyPaymentQR')[0]!.body).toEqual({ payment });
    await waitFor(() => bank.callbacks().some((each) => each.acknowledged), 'the acknowledgement to be recorded');
    expect(bank.callbacks()[0]).toMatchObject({ kind: 'notifyPaymentQR', outcome: 'answered', httpStatus: 200, answer: { responseCode: 0, message: '' } });
  });

  it('spells the status key statusQrCode when the knob says so', async () => {
    const token = await login();
    const qrId = await newQr(token);
    await controlCall('POST', 'knobs', { statusKey: 'statusQrCode' });
    const status = await call('GET', `api/qrsimple/v2/statusQR/${qrId}`, { token });
    expect(status.json).toMatchObject({ responseCode: 0, statusQrCode: 0, payment: [] });
    expect(status.json.statusQRCode).toBeUndefined();
  });

  it('keeps a single-use QR to one payment of its amount; a multi-use QR with modifyAmount takes several', async () => {
    const token = await login();
    const single = await newQr(token, { amount: 10 });
    expect((await controlCall('POST', `qrs/${single}/pay`, { amount: 11 })).status).toBe(409);
    expect((await controlCall('POST', `qrs/${single}/pay`, {})).status).toBe(201);
    const again = await controlCall('POST', `qrs/${single}/pay`, {});
    expect(again.status).toBe(409);
    expect(again.json.error).toMatch(/pagado/);
    // force: money that moved anyway (the service must cope with it)
    expect((await controlCall('POST', `qrs/${single}/pay`, { amount: 3, force: true })).status).toBe(201);
    expect((await call('GET', `api/qrsimple/v2/statusQR/${single}`, { token })).json.payment).toHaveLength(2);

    const multi = await newQr(token, { singleUse: false, modifyAmount: true, amount: 10 });
    expect((await controlCall('POST', `qrs/${multi}/pay`, { amount: 7.25 })).status).toBe(201);
    expect((await controlCall('POST', `qrs/${multi}/pay`, { amount: 12 })).status).toBe(201);
    const status = await call('GET', `api/qrsimple/v2/statusQR/${multi}`, { token });
    expect(status.json.statusQRCode).toBe(1);
    expect(status.json.payment.map((each: { amount: number }) => each.amount)).toEqual([7.25, 12]);
  });

  it('refuses a payment after the dueDate', async () => {
    const token = await login();
    const qrId = await newQr(token, { dueDate: laPazDay() });
    const late = await controlCall('POST', `qrs/${qrId}/pay`, { paidAt: new Date(Date.now() + 2 * 86_400_000).toISOString() });
    expect(late.status).toBe(409);
    expect(late.json.error).toMatch(/vencido/);
  });

  it('injects payments to an unknown qrId and in USD (unmatched credits)', async () => {
    const token = await login();
    const orphan = await controlCall('POST', 'qrs/99999999999999999999/pay', { amount: 25 });
    expect(orphan.status).toBe(201);
    expect(orphan.json.knownQr).toBe(false);
    const qrId = await newQr(token);
    const usd = await controlCall('POST', `qrs/${qrId}/pay`, { currency: 'USD' });
    expect(usd.json.payment.currency).toBe('USD');

    const paid = await call('GET', `api/qrsimple/v2/paidQR/${laPazDay().replaceAll('-', '')}`, { token });
    expect(paid.json.paymentList.map((each: { qrId: string }) => each.qrId)).toEqual(['99999999999999999999', qrId]);
    const unknown = await call('GET', 'api/qrsimple/v2/statusQR/99999999999999999999', { token });
    expect(unknown.json.responseCode).toBe(3);
    await waitFor(() => callbacksOf('api/qrsimple/notifyPaymentQR').length === 2, 'both callbacks');
  });

  it('lists a payment on a past day when told when it happened', async () => {
    const token = await login();
    const qrId = await newQr(token);
    const yesterdayNoon = new Date(`${laPazDay(-1)}T12:00:00-04:00`).toISOString();
    await controlCall('POST', `qrs/${qrId}/pay`, { paidAt: yesterdayNoon });
    const paid = await call('GET', `api/qrsimple/v2/paidQR/${laPazDay(-1).replaceAll('-', '')}`, { token });
    expect(paid.json.paymentList).toHaveLength(1);
    expect(paid.json.paymentList[0]).toMatchObject({ paymentDate: `${laPazDay(-1)}T00:00:00`, paymentTime: '12:00:00' });
  });
});

describe('cancelQR', () => {
  it('cancels an unpaid single-use QR once; refuses a paid one and an unknown one', async () => {
    const token = await login();
    const qrId = await newQr(token);
    expect((await call('DELETE', 'api/qrsimple/cancelQR', { token, body: { qrId } })).json).toEqual({ responseCode: 0, message: '' });
    expect((await call('GET', `api/qrsimple/v2/statusQR/${qrId}`, { token })).json).toMatchObject({ statusQRCode: 9, payment: [] });
    expect((await call('DELETE', 'api/qrsimple/cancelQR', { token, body: { qrId } })).json.responseCode).toBe(4);
    expect((await controlCall('POST', `qrs/${qrId}/pay`, {})).status).toBe(409);

    const paid = await newQr(token);
    await controlCall('POST', `qrs/${paid}/pay`, {});
    const refused = await call('DELETE', 'api/qrsimple/cancelQR', { token, body: { qrId: paid } });
    expect(refused.json.responseCode).toBe(4);
    expect(refused.json.message).toMatch(/pagado/);
    expect((await call('DELETE', 'api/qrsimple/cancelQR', { token, body: { qrId: '12345678901234567890' } })).json.responseCode).toBe(3);
    expect((await call('DELETE', 'api/qrsimple/cancelQR', { token, body: {} })).json.responseCode).toBe(1);
  });

  it('cancels a multi-use QR for future payments, keeping the past ones listed', async () => {
    const token = await login();
    const qrId = await newQr(token, { singleUse: false });
    await controlCall('POST', `qrs/${qrId}/pay`, {});
    expect((await call('DELETE', 'api/qrsimple/cancelQR', { token, body: { qrId } })).json.responseCode).toBe(0);
    const status = await call('GET', `api/qrsimple/v2/statusQR/${qrId}`, { token });
    expect(status.json.statusQRCode).toBe(9);
    expect(status.json.payment).toHaveLength(1);
    expect((await controlCall('POST', `qrs/${qrId}/pay`, {})).status).toBe(409);
  });
});

describe('account history', () => {
  it.each([
    ['another account', { accountCode: enc('1'), startDate: '2025-01-01', endDate: '2025-01-02' }, 6],
    ['an account in clear', { accountCode: ACCOUNT, startDate: '2025-01-01', endDate: '2025-01-02' }, 1],
    ['a bad date', { accountCode: enc(ACCOUNT), startDate: '20250101', endDate: '2025-01-02' }, 1],
    ['dates the wrong way round', { accountCode: enc(ACCOUNT), startDate: '2025-01-05', endDate: '2025-01-02' }, 1],
  ])('refuses %s', async (_what, body, code) => {
    const token = await login();
    expect((await call('POST', 'api/accounts/history', { token, body })).json.responseCode).toBe(code);
  });

  it('refuses a paidQR date that is no day', async () => {
    const token = await login();
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250230', { token })).json.responseCode).toBe(1);
    expect((await call('GET', 'api/qrsimple/v2/paidQR/2025-01-01', { token })).json.responseCode).toBe(1);
  });
});

describe('payment batches', () => {
  it('accepts a valid batch, decides it after the delay, notifies each item and books the debits', async () => {
    const token = await login();
    const body = batchBody([{ id: 'mps-transfer-1', amount: 100.25, account: '201-5550001' }, { id: 'mps-transfer-2', amount: 50, account: '3010000' }]);
    const answer = await call('POST', 'api/batchPayment/upload', { token, body });
    expect(answer.json).toMatchObject({ responseCode: 0, message: '' });
    expect(Number.isInteger(answer.json.bankBatchId)).toBe(true);

    await waitFor(() => callbacksOf('api/notifyStatus').length === 2, 'two item callbacks');
    const byId = Object.fromEntries(callbacksOf('api/notifyStatus').map((each) => [each.body.batchDetailId, each.body]));
    expect(byId['mps-transfer-1']).toEqual({
      bankBatchId: answer.json.bankBatchId, batchId: body.batchId, batchDetailId: 'mps-transfer-1', status: 'ACEP',
      transactionIdDebit: expect.any(Number), transactionIdCredit: expect.stringMatching(/^\d+$/),
    });
    expect(byId['mps-transfer-2']).toEqual({
      bankBatchId: answer.json.bankBatchId, batchId: body.batchId, batchDetailId: 'mps-transfer-2', status: 'RECH',
      descriptionStatus: 'Cuenta cerrada', transactionIdDebit: 0, transactionIdCredit: '',
    });

    const history = await call('POST', 'api/accounts/history', { token, body: { accountCode: enc(ACCOUNT), startDate: laPazDay(), endDate: laPazDay() } });
    expect(history.json.accountDetailList).toEqual([expect.objectContaining({ transactionId: byId['mps-transfer-1']!.transactionIdDebit, transactionType: 'D', amount: -100.25 })]);
    expect(history.json.accountHeader).toMatchObject({ balance: 999_899.75, balanceReserved: 0, balanceAvailable: 999_899.75 });

    // The same batchId again is refused by default (the real bank's behaviour is unknown) …
    const repeated = await call('POST', 'api/batchPayment/upload', { token, body: { ...body } });
    expect(repeated.json.responseCode).toBe(5);
    // … and taken as a new batch when the knob says so.
    await controlCall('POST', 'knobs', { duplicateBatchId: 'accept' });
    const accepted = await call('POST', 'api/batchPayment/upload', { token, body: { ...body } });
    expect(accepted.json.responseCode).toBe(0);
    expect(accepted.json.bankBatchId).not.toBe(answer.json.bankBatchId);
  });

  it('books one debit for the accepted total when detailedDebit is false', async () => {
    const token = await login();
    const body = batchBody([{ id: 'a', amount: 10, account: '111' }, { id: 'b', amount: 20, account: '222' }, { id: 'c', amount: 5, account: '90000' }], { detailedDebit: false });
    expect((await call('POST', 'api/batchPayment/upload', { token, body })).json.responseCode).toBe(0);
    await waitFor(() => callbacksOf('api/notifyStatus').length === 3, 'three item callbacks');
    const debits = callbacksOf('api/notifyStatus').filter((each) => each.body.status === 'ACEP').map((each) => each.body.transactionIdDebit);
    expect(new Set(debits).size).toBe(1);
    const history = await call('POST', 'api/accounts/history', { token, body: { accountCode: enc(ACCOUNT), startDate: laPazDay(), endDate: laPazDay() } });
    expect(history.json.accountDetailList).toEqual([expect.objectContaining({ transactionId: debits[0], amount: -30, transactionType: 'D' })]);
  });

  it.each([
    ['a batchAmount that is not the sum', { batchAmount: 10 }],
    ['a paymentCount that is not the count', { paymentCount: 3 }],
    ['another debit account', { accountCode: enc('555') }],
    ['a debit account in clear', { accountCode: ACCOUNT }],
    ['type OTHER', { type: 'OTHER' }],
    ['no AMLData', { AMLData: undefined }],
    ['detailedDebit as text', { detailedDebit: 'true' }],
    ['batchCurrency EUR', { batchCurrency: 'EUR' }],
    ['USD from a BOB account', { batchCurrency: 'USD' }],
    ['an empty paymentList', { paymentList: [], paymentCount: 0, batchAmount: 1 }],
    ['more than the balance', 'huge'],
    ['an item accountCode that does not decrypt', 'item:accountCode:abc'],
    ['an item accountTypeCode CCA', 'item:accountTypeCode:CCA'],
    ['an item bankCode as a number', 'item:bankCode:1001n'],
    ['an item amount with three decimals', 'item:amount:1.001n'],
    ['an item without beneficiaryName', 'item:beneficiaryName:'],
    ['a repeated batchDetailId', 'repeat'],
  ])('refuses %s', async (_what, change) => {
    const token = await login();
    let body = batchBody([{ id: 'x1', amount: 30, account: '111' }, { id: 'x2', amount: 20, account: '222' }]);
    if (change === 'huge') body = batchBody([{ id: 'x1', amount: 2_000_000, account: '111' }]);
    else if (change === 'repeat') body = batchBody([{ id: 'x1', amount: 30, account: '111' }, { id: 'x1', amount: 20, account: '222' }]);
    else if (typeof change === 'string') {
      const [, field, value] = change.split(':') as [string, string, string];
      const item = (body.paymentList as Record<string, unknown>[])[1]!;
      item[field] = value.endsWith('n') ? Number(value.slice(0, -1)) : value === '' ? undefined : value;
    } else body = { ...body, ...change };
    const answer = await call('POST', 'api/batchPayment/upload', { token, body });
    expect(answer.status).toBe(200);
    expect(answer.json.responseCode).not.toBe(0);
    expect(answer.json.message).not.toBe('');
    expect(answer.json.bankBatchId).toBeUndefined();
  });

  it('holds items for a person, who decides them through the control API or the page', async () => {
    await controlCall('POST', 'knobs', { batchDecision: 'hold' });
    const token = await login();
    const body = batchBody([{ id: 'h1', amount: 1, account: '111' }, { id: 'h2', amount: 2, account: '222' }]);
    const { json } = await call('POST', 'api/batchPayment/upload', { token, body });
    await sleep(100);
    expect(received).toHaveLength(0);

    const decided = await controlCall('POST', `batches/${body.batchId}/items/h1/decide`, { status: 'RECH', descriptionStatus: 'Beneficiario no habilitado' });
    expect(decided.json).toMatchObject({ status: 'RECH', descriptionStatus: 'Beneficiario no habilitado' });
    expect((await controlCall('POST', `batches/${body.batchId}/items/h1/decide`, { status: 'ACEP' })).status).toBe(409);
    expect((await controlCall('POST', `batches/${body.batchId}/items/nope/decide`, { status: 'ACEP' })).status).toBe(404);
    expect((await controlCall('POST', `batches/${body.batchId}/items/h2/decide`, { status: 'MAYBE' })).status).toBe(400);

    const page = await fetch(bank.url);
    expect(await page.text()).toContain('h2');
    const form = await fetch(new URL('/decidir', bank.url), {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ batch: String(json.bankBatchId), batchDetailId: 'h2', status: 'ACEP', descriptionStatus: '' }),
    });
    expect(form.status).toBe(303);
    await waitFor(() => callbacksOf('api/notifyStatus').length === 2, 'both decisions');
    expect(callbacksOf('api/notifyStatus').map((each) => [each.body.batchDetailId, each.body.status, each.body.descriptionStatus]).sort()).toEqual([
      ['h1', 'RECH', 'Beneficiario no habilitado'],
      ['h2', 'ACEP', undefined],
    ]);
  });
});

describe('fault knobs', () => {
  it('refuses the next N calls of an operation, then answers normally', async () => {
    await controlCall('POST', 'knobs', { faults: { authenticate: { kind: 'refuse', times: 2, message: 'Mantenimiento' } } });
    for (let i = 0; i < 2; i++) {
      const refused = await call('POST', 'api/authentication/authenticate', { body: { userName: 'mps', password: enc('clave-secreta') } });
      expect(refused.json).toEqual({ responseCode: 99, message: 'Mantenimiento' });
    }
    await login();
  });

  it('answers refusals with another HTTP status when asked', async () => {
    await controlCall('POST', 'knobs', { refusalHttpStatus: 400 });
    const answer = await call('POST', 'api/authentication/authenticate', { body: { userName: 'mps', password: enc('x') } });
    expect(answer.status).toBe(400);
    expect(answer.json.responseCode).toBe(2);
  });

  it('answers HTTP 500, a malformed body, a closed connection, and nothing at all', async () => {
    const token = await login();
    await controlCall('POST', 'knobs', { faults: { statusQR: { kind: 'http500' } } });
    expect((await call('GET', 'api/qrsimple/v2/statusQR/1', { token })).status).toBe(500);

    await controlCall('POST', 'knobs', { faults: { paidQR: { kind: 'malformed' } } });
    const malformed = await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token });
    expect(malformed.status).toBe(200);
    expect(() => JSON.parse(malformed.text)).toThrow();

    await controlCall('POST', 'knobs', { faults: { generateQR: { kind: 'close' } } });
    await expect(call('POST', 'api/qrsimple/generateQR', { token, body: qrBody() })).rejects.toThrow();

    await controlCall('POST', 'knobs', { faults: { cancelQR: { kind: 'stall' } } });
    const started = Date.now();
    await expect(call('DELETE', 'api/qrsimple/cancelQR', { token, body: { qrId: '1' }, signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    // Each fault hit one call: the next ones are answered.
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token })).json.responseCode).toBe(0);
    expect((bank.state().qrs as unknown[])).toHaveLength(0);
  });

  it('does the work and loses the answer when the fault is "processed" (an upload whose outcome a client cannot know)', async () => {
    const token = await login();
    await controlCall('POST', 'knobs', { faults: { batchUpload: { kind: 'stall', processed: true } } });
    const body = batchBody([{ id: 'p1', amount: 5, account: '111' }]);
    await expect(call('POST', 'api/batchPayment/upload', { token, body, signal: AbortSignal.timeout(300) })).rejects.toThrow();
    await waitFor(() => callbacksOf('api/notifyStatus').length === 1, 'the item callback of the lost upload');
    expect(callbacksOf('api/notifyStatus')[0]!.body).toMatchObject({ batchId: body.batchId, status: 'ACEP' });
  });

  it('answers late by the delay of the operation', async () => {
    const token = await login();
    await controlCall('POST', 'knobs', { delays: { paidQR: 250 } });
    const started = Date.now();
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token })).json.responseCode).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    await controlCall('POST', 'knobs', { delays: { paidQR: null } });
    expect(bank.knobs.delays).toEqual({});
  });

  it('keeps a fault until cleared with times "always"', async () => {
    await controlCall('POST', 'knobs', { faults: { authenticate: { kind: 'http500', times: 'always' } } });
    for (let i = 0; i < 3; i++) expect((await call('POST', 'api/authentication/authenticate', { body: {} })).status).toBe(500);
    await controlCall('POST', 'knobs', { faults: { authenticate: null } });
    await login();
  });

  it('refuses unknown or malformed knobs with 400 and changes nothing', async () => {
    for (const body of [{ nope: 1 }, { faults: { generateQR: { kind: 'explode' } } }, { faults: { unknownOp: { kind: 'refuse' } } }, { callbacks: { dropNext: -1 } }, { refusalHttpStatus: 401 }, [1]]) {
      const answer = await controlCall('POST', 'knobs', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json.error).toEqual(expect.any(String));
    }
    expect((await controlCall('GET', 'knobs')).json.faults).toEqual({});
  });
});

describe('callback knobs', () => {
  async function paidQr(): Promise<string> {
    const token = await login();
    const qrId = await newQr(token);
    await controlCall('POST', `qrs/${qrId}/pay`, {});
    return qrId;
  }

  it('drops the next N callbacks', async () => {
    await controlCall('POST', 'knobs', { callbacks: { dropNext: 1 } });
    await paidQr();
    const second = await paidQr();
    await waitFor(() => received.length === 1, 'one callback');
    await sleep(100);
    expect(received.map((each) => (each.body.payment as { qrId: string }).qrId)).toEqual([second]);
    expect(bank.callbacks()[0]).toMatchObject({ outcome: 'dropped' });
  });

  it('sends each callback twice', async () => {
    await controlCall('POST', 'knobs', { callbacks: { duplicate: true } });
    await paidQr();
    await waitFor(() => received.length === 2, 'two copies');
    expect(received[0]!.body).toEqual(received[1]!.body);
  });

  it('delays callbacks', async () => {
    await controlCall('POST', 'knobs', { callbacks: { delayMs: 300 } });
    const started = Date.now();
    await paidQr();
    await sleep(150);
    expect(received).toHaveLength(0);
    await waitFor(() => received.length === 1, 'the delayed callback');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('sends callbacks out of order', async () => {
    await controlCall('POST', 'knobs', { batchDecision: 'hold', callbacks: { outOfOrder: true, outOfOrderWindowMs: 100 } });
    const token = await login();
    const body = batchBody([{ id: 'o1', amount: 1, account: '111' }, { id: 'o2', amount: 1, account: '222' }, { id: 'o3', amount: 1, account: '333' }]);
    await call('POST', 'api/batchPayment/upload', { token, body });
    for (const id of ['o1', 'o2', 'o3']) bank.decide(body.batchId as string, id, 'ACEP');
    await waitFor(() => received.length === 3, 'three callbacks');
    expect(received.map((each) => each.body.batchDetailId)).toEqual(['o3', 'o2', 'o1']);
  });

  it('contradicts a batch item status later', async () => {
    await controlCall('POST', 'knobs', { callbacks: { contradictNext: 1, contradictAfterMs: 300 } });
    const token = await login();
    await call('POST', 'api/batchPayment/upload', { token, body: batchBody([{ id: 'c1', amount: 1, account: '111' }]) });
    await waitFor(() => received.length === 2, 'the status and its contradiction');
    expect(received.map((each) => each.body.status)).toEqual(['ACEP', 'RECH']);
    expect(bank.callbacks().filter((each) => each.contradiction)).toHaveLength(1);
  });

  it('retries a callback answered 5xx, with back-off, until acknowledged', async () => {
    behaviour = (path, count) => (count < 3 ? { status: 503, body: 'busy' } : acknowledge(path, count));
    await paidQr();
    await waitFor(() => bank.callbacks().some((each) => each.acknowledged), 'an acknowledged try', 3000);
    expect(bank.callbacks().map((each) => [each.attempt, each.httpStatus, each.willRetry])).toEqual([[1, 503, true], [2, 503, true], [3, 200, false]]);
    expect(new Set(received.map((each) => JSON.stringify(each.body))).size).toBe(1);
  });

  it('retries a callback that gets no answer, and gives up after the retries', async () => {
    await controlCall('POST', 'knobs', { callbacks: { timeoutMs: 100, retries: 1, retryBaseMs: 20 } });
    behaviour = () => 'hang';
    await paidQr();
    await waitFor(() => bank.callbacks().length === 2 && bank.pendingCallbacks() === 0, 'two timed-out tries');
    expect(bank.callbacks().map((each) => [each.outcome, each.willRetry])).toEqual([['timeout', true], ['timeout', false]]);
  });

  it('does not retry an answer that is not a 5xx, but records it', async () => {
    behaviour = () => ({ status: 200, body: '{"responseCode":1,"message":"desconocido"}' });
    await paidQr();
    await waitFor(() => bank.callbacks().length === 1, 'one try');
    await sleep(150);
    expect(bank.callbacks()).toHaveLength(1);
    expect(bank.callbacks()[0]).toMatchObject({ acknowledged: false, answer: { responseCode: 1 }, willRetry: false });
  });
});

describe('routes, the control API and the page', () => {
  it('answers unknown paths and wrong methods in the bank shape, never 5xx', async () => {
    const missing = await call('GET', 'api/nothing');
    expect(missing.status).toBe(404);
    expect(missing.json.responseCode).not.toBe(0);
    const wrongMethod = await call('GET', 'api/qrsimple/generateQR');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.json.responseCode).not.toBe(0);
    const token = await login();
    for (const raw of ['[]', 'null', '"x"', '{"amount":1e400}']) {
      const answer = await call('POST', 'api/qrsimple/generateQR', { token, raw, headers: { 'content-type': 'application/json' } });
      expect(answer.status, raw).toBe(200);
      expect(answer.json.responseCode, raw).toBe(1);
    }
  });

  it('shows state and the env, and answers 404 for an unknown control route', async () => {
    const env = await controlCall('GET', 'env');
    expect(env.json).toEqual({
      RAIL: 'baneco', BANECO_URL: bank.baseUrl, BANECO_USER: 'mps', BANECO_PASSWORD: 'clave-secreta',
      BANECO_AES_KEY: KEY, BANECO_ACCOUNT: ACCOUNT, BANECO_CALLBACK_SECRET: SECRET,
    });
    expect(bank.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ApiGateway\/$/);
    const state = await controlCall('GET', 'state');
    expect(state.json).toMatchObject({ qrs: [], payments: [], batches: [], history: [], account: { balance: 1_000_000 } });
    expect((await controlCall('GET', 'nothing')).status).toBe(404);
    expect((await controlCall('POST', 'qrs/x/pay', { amount: 'ten' })).status).toBe(400);
    expect((await controlCall('POST', 'qrs/x/pay', { colour: 'red' })).status).toBe(400);
  });

  it('renders the Spanish page with the QRs and lets a payer pay one', async () => {
    const empty = await fetch(bank.url);
    expect(empty.status).toBe(200);
    expect(empty.headers.get('content-type')).toMatch(/text\/html/);
    expect(await empty.text()).toContain('<html lang="es">');

    const token = await login();
    const qrId = await newQr(token, { description: '<b>Café</b>', modifyAmount: true });
    const page = await (await fetch(bank.url)).text();
    expect(page).toContain(qrId);
    expect(page).toContain('&lt;b&gt;Café&lt;/b&gt;');
    expect(page).not.toContain('<b>Café</b>');

    const paid = await fetch(new URL('/pagar', bank.url), {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ qrId, amount: '99,90', senderName: 'ANA ROJAS', senderBankCode: '1014', senderAccount: '' }),
    });
    expect(paid.status).toBe(303);
    const after = await (await fetch(new URL(paid.headers.get('location')!, bank.url))).text();
    expect(after).toContain('Pago registrado');
    expect(after).toContain('ANA ROJAS');
    const status = await call('GET', `api/qrsimple/v2/statusQR/${qrId}`, { token });
    expect(status.json.payment[0]).toMatchObject({ amount: 99.9, senderName: 'ANA ROJAS', senderBankCode: '1014', senderAccount: expect.stringMatching(/^\*{6}\d{4}$/) });
  });

  it('resets state, knobs and tokens', async () => {
    const token = await login();
    await newQr(token);
    await controlCall('POST', 'knobs', { statusKey: 'statusQrCode' });
    expect((await controlCall('POST', 'reset')).json).toEqual({ reset: true });
    expect((bank.state().qrs as unknown[])).toHaveLength(0);
    expect(bank.knobs.statusKey).toBe('statusQRCode');
    expect(bank.knobs.batchDecisionDelayMs).toBe(30); // the start's knobs, not the defaults
    expect((await call('GET', 'api/qrsimple/v2/paidQR/20250101', { token })).status).toBe(401);
  });
});

describe('a simulator without a callback base, and stop()', () => {
  it('records callbacks as skipped, and stop() ends stalled calls', async () => {
    const alone = await startBanecoSimulator({ aesKey: KEY, password: 'p', knobs: { faults: { authenticate: { kind: 'stall' } } } });
    try {
      expect(alone.credentials.callbackSecret).toBeNull();
      expect(alone.env.BANECO_CALLBACK_SECRET).toBeUndefined();
      alone.pay('12345', { amount: 1 });
      expect(alone.callbacks()).toEqual([expect.objectContaining({ kind: 'notifyPaymentQR', outcome: 'skipped', url: null })]);
      const stalled = fetch(new URL('api/authentication/authenticate', alone.baseUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      await sleep(50);
      await alone.stop();
      await expect(stalled).rejects.toThrow();
    } finally {
      await alone.stop();
    }
  });
});

describe('npm run bank', () => {
  it('prints the environment for the service, serves the bank, and stops on SIGTERM with exit 0', { timeout: 60_000 }, async () => {
    const { spawn } = await import('node:child_process');
    const path = await import('node:path');
    const root = path.resolve(import.meta.dirname, '../..');
    // As a user runs it (npm hands the signal to the simulator), on any free port.
    const child = spawn('npm', ['run', 'bank', '--silent'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, BANK_PORT: '0', BANK_QUIET: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => / npm start\n/.test(output), `the printed environment:\n${output}`, 45_000);
      const line = /^RAIL=baneco .* npm start$/m.exec(output)![0];
      const vars = Object.fromEntries(line.replace(/ npm start$/, '').split(' ').map((pair) => pair.split('=', 2) as [string, string]));
      // The bank's variables, then the desk's (callbacks go to the default port 3000: no PORT).
      expect(Object.keys(vars)).toEqual(['RAIL', 'BANECO_URL', 'BANECO_USER', 'BANECO_PASSWORD', 'BANECO_AES_KEY', 'BANECO_ACCOUNT', 'BANECO_CALLBACK_SECRET',
        'BANECO_BATCH_INTERVAL', 'DATABASE_URL']);
      expect(vars.DATABASE_URL).toBe('memory://');
      expect(vars.BANECO_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ApiGateway\/$/);
      expect(vars.BANECO_AES_KEY).toMatch(/^[\x21-\x7e]{32}$/);
      expect(vars.BANECO_CALLBACK_SECRET).toMatch(/^[A-Za-z0-9_-]{32,}$/);
      expect(output).toContain(`http://127.0.0.1:3000/rails/baneco/${vars.BANECO_CALLBACK_SECRET}/`);

      // The printed credentials work: the test's own encryption of the password under the printed key.
      const response = await fetch(new URL('api/authentication/authenticate', vars.BANECO_URL), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: vars.BANECO_USER, password: enc(vars.BANECO_PASSWORD!, vars.BANECO_AES_KEY) }),
      });
      expect(await response.json()).toMatchObject({ responseCode: 0, token: expect.any(String) });

      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('independence from the service', () => {
  it('imports nothing from src/ (the rail must not share protocol code with the bank it is tested against)', async () => {
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dir = path.resolve(import.meta.dirname, '../../simulators/baneco');
    const files = fs.readdirSync(dir).filter((name) => name.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    for (const name of files) {
      const text = fs.readFileSync(path.join(dir, name), 'utf8');
      const targets = [...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)].map((match) => match[1] ?? match[2]!);
      for (const target of targets) expect(target.startsWith('./') || !target.startsWith('.'), `${name} imports ${target}`).toBe(true);
    }
  });
});
