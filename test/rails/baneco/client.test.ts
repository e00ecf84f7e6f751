// The bank's client against the bank simulator (simulators/baneco/, written apart from the rail from the
// same facts), used as a black box through its documented options and control API, as a bank's
// certification environment would be: request shapes the bank accepts, tokens, 401, refusals, 5xx,
// stalls, closed connections, malformed answers, and no secret in anything the client returns.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BanecoConfig } from '../../../src/config.ts';
import { FullAccountNumber } from '../../../src/masking.ts';
import type { Centavos } from '../../../src/money.ts';
import { BanecoClient, type BanecoCallRecord, type BanecoResult, type QrOrder } from '../../../src/rails/baneco/client.ts';
import { wireDateOf, type BankPayment } from '../../../src/rails/baneco/wire.ts';
import { startBanecoSimulator, type BanecoSimulator } from '../../../simulators/baneco/index.ts';

const ZONE = 'America/La_Paz';
const PASSWORD = 'Clave-Muy-Secreta-2026';
const AES_KEY = '9F8E7D6C5B4A39281706F5E4D3C2B1A0';
const ACCOUNT = '1041070563';
const CALLBACK_SECRET = 'cbsecret_'.padEnd(43, 'Z');
const BENEFICIARY = '2000-3000-4000';

let bank: BanecoSimulator;
const bankLog: string[] = [];

beforeAll(async () => {
  bank = await startBanecoSimulator({ userName: 'mps', password: PASSWORD, aesKey: AES_KEY, account: ACCOUNT, log: (line) => bankLog.push(line) });
});
afterAll(async () => {
  await bank.stop();
});
afterEach(() => {
  bank.reset();
  bankLog.length = 0;
});

function config(overrides: Partial<BanecoConfig> = {}): BanecoConfig {
  return {
    url: bank.baseUrl, user: 'mps', password: PASSWORD, aesKey: AES_KEY, account: ACCOUNT, callbackSecret: CALLBACK_SECRET,
    branchCode: null, qrDueDays: 365, pollIntervalMs: 30_000, batchIntervalMs: 60_000,
    amlSource: 'Cobros QR de comercios', amlDestination: 'Pago a comercio', timeoutMs: 5_000, ...overrides,
  };
}

function client(overrides: Partial<BanecoConfig> = {}, records: BanecoCallRecord[] = []): BanecoClient {
  return new BanecoClient({ config: config(overrides), serviceTimeZone: ZONE, onCall: (record) => records.push(record) });
}

let orders = 0;
function qrOrder(overrides: Partial<QrOrder> = {}): QrOrder {
  orders += 1;
  return {
    transactionId: `qr_test_${orders}`, amountCentavos: 15050 as Centavos, description: 'Order 42',
    dueDate: wireDateOf(new Date(Date.now() + 2 * 86_400_000), ZONE), singleUse: true, modifyAmount: false, ...overrides,
  };
}

