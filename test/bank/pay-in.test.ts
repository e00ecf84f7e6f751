// The pay-in half of the Banco Económico rail (docs/rails.md, "Pay-in through a bank"), through HTTP against
// the bank simulator: the bank issues the QR (its image unchanged, its payload decoded), a refusal is 502
// and no answer 503 with nothing written, and a payment reaches the service by the callback (a hint,
// confirmed by a status read), the poll or the daily sweep — recorded once whichever comes first. Cancels
// and expiries are carried to the bank, foreign money is kept unmatched, and no secret reaches the log.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bankContextOf, pollRailQrs, RailPaymentNotRecordedError } from '../../src/bank/service.ts';
import { isRailCancelPending } from '../../src/rails/cancels.ts';
import { startBanecoSimulator } from '../../simulators/baneco/index.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { decodeQrImage } from '../qr/qr-helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { CALLBACK_SECRET, POLL_MS, SECRETS, eventually, refusePaymentInDatabase, runJob, startBankedApp, type BankedApp } from './helpers.ts';

type Merchant = { businessCode: number; apiKey: string };

describe.each(databaseKinds())('Banco Económico pay-in on %s', (kind) => {
  let s: BankedApp;
  let merchant: Merchant;
  beforeAll(async () => {
    s = await startBankedApp(kind);
    merchant = await s.t.createMerchant();
  });
  afterEach(() => {
    s.bank.setKnobs({ faults: { generateQR: null, statusQR: null, cancelQR: null }, callbacks: { dropNext: 0, duplicate: false } });
  });
  afterAll(async () => {
    // No secret in anything the app logged, in the whole file.
    const log = s?.logLines.join('');
    for (const secret of SECRETS) expect(log).not.toContain(secret);
    await s?.close();
  });

  const create = (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => s.t.request('POST', '/api/v2/simple-qrs', {
    apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 25, description: 'Pedido 7', ...body }, headers,
  });
  const bankQr = (qrId: string) => ((s.bank.state().qrs as Array<Record<string, any>>).find((qr) => qr.qrId === qrId));
  const qrCount = async () => Number((await s.t.db.query<{ n: string }>('select count(*) as n from simple_qrs')).rows[0]!.n);
  const paymentsOf = async (qrId: string) => (await s.t.db.query<{ rail_reference: string; late: boolean; account_number: string }>(
    'select rail_reference, late, account_number from qr_payments where qr_id = $1::uuid order by id', [qrId])).rows;
  const balance = async () => (await s.t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available as number;
  const answeredCallbacks = (qrReference: string) => s.bank.callbacks().filter((c) => c.outcome === 'answered'
    && (c.body as { payment?: { qrId?: string } }).payment?.qrId === qrReference);

  it('creates a QR the bank issues: our id as its transactionId, its image unchanged, the payload decoded', async () => {
    const response = await create({ qr_expiration: '+30m' });
    expect(response.status).toBe(201);
    const qr = response.body;
    const issued = bankQr(qr.rail_reference)!;
    expect(issued).toMatchObject({ transactionId: qr.id, amount: 25, description: 'Pedido 7', singleUse: true, modifyAmount: false });
    expect(qr).toMatchObject({ rail: 'baneco', status: 'ACTIVE' });
    expect(qr.qr_image).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
    expect(decodeQrImage(qr.qr_image)).toBe(issued.payload); // the bank's image: it draws the bank's payload
    expect(qr.qr_payload).toBe(issued.payload);
    const attempts = await s.t.db.query<{ operation: string; outcome: string }>(`select operation, outcome from rail_attempts where operation = 'generateQr'`);
    expect(attempts.rows.at(-1)).toEqual({ operation: 'generateQr', outcome: 'ok' });
  });

  it('requires an amount with a bank rail (422 amount required), calling no bank', async () => {
    const before = (s.bank.state().qrs as unknown[]).length;
    const response = await create({ amount: undefined, modify_amount: true });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual([expect.objectContaining({ field: 'amount', code: 'required' })]);
    expect((s.bank.state().qrs as unknown[]).length).toBe(before);
  });

  it('answers a refusal 502 RAIL_REFUSED with the bank\'s message, writing nothing, and the key free', async () => {
    s.bank.setKnobs({ faults: { generateQR: { kind: 'refuse', code: 99, message: 'Cuenta\u0007 bloqueada' } } });
    const before = await qrCount();
    const key = crypto.randomUUID();
    const response = await create({}, { 'Idempotency-Key': key });
    expect(response.status).toBe(502);
    expect(response.body).toMatchObject({ code: 'RAIL_REFUSED', message: 'The bank refused the request: Cuenta bloqueada' });
    expect(await qrCount()).toBe(before);
    const retried = await create({}, { 'Idempotency-Key': key });
    expect(retried.status).toBe(201);
  });

  it('answers a stalled bank 503 RAIL_UNAVAILABLE with Retry-After, writing nothing', async () => {
    const quick = await startBankedApp(kind, { timeoutMs: 300 });
    try {
      const m = await quick.t.createMerchant();
      quick.bank.setKnobs({ faults: { generateQR: { kind: 'stall' } } });
      const response = await quick.t.request('POST', '/api/v2/simple-qrs', { apiKey: m.apiKey, body: { business_code: m.businessCode, amount: 5 } });
      expect(response.status).toBe(503);
      expect(response.body.code).toBe('RAIL_UNAVAILABLE');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await quick.t.db.query('select 1 from simple_qrs')).rows).toEqual([]);
      // A warning that names the bank, not the database, which is fine.
      const turnedAway = quick.logLines.filter((line) => line.includes('request turned away'));
      expect(turnedAway).toHaveLength(1);
      expect(JSON.parse(turnedAway[0]!)).toMatchObject({ level: 40, msg: 'request turned away: the bank did not answer', status: 503 });
    } finally {
      await quick.close();
    }
  });

  it('replays a stored outcome for a repeated key without calling the bank again', async () => {
    const key = crypto.randomUUID();
    const first = await create({}, { 'Idempotency-Key': key });
    const issuedBefore = (s.bank.state().qrs as unknown[]).length;
    const second = await create({}, { 'Idempotency-Key': key });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    expect((s.bank.state().qrs as unknown[]).length).toBe(issuedBefore);
  });

  it('records a payment once from its callback (twice sent): balance credited, webhook event, the bank\'s masked account', async () => {
    const qr = (await create({ amount: 40 })).body;
    const before = await balance();
    s.bank.setKnobs({ callbacks: { duplicate: true } });
    s.bank.pay(qr.rail_reference, { senderAccount: '******1913', senderName: 'ANA PEREZ' });
    await eventually(() => answeredCallbacks(qr.rail_reference).length >= 2);
    const answers = answeredCallbacks(qr.rail_reference);
    expect(answers.every((c) => c.acknowledged && c.httpStatus === 200)).toBe(true);
    const payments = await paymentsOf(qr.id);
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ late: false, account_number: '******1913' });
    expect(await balance()).toBe(before + 40);
    const read = await s.t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ status: 'PAID', last_payment: { rail: 'baneco', payer: { account_number: '******1913', account_titular: 'ANA PEREZ' } } });
    const events = await eventsOfOwner(s.t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(events.filter((e) => e.type === 'simple_qr.payment_received' && (e.data as any).qr.id === qr.id)).toHaveLength(1);
  });

  it('recovers a dropped callback at the next poll', async () => {
    const qr = (await create({ amount: 12 })).body;
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    s.bank.pay(qr.rail_reference);
    expect(await paymentsOf(qr.id)).toEqual([]);
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    expect(await paymentsOf(qr.id)).toHaveLength(1);
  });

  it('judges expiry at the bank\'s payment time: paid before expiry, learnt of after it, is on time, with the bank\'s paid_at', async () => {
    const qr = (await create({ amount: 14, qr_expiration: '+2m' })).body;
    const paidAt = new Date(s.t.clock.now().getTime() + 60_000 - (s.t.clock.now().getTime() % 1000)); // whole seconds, as paymentTime
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    s.bank.pay(qr.rail_reference, { paidAt: paidAt.toISOString() });
    s.t.clock.advance(3 * 60_000); // the poll runs after the expiry
    await runJob(s.t, 'bank-qr-poll');
    expect(await paymentsOf(qr.id)).toEqual([expect.objectContaining({ late: false })]);
    const read = await s.t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ status: 'PAID', paid_at: paidAt.toISOString(), last_payment: { paid_at: paidAt.toISOString(), late: false } });
    expect((await s.t.request('GET', `/api/v2/refunds?payment_id=${read.body.last_payment.id}`, { apiKey: merchant.apiKey })).body.data).toEqual([]);
  });

  it('cancels at the bank a multi-use QR that took its max_payments-th payment (the bank only knows it is multi-use)', async () => {
    const qr = (await create({ amount: 6, is_multi_use: true, max_payments: 2 })).body;
    s.bank.pay(qr.rail_reference);
    s.bank.pay(qr.rail_reference);
    await eventually(async () => (await paymentsOf(qr.id)).length === 2);
    expect((await s.t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.status).toBe('PAID');
    expect(await isRailCancelPending(s.t.db, 'baneco', qr.rail_reference)).toBe(true);
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    expect(bankQr(qr.rail_reference)!.status).toBe('cancelled');
  });

  it('records a payment once when its callback, the poll and the sweep race each other', async () => {
    const qr = (await create({ amount: 31 })).body;
    const before = await balance();
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    s.bank.pay(qr.rail_reference);
    s.t.clock.advance(POLL_MS);
    const { sweepRailDay, bankContextOf } = await import('../../src/bank/service.ts');
    const callback = () => s.t.request('POST', `/rails/baneco/${CALLBACK_SECRET}/api/qrsimple/notifyPaymentQR`, { body: { payment: { qrId: qr.rail_reference } } });
    const [first, second] = await Promise.all([
      callback(), callback(), runJob(s.t, 'bank-qr-poll'),
      sweepRailDay(bankContextOf(s.t.context)!, s.bank.state().today as string),
      sweepRailDay(bankContextOf(s.t.context)!, s.bank.state().today as string),
    ]);
    expect([first.body, second.body]).toEqual([{ responseCode: 0, message: '' }, { responseCode: 0, message: '' }]);
    expect(await paymentsOf(qr.id)).toHaveLength(1);
    expect(await balance()).toBe(before + 31);
  });

  it('records the other payments of a QR when one cannot be recorded, tells the failure, and records that one at the next poll', async () => {
    const qr = (await create({ amount: 5, is_multi_use: true, max_payments: 3 })).body;
    s.bank.setKnobs({ callbacks: { dropNext: 2 } });
    const first = s.bank.pay(qr.rail_reference).transactionId as string;
    const second = s.bank.pay(qr.rail_reference).transactionId as string;
    const errors: unknown[] = [];
    const allowAgain = await refusePaymentInDatabase(s.t, first);
    try {
      s.t.clock.advance(POLL_MS);
      await pollRailQrs(bankContextOf(s.t.context)!, (error) => errors.push(error));
    } finally {
      await allowAgain();
    }
    expect((await paymentsOf(qr.id)).map((p) => p.rail_reference)).toEqual([second]);
    expect(errors).toEqual([expect.any(RailPaymentNotRecordedError)]);
    expect(errors[0]).toMatchObject({ railReference: first, message: expect.stringContaining(`bank payment ${first} could not be recorded`) });
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    expect((await paymentsOf(qr.id)).map((p) => p.rail_reference)).toEqual([second, first]);
  });

  it('answers the callback 503 when a payment of its QR cannot be recorded, recording the others; the call after records it', async () => {
    const qr = (await create({ amount: 4, is_multi_use: true, max_payments: 3 })).body;
    s.bank.setKnobs({ callbacks: { dropNext: 2 } });
    const first = s.bank.pay(qr.rail_reference).transactionId as string;
    const second = s.bank.pay(qr.rail_reference).transactionId as string;
    const callback = () => s.t.request('POST', `/rails/baneco/${CALLBACK_SECRET}/api/qrsimple/notifyPaymentQR`, { body: { payment: { qrId: qr.rail_reference } } });
    const allowAgain = await refusePaymentInDatabase(s.t, first);
    let refused;
    try {
      refused = await callback();
    } finally {
      await allowAgain();
    }
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await paymentsOf(qr.id)).map((p) => p.rail_reference)).toEqual([second]);
    expect(s.logLines.some((line) => line.includes('a payment was not recorded') && line.includes(first))).toBe(true);
    const again = await callback();
    expect([again.status, again.body]).toEqual([200, { responseCode: 0, message: '' }]);
    expect((await paymentsOf(qr.id)).map((p) => p.rail_reference)).toEqual([second, first]);
  });

  it('hears a wrong secret as an unknown path (404, no hint), and reads hostile bodies without recording anything', async () => {
    const path = (secret: string) => `/rails/baneco/${secret}/api/qrsimple/notifyPaymentQR`;
    const wrongPath = path(`${CALLBACK_SECRET.slice(0, -1)}x`);
    const wrong = await s.t.request('POST', wrongPath, { body: { payment: { qrId: '1' } } });
    const unknown = await s.t.request('POST', `${wrongPath}/else`, { body: {} });
    expect(wrong.status).toBe(404);
    expect(wrong.body).toEqual({ ...unknown.body, message: `No route POST ${wrongPath}.` });
    expect(unknown.body.message).toBe(`No route POST ${wrongPath}/else.`);
    for (const body of [{}, { payment: null }, { payment: { qrId: 'a b' } }, [1, 2], { payment: { qrId: 'x'.repeat(500) } }]) {
      const answer = await s.t.request('POST', path(CALLBACK_SECRET), { body });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ responseCode: 1 });
    }
    // With a wrong secret, no body makes the route show itself: the secret is checked before the body is read.
    for (const [rawBody, type] of [['{"payment":', 'application/json'], ['hello', 'text/plain'], ['{"__proto__":{}}', 'application/json']]) {
      const probed = await s.t.request('POST', wrongPath, { rawBody, headers: { 'content-type': type! } });
      expect([probed.status, probed.body.code], `${type} ${rawBody}`).toEqual([404, 'NOT_FOUND']);
    }
    const malformed = await s.t.request('POST', path(CALLBACK_SECRET), { rawBody: '{"payment":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    const huge = await s.t.request('POST', path(CALLBACK_SECRET), { rawBody: JSON.stringify({ payment: { qrId: '1', pad: 'x'.repeat(200_000) } }), headers: { 'content-type': 'application/json' } });
    expect(huge.status).toBe(413);
  });

  it('answers 0 to a forged callback for a qrId the bank does not know, recording nothing', async () => {
    const before = await s.t.db.query('select count(*) from qr_payments');
    const answer = await s.t.request('POST', `/rails/baneco/${CALLBACK_SECRET}/api/qrsimple/notifyPaymentQR`, { body: { payment: { qrId: '99999999999999999999' } } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ responseCode: 0, message: '' });
    expect((await s.t.db.query('select count(*) from qr_payments')).rows).toEqual(before.rows);
  });

  it('answers 503 when the bank\'s status read gets no answer, so the bank calls again; the retry records it', async () => {
    const qr = (await create({ amount: 9 })).body;
    s.bank.setKnobs({ faults: { statusQR: { kind: 'http500', times: 1 } } });
    s.bank.pay(qr.rail_reference);
    await eventually(() => s.bank.callbacks().some((c) => c.httpStatus === 503 && (c.body as any).payment?.qrId === qr.rail_reference));
    await eventually(() => answeredCallbacks(qr.rail_reference).some((c) => c.acknowledged));
    expect(await paymentsOf(qr.id)).toHaveLength(1);
  });

  it('keeps a USD payment and a payment for a QR it does not know as unmatched credits, crediting no merchant', async () => {
    const qr = (await create({ amount: 7 })).body;
    const before = await balance();
    s.bank.pay(qr.rail_reference, { currency: 'USD', force: true });
    s.bank.pay('12345678901234567890', { amount: 3 });
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    const day = (s.bank.state().today as string);
    const { sweepRailDay, bankContextOf } = await import('../../src/bank/service.ts');
    const outcome = await sweepRailDay(bankContextOf(s.t.context)!, day);
    expect(outcome.outcome).toBe('swept');
    const unmatched = await s.t.db.query<{ qr_reference: string; currency: string | null }>('select qr_reference, currency from bank_unmatched_credits order by id');
    expect(unmatched.rows).toEqual(expect.arrayContaining([
      expect.objectContaining({ qr_reference: qr.rail_reference, currency: 'USD' }),
      expect.objectContaining({ qr_reference: '12345678901234567890' }),
    ]));
    expect(await paymentsOf(qr.id)).toEqual([]);
    expect(await balance()).toBe(before);
  });

  it('records a payment on a cancelled QR as late and refunds it in full', async () => {
    const qr = (await create({ amount: 11 })).body;
    const canceled = await s.t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey, body: {} });
    expect(canceled.status).toBe(200);
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    s.bank.pay(qr.rail_reference, { force: true }); // the bank took it before it heard of the cancel
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    const payments = await paymentsOf(qr.id);
    expect(payments).toEqual([expect.objectContaining({ late: true })]);
    const refunds = await s.t.db.query<{ amount: number; reason: string }>('select amount_centavos::float8 as amount, reason from refunds where qr_id = $1::uuid', [qr.id]);
    expect(refunds.rows).toEqual([{ amount: 1100, reason: 'qr_not_payable' }]);
    const read = await s.t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body.status).toBe('CANCELED');
  });

  it('records a bank payment that breaks the amount rules as late and refunds it, leaving the QR ACTIVE', async () => {
    const qr = (await create({ amount: 10 })).body;
    s.bank.pay(qr.rail_reference, { amount: 10.5, force: true });
    await eventually(() => answeredCallbacks(qr.rail_reference).some((c) => c.acknowledged));
    expect(await paymentsOf(qr.id)).toEqual([expect.objectContaining({ late: true })]);
    const read = await s.t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ status: 'ACTIVE', payments_count: 0 });
  });

  it('carries a cancel to the bank, repeating it until the bank answers', async () => {
    const qr = (await create({ amount: 6 })).body;
    s.bank.setKnobs({ faults: { cancelQR: { kind: 'stall', times: 1 } } });
    const quickCancel = await s.t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey, body: {} });
    expect(quickCancel.status).toBe(200); // answered at once, before the bank hears of it
    expect(bankQr(qr.rail_reference)!.status).toBe('active');
    s.bank.setKnobs({ faults: { cancelQR: { kind: 'http500', times: 1 } } });
    await runJob(s.t, 'bank-qr-poll');
    expect(await isRailCancelPending(s.t.db, 'baneco', qr.rail_reference)).toBe(true);
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    expect(bankQr(qr.rail_reference)!.status).toBe('cancelled');
    expect(await isRailCancelPending(s.t.db, 'baneco', qr.rail_reference)).toBe(false);
  });

  it('cancels a QR at the bank at the first poll after its expiry', async () => {
    const qr = (await create({ amount: 8, qr_expiration: '+2m' })).body;
    s.t.clock.advance(3 * 60_000);
    await runJob(s.t, 'bank-qr-poll');
    expect(bankQr(qr.rail_reference)!.status).toBe('cancelled');
  });
});

describe('the bank simulator as used here', () => {
  it('is a black box started on its own (no protocol code of it in src/)', async () => {
    const bank = await startBanecoSimulator({});
    expect(bank.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ApiGateway\/$/);
    await bank.stop();
  });
});
