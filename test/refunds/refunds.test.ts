// Refunds through HTTP (docs/api-reference.md#refunds): creation with its debit and movement, partial and
// repeated refunds capped at the payment, the window, idempotency, the lifecycle through the payment rail
// (advance helper and worker), reads and filters; and late payments, refunded in full the moment they arrive.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ledger from '../../src/ledger/service.ts';
import { sandboxPayer } from '../../src/rails/sandbox/pay-in.ts';
import { receiveNotice } from '../../src/refunds/service.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startTestApp, twoInstances, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { createQr, pay, type Merchant } from '../qr/qr-helpers.ts';

const PAYER = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
const DAY_MS = 86_400_000;

/** The refund routes and the helpers every test uses, bound to one app. */
function refundRoom(app: () => TestApp) {
  const room = {
    /** A merchant whose QR of `amount` was paid: the payment object. */
    async paidPayment(amount = 100, payer: Record<string, string> = PAYER, merchant?: Merchant) {
      const owner = merchant ?? await app().createMerchant({ ach_enabled: true });
      const qr = await createQr(app(), owner, { amount });
      const paid = await pay(app(), owner, qr.id, payer);
      expect(paid.status).toBe(201);
      return { merchant: owner, qr, payment: paid.body };
    },
    refund(merchant: Merchant, body: Record<string, unknown>, key: string | null = randomUUID()) {
      return app().request('POST', '/api/v2/refunds', {
        apiKey: merchant.apiKey, body, headers: key === null ? {} : { 'idempotency-key': key },
      });
    },
    advance(merchant: Merchant, id: string, body: Record<string, unknown>) {
      return app().request('POST', `/api/v2/sandbox/refunds/${id}/advance`, { apiKey: merchant.apiKey, body });
    },
    async balance(merchant: Merchant) {
      const response = await app().request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
      return { available: response.body.available, pending_out: response.body.pending_out };
    },
    async paymentOf(merchant: Merchant, qrId: string) {
      return (await app().request('GET', `/api/v2/simple-qrs/${qrId}/payments`, { apiKey: merchant.apiKey })).body.data;
    },
    async movement(merchant: Merchant, id: number) {
      const response = await app().request('GET', '/api/v2/balance/movements?type=refund&per_page=100', { apiKey: merchant.apiKey });
      return response.body.data.find((m: { id: number }) => m.id === id);
    },
    async eventTypes(merchant: Merchant) {
      return (await eventsOfOwner(app().db, { kind: 'merchant', businessCode: merchant.businessCode })).map((e) => e.type).reverse();
    },
    async booksClose() {
      const report = await ledger.checkLedger(app().db);
      expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
    },
  };
  return room;
}