function value<T>(result: BanecoResult<T>): T {
  if (result.outcome !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result)}`);
  return result.value;
}

const authentications = () => bankLog.filter((line) => /authenticate/i.test(line)).length;
const shapes = (records: BanecoCallRecord[]) => records.map(({ operation, outcome, httpStatus }) => `${operation}:${outcome}:${httpStatus}`);

describe('the bank client against the simulator', () => {
  it('speaks the bank\'s shapes: a QR issued, paid, read by statusQR and paidQR, seen in the account history; a batch taken', async () => {
    const baneco = client({ branchCode: '701' });
    const issued = value(await baneco.generateQr(qrOrder({ transactionId: 'qr_flow' })));
    expect(issued.qrId).toMatch(/^\d+$/);
    expect(Buffer.from(issued.qrImage, 'base64').subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

    expect(value(await baneco.statusQr(issued.qrId))).toEqual({ state: 'active', payments: [] });
    bank.pay(issued.qrId, { senderName: 'Ana Pérez' });
    const status = value(await baneco.statusQr(issued.qrId));
    expect(status.state).toBe('paid');
    const payment = status.payments[0] as BankPayment;
    expect(payment).toMatchObject({ kind: 'payment', qrId: issued.qrId, amountCentavos: 15050, senderName: 'Ana Pérez', description: 'Order 42', branchCode: '701' });
    expect(payment.senderAccount).toMatch(/^\*+\d{4}$/);
    expect(Math.abs(payment.paidAt.getTime() - Date.now())).toBeLessThan(120_000);

    const today = wireDateOf(new Date(), ZONE);
    const paid = value(await baneco.paidQr(today));
    expect(paid.payments.map((p) => p.kind === 'payment' && p.transactionId)).toContain(payment.transactionId);
    const history = value(await baneco.accountHistory(today, today));
    expect(history.currency).toBe('BOB');
    expect(history.entries.some((entry) => entry.direction === 'credit' && entry.amountCentavos === 15050)).toBe(true);

    const uploaded = value(await baneco.uploadBatch({
      batchId: 'mps-b-1',
      items: [
        { batchDetailId: 'mps-transfer-1', amountCentavos: 2500 as Centavos, accountNumber: new FullAccountNumber(BENEFICIARY), bankCode: 1016, beneficiaryName: 'Juan Pérez', note: 'Liquidación' },
        { batchDetailId: 'mps-transfer-2', amountCentavos: 1999 as Centavos, accountNumber: new FullAccountNumber('3000-4000-5000'), bankCode: 1001, beneficiaryName: 'Eva Díaz', note: '' },
      ],
    }));
    expect(uploaded.bankBatchId).toMatch(/^\d+$/);
    const batches = bank.state().batches as { batchId: string; items: { batchDetailId: string; amount: number; account: string; bankCode: string }[] }[];
    expect(batches.find((batch) => batch.batchId === 'mps-b-1')?.items).toMatchObject([
      { batchDetailId: 'mps-transfer-1', amount: 25, account: BENEFICIARY, bankCode: '1016' },
      { batchDetailId: 'mps-transfer-2', amount: 19.99, account: '3000-4000-5000', bankCode: '1001' },
    ]);

    expect(value(await baneco.cancelQr(value(await baneco.generateQr(qrOrder())).qrId))).toBeNull();
  });

  it('reads statusQR under the example\'s spelling statusQrCode too', async () => {
    const baneco = client();
    const { qrId } = value(await baneco.generateQr(qrOrder()));
    bank.setKnobs({ statusKey: 'statusQrCode' });
    expect(value(await baneco.statusQr(qrId)).state).toBe('active');
  });

  it('authenticates once for concurrent first calls (single flight)', async () => {
    const records: BanecoCallRecord[] = [];
    const baneco = client({}, records);
    const results = await Promise.all(Array.from({ length: 8 }, () => baneco.generateQr(qrOrder())));
    expect(results.map((result) => result.outcome)).toEqual(Array(8).fill('ok'));
    expect(records.filter((record) => record.operation === 'authenticate')).toHaveLength(1);
    // What the bank saw: one authentication, one live token.
    expect(authentications()).toBe(1);
    expect(bank.state().liveTokens).toBe(1);
    // Later calls reuse the token.
    await baneco.statusQr(value(results[0]!).qrId);
    expect(authentications()).toBe(1);
  });

  it('on HTTP 401 authenticates once and repeats the call once, concurrent callers included', async () => {
    const records: BanecoCallRecord[] = [];
    const baneco = client({}, records);
    const { qrId } = value(await baneco.generateQr(qrOrder()));
    bank.expireTokens();
    const single = await baneco.statusQr(qrId);
    expect(single.outcome).toBe('ok');
    expect(shapes(single.calls)).toEqual(['statusQr:unauthorized:401', 'authenticate:ok:200', 'statusQr:ok:200']);

    bank.expireTokens();
    bankLog.length = 0;
    const many = await Promise.all(Array.from({ length: 6 }, () => baneco.statusQr(qrId)));
    expect(many.map((result) => result.outcome)).toEqual(Array(6).fill('ok'));
    expect(authentications()).toBe(1);
    for (const result of many) expect(result.calls.filter((call) => call.operation === 'statusQr').length).toBeLessThanOrEqual(2);
  });

  it('reads a token refused twice as a refusal of our credentials, and a wrong password as one', async () => {
    // A bank whose clock runs an hour on at every look: every token it issued has expired when next shown.
    let clock = Date.now();
    const hasty = await startBanecoSimulator({ userName: 'mps', password: PASSWORD, aesKey: AES_KEY, account: ACCOUNT, now: () => (clock += 3_600_001) });
    try {
      const expiring = await new BanecoClient({ config: config({ url: hasty.baseUrl }), serviceTimeZone: ZONE }).statusQr('21061401016000000003');
      expect(expiring).toMatchObject({ outcome: 'refused', reason: 'credentials', httpStatus: 401 });
      expect(shapes(expiring.calls)).toEqual(['authenticate:ok:200', 'statusQr:unauthorized:401', 'authenticate:ok:200', 'statusQr:unauthorized:401']);
    } finally {
      await hasty.stop();
    }

    const wrong = await client({ password: 'not-the-password' }).generateQr(qrOrder());
    expect(wrong).toMatchObject({ outcome: 'refused', reason: 'credentials' });
    expect(wrong.outcome === 'refused' && wrong.message).toMatch(/^authentication refused: /);
  });

  it('reads the bank\'s refusals with their code and a cleaned, cut message', async () => {
    const baneco = client();
    bank.setKnobs({ faults: { generateQR: { kind: 'refuse', code: 42, message: `Monto\r\ninválido\u0007 ${'x'.repeat(400)}` } } });
    const refused = await baneco.generateQr(qrOrder());
    expect(refused).toMatchObject({ outcome: 'refused', reason: 'bank', responseCode: 42, httpStatus: 200 });
    expect(refused.outcome === 'refused' && refused.message).toMatch(/^Monto inválido x+…$/);
    expect(refused.outcome === 'refused' && refused.message.length).toBe(200);

    bank.setKnobs({ refusalHttpStatus: 400, faults: { generateQR: { kind: 'refuse', code: 7, message: 'Fondos insuficientes' } } });
    expect(await baneco.generateQr(qrOrder())).toMatchObject({ outcome: 'refused', reason: 'http', responseCode: 7, httpStatus: 400, message: 'Fondos insuficientes' });

    // The bank's own validation: a refusal, not a crash (a QR due yesterday).
    const late = await baneco.generateQr(qrOrder({ dueDate: wireDateOf(new Date(Date.now() - 3 * 86_400_000), ZONE) }));
    expect(late.outcome).toBe('refused');
  });

  it('reads HTTP 5xx, a stall, a closed connection and malformed JSON as unknown', async () => {
    const baneco = client({ timeoutMs: 400 });
    const { qrId } = value(await baneco.generateQr(qrOrder()));

    bank.setKnobs({ faults: { statusQR: { kind: 'http500' } } });
    expect(await baneco.statusQr(qrId)).toMatchObject({ outcome: 'unknown', reason: 'server_error', httpStatus: 500 });

    bank.setKnobs({ faults: { statusQR: { kind: 'stall' } } });
    const started = Date.now();
    const stalled = await baneco.statusQr(qrId);
    expect(stalled).toMatchObject({ outcome: 'unknown', reason: 'timeout', httpStatus: null, problem: 'no answer within 400 ms' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(Date.now() - started).toBeLessThan(3_000);

    bank.setKnobs({ faults: { statusQR: { kind: 'close' } } });
    expect(await baneco.statusQr(qrId)).toMatchObject({ outcome: 'unknown', reason: 'connection', httpStatus: null });

    bank.setKnobs({ faults: { statusQR: { kind: 'malformed' } } });
    expect(await baneco.statusQr(qrId)).toMatchObject({ outcome: 'unknown', reason: 'unreadable', httpStatus: 200, problem: 'not JSON' });

    // The client recovers: the faults were for one call each.
    expect((await baneco.statusQr(qrId)).outcome).toBe('ok');
  });

  it('never reads unknown as failed: an upload whose answer is lost may have been taken', async () => {
    const baneco = client({ timeoutMs: 400 });
    bank.setKnobs({ faults: { batchUpload: { kind: 'stall', processed: true } } });
    const result = await baneco.uploadBatch({
      batchId: 'mps-b-7',
      items: [{ batchDetailId: 'mps-transfer-9', amountCentavos: 1000 as Centavos, accountNumber: new FullAccountNumber(BENEFICIARY), bankCode: 1016, beneficiaryName: 'Juan', note: '' }],
    });
    expect(result).toMatchObject({ outcome: 'unknown', reason: 'timeout' });
    const batches = bank.state().batches as { batchId: string }[];
    expect(batches.map((batch) => batch.batchId)).toContain('mps-b-7');
  });

  it('reads an authentication without answer as unknown with no token: the operation was never sent', async () => {
    bank.setKnobs({ faults: { authenticate: { kind: 'http500' } } });
    const result = await client().generateQr(qrOrder());
    expect(result).toMatchObject({ outcome: 'unknown', reason: 'no_token', httpStatus: 500 });
    expect(shapes(result.calls)).toEqual(['authenticate:unknown:500']);
    expect((bank.state().qrs as unknown[]).length).toBe(0);
  });

  it('shows no secret and no full account number in any result, whatever the bank does', async () => {
    const baneco = client({ timeoutMs: 300 });
    const shown: unknown[] = [];
    const uploads: unknown[] = [];
    const secrets = [PASSWORD, AES_KEY, ACCOUNT, CALLBACK_SECRET];
    const accounts = [BENEFICIARY, BENEFICIARY.replaceAll('-', '')];
    const echo = [...secrets, ...accounts].join(' ');
    const item = { batchDetailId: 'mps-transfer-1', amountCentavos: 100 as Centavos, accountNumber: new FullAccountNumber(BENEFICIARY), bankCode: 1016, beneficiaryName: 'A', note: '' };
    for (const fault of [{ kind: 'refuse', message: echo }, { kind: 'http500' }, { kind: 'stall' }, { kind: 'close' }, { kind: 'malformed' }]) {
      bank.setKnobs({ faults: { batchUpload: fault, generateQR: fault } });
      uploads.push(await baneco.uploadBatch({ batchId: `mps-b-${uploads.length + 10}`, items: [item] }));
      shown.push(await baneco.generateQr(qrOrder()));
    }
    bank.setKnobs({ faults: { authenticate: { kind: 'refuse', message: echo } } });
    shown.push(await client().statusQr('1'));
    const text = JSON.stringify([...shown, ...uploads]);
    expect(text).toContain('[redacted]');
    for (const secret of secrets) expect(text).not.toContain(secret);
    // A beneficiary's account is scrubbed from what the call that carried it brings back.
    for (const account of accounts) expect(JSON.stringify(uploads)).not.toContain(account);
  });
});