describe.each(databaseKinds())('refunds on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { SANDBOX_SETTLEMENT: '10s,10s' } });
  });
  afterAll(() => t.close());
  const room = refundRoom(() => t);

  it('refunds what is left by default: 201, debit, PENDING refund movement, amount_refunded, refund.created', async () => {
    const { merchant, qr, payment } = await room.paidPayment(100);
    const response = await room.refund(merchant, { payment_id: payment.id, description: 'Talla equivocada' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^rf_[0-9A-Za-z]{22}$/),
      payment_id: payment.id,
      qr_id: qr.id,
      business_code: merchant.businessCode,
      amount: 100,
      currency: 'BOB',
      status: 'PENDING',
      reason: 'requested_by_customer',
      description: 'Talla equivocada',
      failure_code: null,
      destination: { source_bank: 'Banco Unión', account_number: '**********4321', account_titular: 'Ana Pérez' },
      movement_id: expect.any(Number),
      resolution_note: null,
      created_at: '2026-11-22T16:00:00.000Z',
      completed_at: null,
    });
    expect(response.text).not.toContain('10000123454321');
    expect(await room.balance(merchant)).toEqual({ available: 0, pending_out: 0 });
    expect(await room.movement(merchant, response.body.movement_id)).toEqual({
      id: response.body.movement_id, type: 'refund', amount: -100, currency: 'BOB', status: 'PENDING', reference: 'Talla equivocada',
      date: '2026-11-22T16:00:00.000Z',
      details: { source_bank: 'Banco Unión', account_number: '**********4321', account_titular: 'Ana Pérez', payment_id: payment.id, refund_id: response.body.id },
      external_reference: null,
    });
    expect((await room.paymentOf(merchant, qr.id))[0]).toMatchObject({ id: payment.id, amount_refunded: 100 });
    expect(await room.eventTypes(merchant)).toContain('refund.created');
    const created = (await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode })).find((e) => e.type === 'refund.created')!;
    expect(created.data).toEqual(response.body);
    await room.booksClose();
  });

  it('refunds in parts, and refuses a part beyond what is left with 409 REFUND_EXCEEDS_PAYMENT, moving nothing', async () => {
    const { merchant, qr, payment } = await room.paidPayment(100);
    expect((await room.refund(merchant, { payment_id: payment.id, amount: 30 })).status).toBe(201);
    expect((await room.refund(merchant, { payment_id: payment.id, amount: '50.50', reason: 'duplicate' })).status).toBe(201);
    const tooMuch = await room.refund(merchant, { payment_id: payment.id, amount: 19.51 });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body).toEqual({ type: 'business_logic_error', code: 'REFUND_EXCEEDS_PAYMENT', message: expect.stringContaining('19.50 BOB left') });
    expect(await room.balance(merchant)).toEqual({ available: 19.5, pending_out: 0 });
    const rest = await room.refund(merchant, { payment_id: payment.id });
    expect(rest.body).toMatchObject({ amount: 19.5 });
    const none = await room.refund(merchant, { payment_id: payment.id, amount: 0.1 });
    expect(none.status).toBe(409);
    expect((await room.paymentOf(merchant, qr.id))[0].amount_refunded).toBe(100);
    await room.booksClose();
  });

  it('gives back any amount from 0.01 (rev 5): one centavo, then the last centavos after a partial refund; 0.00 is 422', async () => {
    const { merchant, qr, payment } = await room.paidPayment(10);
    const cent = await room.refund(merchant, { payment_id: payment.id, amount: 0.01 });
    expect(cent.status).toBe(201);
    expect(cent.body).toMatchObject({ amount: 0.01, status: 'PENDING' });
    expect((await room.refund(merchant, { payment_id: payment.id, amount: '9.94' })).status).toBe(201);
    // 0.05 is left: below the 0.10 floor of QRs and transfers, and still refundable, explicitly or by default.
    const lastCentavos = await room.refund(merchant, { payment_id: payment.id, amount: '0.04' });
    expect(lastCentavos.status).toBe(201);
    expect(lastCentavos.body).toMatchObject({ amount: 0.04 });
    expect((await room.refund(merchant, { payment_id: payment.id })).body).toMatchObject({ amount: 0.01 });
    expect((await room.paymentOf(merchant, qr.id))[0].amount_refunded).toBe(10);
    expect(await room.balance(merchant)).toEqual({ available: 0, pending_out: 0 });
    for (const zero of [0, '0.00', '0']) {
      const refused = await room.refund(merchant, { payment_id: payment.id, amount: zero });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual([{ field: 'amount', code: 'too_small', message: expect.stringContaining('0.01') }]);
    }
    expect((await room.refund(merchant, { payment_id: payment.id, amount: 0.01 })).status).toBe(409);
    await room.booksClose();
  });

  it('answers 400 INSUFFICIENT_FUNDS when the balance does not cover it, stores that outcome for the key, writes nothing', async () => {
    const { merchant, qr, payment } = await room.paidPayment(100);
    const transfer = await t.request('POST', '/api/v2/transfers', {
      apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() },
      body: { business_code: merchant.businessCode, amount: 95, currency: 'BOB', destination: { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' } },
    });
    expect(transfer.status).toBe(201);
    const key = randomUUID();
    const refused = await room.refund(merchant, { payment_id: payment.id, amount: 10 }, key);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INSUFFICIENT_FUNDS');
    const replayed = await room.refund(merchant, { payment_id: payment.id, amount: 10 }, key);
    expect(replayed.status).toBe(400);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect((await room.paymentOf(merchant, qr.id))[0].amount_refunded).toBe(0);
    expect((await t.request('GET', '/api/v2/refunds', { apiKey: merchant.apiKey })).body.meta.total).toBe(0);
    expect(await room.balance(merchant)).toEqual({ available: 5, pending_out: 95 });
    expect((await room.refund(merchant, { payment_id: payment.id, amount: 5 })).status).toBe(201);
    await room.booksClose();
  });

  it('replays a 201 for the same key and body, and refuses the key with another body or no key at all', async () => {
    const { merchant, payment } = await room.paidPayment(100);
    const key = randomUUID();
    const first = await room.refund(merchant, { payment_id: payment.id, amount: 10 }, key);
    const again = await room.refund(merchant, { amount: '10.00', payment_id: payment.id }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await room.refund(merchant, { payment_id: payment.id, amount: 11 }, key)).body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await room.refund(merchant, { payment_id: payment.id }, null)).body.code).toBe('IDEMPOTENCY_KEY_MISSING');
    expect((await room.refund(merchant, { payment_id: payment.id }, 'not-a-uuid')).body.code).toBe('IDEMPOTENCY_KEY_INVALID');
    expect(await room.balance(merchant)).toEqual({ available: 90, pending_out: 0 });
  });

  it('answers 409 REFUND_WINDOW_CLOSED for a payment older than REFUND_WINDOW (180 days)', async () => {
    const { merchant, payment } = await room.paidPayment(100);
    t.clock.advance(180 * DAY_MS - 1_000);
    expect((await room.refund(merchant, { payment_id: payment.id, amount: 1 })).status).toBe(201);
    t.clock.advance(1_000);
    const closed = await room.refund(merchant, { payment_id: payment.id, amount: 1 });
    expect(closed.status).toBe(409);
    expect(closed.body).toMatchObject({ type: 'business_logic_error', code: 'REFUND_WINDOW_CLOSED' });
    t.clock.set('2026-11-22T16:00:00.000Z');
  });

  it('answers 404 for another merchant\'s payment or an unknown one, and 422 naming each bad field', async () => {
    const { payment } = await room.paidPayment(100);
    const stranger = await t.createMerchant();
    expect((await room.refund(stranger, { payment_id: payment.id })).status).toBe(404);
    expect((await room.refund(stranger, { payment_id: 999_999_999 })).status).toBe(404);
    const bad = await room.refund(stranger, { payment_id: '1', amount: '0.00', reason: 'because', description: 'x'.repeat(141), extra: true });
    expect(bad.status).toBe(422);
    expect(Object.fromEntries(bad.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]))).toEqual({
      payment_id: 'invalid_type', amount: 'too_small', reason: 'invalid_value', description: 'too_long', extra: 'unknown_field',
    });
    expect((await room.refund(stranger, { payment_id: payment.id, reason: 'qr_not_payable' })).status).toBe(422);
  });

  describe('lifecycle', () => {
    it('advance COMPLETED pays it back: completed_at, movement COMPLETED, refund.completed; then it moves no more', async () => {
      const { merchant, payment } = await room.paidPayment(100);
      const refund = (await room.refund(merchant, { payment_id: payment.id, amount: 40 })).body;
      t.clock.advance(5_000);
      const done = await room.advance(merchant, refund.id, { to: 'COMPLETED' });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ id: refund.id, status: 'COMPLETED', completed_at: '2026-11-22T16:00:05.000Z', failure_code: null });
      expect((await room.movement(merchant, refund.movement_id)).status).toBe('COMPLETED');
      expect(await room.balance(merchant)).toEqual({ available: 60, pending_out: 0 });
      const again = await room.advance(merchant, refund.id, { to: 'FAILED' });
      expect(again.status).toBe(422);
      expect(again.body.errors).toEqual([expect.objectContaining({ field: 'to', code: 'invalid_value' })]);
      expect(await room.eventTypes(merchant)).toEqual(expect.arrayContaining(['refund.created', 'refund.completed']));
      t.clock.set('2026-11-22T16:00:00.000Z');
      await room.booksClose();
    });

    it('advance FAILED returns the funds and the refundable amount, dated when it failed; movement FAILED, refund.failed', async () => {
      const { merchant, qr, payment } = await room.paidPayment(100);
      const refund = (await room.refund(merchant, { payment_id: payment.id, amount: 40 })).body;
      const failed = await room.advance(merchant, refund.id, { to: 'FAILED', failure_code: 'INVALID_ACCOUNT' });
      expect(failed.body).toMatchObject({ status: 'FAILED', failure_code: 'INVALID_ACCOUNT', completed_at: null });
      expect(await room.balance(merchant)).toEqual({ available: 100, pending_out: 0 });
      expect((await room.paymentOf(merchant, qr.id))[0].amount_refunded).toBe(0);
      expect((await room.movement(merchant, refund.movement_id)).status).toBe('FAILED');
      expect(await room.eventTypes(merchant)).toEqual(expect.arrayContaining(['refund.created', 'refund.failed']));
      // The whole payment can be refunded again.
      expect((await room.refund(merchant, { payment_id: payment.id })).body.amount).toBe(100);
      await room.booksClose();
    });

    it('the rail fails a refund to an account ending in 0000 with ACCOUNT_CLOSED; failure_code only with FAILED', async () => {
      const { merchant, payment } = await room.paidPayment(100, { ...PAYER, account_number: '40102233990000' });
      const refund = (await room.refund(merchant, { payment_id: payment.id })).body;
      const wrong = await room.advance(merchant, refund.id, { to: 'COMPLETED', failure_code: 'ACCOUNT_CLOSED' });
      expect(wrong.status).toBe(422);
      const done = await room.advance(merchant, refund.id, { to: 'COMPLETED' });
      expect(done.body).toMatchObject({ status: 'FAILED', failure_code: 'ACCOUNT_CLOSED' });
      expect(await room.balance(merchant)).toEqual({ available: 100, pending_out: 0 });
    });

    it('the sandbox rail worker settles PENDING refunds after SANDBOX_SETTLEMENT\'s first delay', async () => {
      const { merchant, payment } = await room.paidPayment(100);
      const refund = (await room.refund(merchant, { payment_id: payment.id, amount: 25 })).body;
      const worker = backgroundJobs(t.context).find((job) => job.name === 'refunds-sandbox-rail')!;
      t.clock.advance(9_000);
      await worker.runOnce();
      expect((await t.request('GET', `/api/v2/refunds/${refund.id}`, { apiKey: merchant.apiKey })).body.status).toBe('PENDING');
      t.clock.advance(1_000);
      while (await worker.runOnce()) { /* until nothing is due */ }
      expect((await t.request('GET', `/api/v2/refunds/${refund.id}`, { apiKey: merchant.apiKey })).body).toMatchObject({ status: 'COMPLETED', completed_at: '2026-11-22T16:00:10.000Z' });
      t.clock.set('2026-11-22T16:00:00.000Z');
      await room.booksClose();
    });

    it('a refund of another merchant is not found by the advance helper or the read', async () => {
      const { merchant, payment } = await room.paidPayment(100);
      const refund = (await room.refund(merchant, { payment_id: payment.id })).body;
      const stranger = await t.createMerchant();
      expect((await room.advance(stranger, refund.id, { to: 'COMPLETED' })).status).toBe(404);
      expect((await t.request('GET', `/api/v2/refunds/${refund.id}`, { apiKey: stranger.apiKey })).status).toBe(404);
      expect((await t.request('GET', '/api/v2/refunds/rf_unknown', { apiKey: merchant.apiKey })).status).toBe(404);
    });
  });

  it('lists refunds newest first, filtered by payment and status, paginated', async () => {
    const { merchant, payment } = await room.paidPayment(100);
    const other = await room.paidPayment(50, PAYER, merchant);
    const a = (await room.refund(merchant, { payment_id: payment.id, amount: 10 })).body;
    t.clock.advance(1_000);
    const b = (await room.refund(merchant, { payment_id: other.payment.id, amount: 5 })).body;
    t.clock.advance(1_000);
    const c = (await room.refund(merchant, { payment_id: payment.id, amount: 20 })).body;
    await room.advance(merchant, c.id, { to: 'FAILED' });
    const list = async (query: string) => (await t.request('GET', `/api/v2/refunds${query}`, { apiKey: merchant.apiKey })).body;
    expect((await list('')).data.map((r: { id: string }) => r.id)).toEqual([c.id, b.id, a.id]);
    expect((await list(`?payment_id=${payment.id}`)).data.map((r: { id: string }) => r.id)).toEqual([c.id, a.id]);
    expect((await list('?status=FAILED')).data.map((r: { id: string }) => r.id)).toEqual([c.id]);
    expect(await list('?per_page=2&page=2')).toEqual({ data: [expect.objectContaining({ id: a.id })], meta: { current_page: 2, last_page: 2, per_page: 2, total: 3 } });
    const bad = await t.request('GET', '/api/v2/refunds?status=LOST&payment_id=0', { apiKey: merchant.apiKey });
    expect(bad.status).toBe(422);
    t.clock.set('2026-11-22T16:00:00.000Z');
  });

  describe('late payments', () => {
    const late = (merchant: Merchant, qrId: string, body: Record<string, unknown> = PAYER) =>
      t.request('POST', `/api/v2/sandbox/simple-qrs/${qrId}/late-payments`, { apiKey: merchant.apiKey, body });

    it.each([
      ['canceled', async (merchant: Merchant, qrId: string) => { await t.request('POST', `/api/v2/simple-qrs/${qrId}/cancel`, { apiKey: merchant.apiKey }); }],
      ['paid', async (merchant: Merchant, qrId: string) => { await pay(t, merchant, qrId, PAYER); }],
    ])('money for a %s QR is recorded and refunded in full at once: no payment_received, balance back where it was', async (_state, makeUnpayable) => {
      const merchant = await t.createMerchant();
      const qr = await createQr(t, merchant, { amount: 80 });
      await makeUnpayable(merchant, qr.id);
      const before = await room.balance(merchant);
      const eventsBefore = await room.eventTypes(merchant);
      const qrBefore = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body;

      const response = await late(merchant, qr.id);
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        qr_id: qr.id, amount: 80, amount_refunded: 80,
        payer: { account_number: '**********4321' },
        refund: { payment_id: response.body.id, amount: 80, status: 'PENDING', reason: 'qr_not_payable' },
      });
      expect(await room.balance(merchant)).toEqual(before);
      const qrAfter = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body;
      expect(qrAfter).toEqual(qrBefore);
      expect((await room.eventTypes(merchant)).slice(eventsBefore.length)).toEqual(['refund.created']);
      const payments = await room.paymentOf(merchant, qr.id);
      expect(payments.find((p: { id: number }) => p.id === response.body.id)).toMatchObject({ amount_refunded: 80 });
      await room.booksClose();
    });

    it('an expired QR, and a suspended merchant\'s QR, refund late money too', async () => {
      const merchant = await t.createMerchant();
      const expiring = await createQr(t, merchant, { amount: 10, qr_expiration: '+5m' });
      t.clock.advance(5 * 60_000);
      expect((await late(merchant, expiring.id)).body.refund).toMatchObject({ reason: 'qr_not_payable', amount: 10 });
      t.clock.set('2026-11-22T16:00:00.000Z');
      const qr = await createQr(t, merchant, { amount: 20 });
      expect((await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);
      // The merchant's keys are refused now (403 MERCHANT_SUSPENDED); the rail's notification is not a key's request.
      expect((await late(merchant, qr.id)).status).toBe(403);
      const received = await receiveNotice(t.context, sandboxPayer.toNotice({ qrId: qr.id, businessCode: null, amountCentavos: null }), t.clock.now());
      expect(received.late).toBe(true);
      expect(received.late && received.refund).toMatchObject({ reason: 'qr_not_payable', amount_centavos: 2_000, status: 'PENDING' });
      await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { status: 'active' } });
      expect(await room.balance(merchant)).toEqual({ available: 0, pending_out: 0 });
      await room.booksClose();
    });

    it('when the automatic refund fails, its funds come back to available like any failed refund; the payment stays late', async () => {
      const merchant = await t.createMerchant();
      const qr = await createQr(t, merchant, { amount: 80 });
      await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
      const response = await late(merchant, qr.id, { ...PAYER, account_number: '40102233990000' });
      expect(response.body).toMatchObject({ late: true, amount_refunded: 80 });
      const failed = await room.advance(merchant, response.body.refund.id, { to: 'COMPLETED' });
      expect(failed.body).toMatchObject({ status: 'FAILED', failure_code: 'ACCOUNT_CLOSED', reason: 'qr_not_payable' });
      expect(await room.balance(merchant)).toEqual({ available: 80, pending_out: 0 });
      const payment = (await room.paymentOf(merchant, qr.id)).find((p: { id: number }) => p.id === response.body.id);
      expect(payment).toMatchObject({ late: true, amount_refunded: 0 });
      expect((await room.eventTypes(merchant)).slice(-2)).toEqual(['refund.created', 'refund.failed']);
      // The merchant can send it back again once the payer's bank takes it.
      expect((await room.refund(merchant, { payment_id: response.body.id })).body).toMatchObject({ amount: 80, status: 'PENDING' });
      await room.booksClose();
    });

    it('a QR that can still be paid takes the money as an ordinary payment (refund: null)', async () => {
      const merchant = await t.createMerchant();
      const qr = await createQr(t, merchant, { amount: 15 });
      const response = await late(merchant, qr.id);
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ qr_id: qr.id, amount: 15, amount_refunded: 0, late: false, refund: null });
      expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.status).toBe('PAID');
      expect(await room.eventTypes(merchant)).toEqual(expect.arrayContaining(['simple_qr.payment_received', 'simple_qr.paid']));
    });

    it('keeps the payment rules: a fixed amount must match (422), an unknown QR is 404', async () => {
      const merchant = await t.createMerchant();
      const qr = await createQr(t, merchant, { amount: 15 });
      await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
      expect((await late(merchant, qr.id, { amount: 16 })).status).toBe(422);
      expect((await late(merchant, randomUUID())).status).toBe(404);
      expect(await room.balance(merchant)).toEqual({ available: 0, pending_out: 0 });
    });
  });

  it('a terminal key may report late payments but not refund (403 KEY_SCOPE_INSUFFICIENT)', async () => {
    const { merchant, payment, qr } = await room.paidPayment(100);
    const created = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/api-keys`, { body: { kind: 'terminal' } });
    const terminal = { businessCode: merchant.businessCode, apiKey: created.body.api_key as string };
    const refused = await room.refund(terminal, { payment_id: payment.id });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('KEY_SCOPE_INSUFFICIENT');
    expect((await t.request('GET', '/api/v2/refunds', { apiKey: terminal.apiKey })).status).toBe(403);
    const lateResponse = await t.request('POST', `/api/v2/sandbox/simple-qrs/${qr.id}/late-payments`, { apiKey: terminal.apiKey, body: PAYER });
    expect(lateResponse.status).toBe(201);
  });
});

describe.each(databaseKinds())('refunds in live mode on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startLiveApp({ kind });
  });
  afterAll(() => t.close());

  it('has no sandbox helpers (404), and the refund routes answer', async () => {
    const merchant = await t.createMerchant();
    expect((await t.request('POST', '/api/v2/sandbox/refunds/rf_0123456789012345678901/advance', { apiKey: merchant.apiKey, body: { to: 'COMPLETED' } })).status).toBe(404);
    expect((await t.request('POST', `/api/v2/sandbox/simple-qrs/${randomUUID()}/late-payments`, { apiKey: merchant.apiKey, body: {} })).status).toBe(404);
    expect((await t.request('GET', '/api/v2/refunds', { apiKey: merchant.apiKey })).status).toBe(200);
  });
});

describeOnPostgres('refunds under concurrency on %s', (kind) => {
  const instances = twoInstances(kind);
  const room = refundRoom(() => instances.first());

  it('20 concurrent refunds of 30.00 on a 100.00 payment, over two instances: exactly 3 go through', async () => {
    const [t, second] = [instances.first(), instances.second()];
    const { merchant, qr, payment } = await room.paidPayment(100);
    await room.paidPayment(50, PAYER, merchant); // the balance could pay for more than the payment allows
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      (i % 2 === 0 ? t : second).request('POST', '/api/v2/refunds', {
        apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() }, body: { payment_id: payment.id, amount: 30 },
      })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 409)).toBe(true);
    expect(responses.filter((r) => r.status === 409).every((r) => r.body.code === 'REFUND_EXCEEDS_PAYMENT')).toBe(true);
    expect((await room.paymentOf(merchant, qr.id))[0].amount_refunded).toBe(90);
    expect(await room.balance(merchant)).toEqual({ available: 60, pending_out: 0 });
    await room.booksClose();
  });

  it('refunds failing while new refunds of the same payment are created, over two instances: no deadlock, and the books close', async () => {
    const [t, second] = [instances.first(), instances.second()];
    const { merchant, qr, payment } = await room.paidPayment(100);
    // Five refunds of 20.00 take the whole payment; then each of them fails while a new one of 20.00 is
    // asked for — the failure (refund row → payment row → balance) and the creation (payment row →
    // balance) take their locks in one order, so neither waits on the other in a cycle.
    const first = await Promise.all(Array.from({ length: 5 }, () => room.refund(merchant, { payment_id: payment.id, amount: 20 })));
    expect(first.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const raced = await Promise.all(first.flatMap((refund, i) => [
      (i % 2 === 0 ? t : second).request('POST', `/api/v2/sandbox/refunds/${refund.body.id}/advance`, { apiKey: merchant.apiKey, body: { to: 'FAILED' } }),
      (i % 2 === 0 ? second : t).request('POST', '/api/v2/refunds', {
        apiKey: merchant.apiKey, headers: { 'idempotency-key': randomUUID() }, body: { payment_id: payment.id, amount: 20 },
      }),
    ]));
    const advances = raced.filter((_, i) => i % 2 === 0);
    const creations = raced.filter((_, i) => i % 2 === 1);
    expect(advances.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(creations.every((r) => r.status === 201 || (r.status === 409 && r.body.code === 'REFUND_EXCEEDS_PAYMENT'))).toBe(true);
    const created = creations.filter((r) => r.status === 201).length;
    expect((await room.paymentOf(merchant, qr.id))[0].amount_refunded).toBe(20 * created);
    expect(await room.balance(merchant)).toEqual({ available: 100 - 20 * created, pending_out: 0 });
    await room.booksClose();
  });
});
