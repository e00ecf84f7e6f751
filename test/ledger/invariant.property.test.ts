// Property: for any sequence of QR payments, transfers (alone or several at once), rail outcomes, cancels,
// refunds (partial, repeated, failed), late payments and price plan changes, driven through the HTTP API,
// the balance is what an independent model of docs/api-reference.md#transfer-lifecycle, #refunds,
// #balance-invariant and docs/fees.md says after every step, never negative — each fee the exact rational
// rounded half up, computed here another way; the merchant's journal (its revenue account included) sums to
// the model after every step; and the operator's ledger check finds nothing wrong at the end.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { centavos, formatCentavos } from '../../src/money.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';

type Operation =
  | { kind: 'pay'; centavos: number; closedPayer: boolean }
  | { kind: 'refund'; pick: number; centavos: number | null }
  | { kind: 'advanceRefund'; pick: number; to: 'COMPLETED' | 'FAILED' }
  | { kind: 'late'; centavos: number }
  | { kind: 'transfer'; centavos: number; closedAccount: boolean }
  | { kind: 'burst'; amounts: number[] }
  | { kind: 'advance'; pick: number; to: 'IN_TRANSIT' | 'COMPLETED' | 'FAILED' }
  | { kind: 'cancel'; pick: number }
  | { kind: 'plan'; basisPoints: number; qrFixed: number; transferFixed: number };

interface ModelPlan { basisPoints: number; qrFixed: number; transferFixed: number }

/** docs/fees.md: the percentage rounded half up (from quotient and remainder), plus the fixed part, capped at the amount. */
function modelFee(plan: ModelPlan, amount: number): number {
  const numerator = BigInt(amount) * BigInt(plan.basisPoints);
  const quotient = numerator / 10_000n;
  const rounded = Number((numerator % 10_000n) * 2n >= 10_000n ? quotient + 1n : quotient);
  return Math.min(rounded + plan.qrFixed, amount);
}

type TransferStatus = 'PENDING' | 'IN_TRANSIT' | 'COMPLETED' | 'FAILED' | 'CANCELED';
interface ModelTransfer { id: number; centavos: number; fee: number; closedAccount: boolean; status: TransferStatus }
interface ModelPayment { id: number; qrId: string; centavos: number; closedPayer: boolean; refunded: number }
interface ModelRefund { id: string; payment: ModelPayment; centavos: number; status: 'PENDING' | 'COMPLETED' | 'FAILED' }

const OPEN_PAYER = { account_number: '10000123454321' };
const CLOSED_PAYER = { account_number: '40102233990000' }; // the sandbox rail fails refunds to it

// Weighted so that refunds often meet a payment they can refund, and sometimes one already refunded.
const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('pay' as const), centavos: fc.integer({ min: 10, max: 50_000 }), closedPayer: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat({ max: 3 }), centavos: fc.option(fc.integer({ min: 10, max: 30_000 })) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advanceRefund' as const), pick: fc.nat({ max: 3 }), to: fc.constantFrom('COMPLETED' as const, 'FAILED' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('late' as const), centavos: fc.integer({ min: 10, max: 20_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('transfer' as const), centavos: fc.integer({ min: 10, max: 40_000 }), closedAccount: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('burst' as const), amounts: fc.array(fc.integer({ min: 10, max: 30_000 }), { minLength: 2, maxLength: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), pick: fc.nat(), to: fc.constantFrom('IN_TRANSIT' as const, 'COMPLETED' as const, 'FAILED' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({
    kind: fc.constant('plan' as const), basisPoints: fc.integer({ min: 0, max: 1000 }),
    qrFixed: fc.integer({ min: 0, max: 10_000 }), transferFixed: fc.integer({ min: 0, max: 10_000 }),
  }) },
);

/** What docs/api-reference.md#sandbox-transfer-helper says an advance of a transfer in `status` ends in; null: refused. */
function advancedStatus(transfer: ModelTransfer, to: 'IN_TRANSIT' | 'COMPLETED' | 'FAILED'): TransferStatus | null {
  const open = transfer.status === 'PENDING' || transfer.status === 'IN_TRANSIT';
  if (!open) return null;
  if (to === 'FAILED') return 'FAILED';
  if (to === 'IN_TRANSIT' && transfer.status !== 'PENDING') return null;
  // Submitting to the rail (PENDING → IN_TRANSIT) fails an account ending in -0000.
  if (transfer.status === 'PENDING' && transfer.closedAccount) return 'FAILED';
  return to;
}

describe.each(databaseKinds())('the ledger invariant on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t.close());

  async function run(operations: Operation[]): Promise<void> {
    const merchant = await t.createMerchant({ ach_enabled: true });
    const key = { apiKey: merchant.apiKey };
    // What payments added to available: their amounts less their fees.
    let collected = 0;
    let paymentFees = 0;
    let plan: ModelPlan = { basisPoints: 0, qrFixed: 0, transferFixed: 0 };
    const transfers: ModelTransfer[] = [];
    const payments: ModelPayment[] = [];
    const refunds: ModelRefund[] = [];
    const refunded = () => refunds.filter((r) => r.status !== 'FAILED').reduce((sum, r) => sum + r.centavos, 0);
    const live = () => transfers.filter((x) => x.status !== 'FAILED' && x.status !== 'CANCELED');
    const reserved = () => live().reduce((sum, x) => sum + x.centavos + x.fee, 0) + refunded();
    /** The payment's amount_refunded, as the API shows it, is the model's. */
    const expectRefunded = async (payment: ModelPayment) => {
      const listed = await t.request('GET', `/api/v2/simple-qrs/${payment.qrId}/payments`, key);
      const shown = listed.body.data.find((p: { id: number }) => p.id === payment.id);
      expect(Math.round(shown.amount_refunded * 100)).toBe(payment.refunded);
    };
    const createQr = async (amount: number) => {
      const qr = await t.request('POST', '/api/v2/simple-qrs', { ...key, body: { business_code: merchant.businessCode, amount: formatCentavos(centavos(amount)) } });
      expect(qr.status).toBe(201);
      return qr.body.id as string;
    };
    const pendingOut = () => transfers.filter((x) => x.status === 'PENDING' || x.status === 'IN_TRANSIT').reduce((sum, x) => sum + x.centavos, 0);

    for (const op of operations) {
      if (op.kind === 'plan') {
        const pricing = { qr_percent: op.basisPoints / 100, qr_fixed: op.qrFixed / 100, transfer_fixed: op.transferFixed / 100 };
        const response = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { pricing } });
        expect(response.status).toBe(200);
        plan = { basisPoints: op.basisPoints, qrFixed: op.qrFixed, transferFixed: op.transferFixed };
      } else if (op.kind === 'pay') {
        const qrId = await createQr(op.centavos);
        const payment = await t.request('POST', `/api/v2/sandbox/simple-qrs/${qrId}/payments`, { ...key, body: op.closedPayer ? CLOSED_PAYER : OPEN_PAYER });
        expect(payment.status).toBe(201);
        const fee = modelFee(plan, op.centavos);
        expect(Math.round(payment.body.fee * 100)).toBe(fee);
        collected += op.centavos - fee;
        paymentFees += fee;
        payments.push({ id: payment.body.id, qrId, centavos: op.centavos, closedPayer: op.closedPayer, refunded: 0 });
      } else if (op.kind === 'late') {
        // Money for a QR that was canceled: recorded, and refunded in full at once.
        const qrId = await createQr(op.centavos);
        expect((await t.request('POST', `/api/v2/simple-qrs/${qrId}/cancel`, key)).status).toBe(200);
        const response = await t.request('POST', `/api/v2/sandbox/simple-qrs/${qrId}/late-payments`, { ...key, body: OPEN_PAYER });
        expect(response.status).toBe(201);
        expect(response.body.refund).toMatchObject({ status: 'PENDING', reason: 'qr_not_payable' });
        expect(response.body.fee).toBe(0); // no fee on money that goes straight back
        collected += op.centavos;
        const payment = { id: response.body.id, qrId, centavos: op.centavos, closedPayer: false, refunded: op.centavos };
        payments.push(payment);
        refunds.push({ id: response.body.refund.id, payment, centavos: op.centavos, status: 'PENDING' });
      } else if (op.kind === 'refund') {
        if (payments.length === 0) continue;
        const payment = payments[op.pick % payments.length]!;
        const left = payment.centavos - payment.refunded;
        const amount = op.centavos ?? left;
        const response = await t.request('POST', '/api/v2/refunds', {
          ...key,
          headers: { 'idempotency-key': randomUUID() },
          body: op.centavos === null ? { payment_id: payment.id } : { payment_id: payment.id, amount: formatCentavos(centavos(op.centavos)) },
        });
        if (left === 0 || amount > left) {
          expect(response.status).toBe(409);
          expect(response.body.code).toBe('REFUND_EXCEEDS_PAYMENT');
        } else if (collected - reserved() < amount) {
          expect(response.status).toBe(400);
          expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
        } else {
          expect(response.status).toBe(201);
          payment.refunded += amount;
          refunds.push({ id: response.body.id, payment, centavos: amount, status: 'PENDING' });
        }
        await expectRefunded(payment);
      } else if (op.kind === 'advanceRefund') {
        if (refunds.length === 0) continue;
        const refund = refunds[op.pick % refunds.length]!;
        const response = await t.request('POST', `/api/v2/sandbox/refunds/${refund.id}/advance`, { ...key, body: { to: op.to } });
        if (refund.status !== 'PENDING') {
          expect(response.status).toBe(422);
        } else {
          const expected = op.to === 'COMPLETED' && !refund.payment.closedPayer ? 'COMPLETED' : 'FAILED';
          expect(response.status).toBe(200);
          expect(response.body.status).toBe(expected);
          refund.status = expected;
          if (expected === 'FAILED') refund.payment.refunded -= refund.centavos;
        }
        await expectRefunded(refund.payment);
      } else if (op.kind === 'transfer') {
        const response = await t.request('POST', '/api/v2/transfers', {
          ...key,
          headers: { 'idempotency-key': randomUUID() },
          body: {
            business_code: merchant.businessCode, amount: formatCentavos(centavos(op.centavos)), currency: 'BOB',
            destination: { type: 'bank_account', bank_code: 1001, account_number: op.closedAccount ? '1234-0000' : '1234-5678', account_titular: 'Ana Pérez' },
          },
        });
        if (collected - reserved() >= op.centavos + plan.transferFixed) {
          expect(response.status).toBe(201);
          expect(Math.round(response.body.fee * 100)).toBe(plan.transferFixed);
          transfers.push({ id: response.body.id, centavos: op.centavos, fee: plan.transferFixed, closedAccount: op.closedAccount, status: 'PENDING' });
        } else {
          expect(response.status).toBe(400);
          expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
        }
      } else if (op.kind === 'burst') {
        // Sent at once, so the service may write them in one batch (src/db/group-commit.ts) in an order the
        // client cannot know. Whatever the order, taking each while it fits (with its fee) means: the taken
        // ones fit together, and each refused one is more than what was left after all of them.
        const available = collected - reserved();
        const responses = await Promise.all(op.amounts.map((amount) => t.request('POST', '/api/v2/transfers', {
          ...key,
          headers: { 'idempotency-key': randomUUID() },
          body: {
            business_code: merchant.businessCode, amount: formatCentavos(centavos(amount)), currency: 'BOB',
            destination: { type: 'bank_account', bank_code: 1001, account_number: '1234-5678', account_titular: 'Ana Pérez' },
          },
        })));
        let taken = 0;
        responses.forEach((response, i) => {
          if (response.status === 201) {
            taken += op.amounts[i]! + plan.transferFixed;
            transfers.push({ id: response.body.id, centavos: op.amounts[i]!, fee: plan.transferFixed, closedAccount: false, status: 'PENDING' });
          } else {
            expect({ status: response.status, code: response.body.code }).toEqual({ status: 400, code: 'INSUFFICIENT_FUNDS' });
          }
        });
        expect(taken).toBeLessThanOrEqual(available);
        responses.forEach((response, i) => {
          if (response.status !== 201) expect(op.amounts[i]! + plan.transferFixed).toBeGreaterThan(available - taken);
        });
      } else if (transfers.length > 0) {
        const transfer = transfers[op.pick % transfers.length]!;
        if (op.kind === 'cancel') {
          const response = await t.request('POST', `/api/v2/transfers/${transfer.id}/cancel`, { ...key, body: {} });
          if (transfer.status === 'PENDING') {
            expect(response.status).toBe(200);
            transfer.status = 'CANCELED';
          } else {
            expect(response.status).toBe(409);
            expect(response.body.code).toBe('TRANSFER_NOT_CANCELABLE');
          }
        } else {
          const response = await t.request('POST', `/api/v2/sandbox/transfers/${transfer.id}/advance`, { ...key, body: { to: op.to } });
          const expected = advancedStatus(transfer, op.to);
          if (expected === null) {
            expect(response.status).toBeGreaterThanOrEqual(400);
          } else {
            expect(response.status).toBe(200);
            expect(response.body.status).toBe(expected);
            transfer.status = expected;
          }
        }
      }
      // After every step: the balance is the model's, and never negative.
      const balance = await t.request('GET', '/api/v2/balance', key);
      expect(balance.body.available).toBeGreaterThanOrEqual(0);
      expect({ available: Math.round(balance.body.available * 100), pending_out: Math.round(balance.body.pending_out * 100) })
        .toEqual({ available: collected - reserved(), pending_out: pendingOut() });
      // … and so is the journal: the merchant's postings on each account sum to it.
      const { rows } = await t.db.query<{ account: string; total: number }>(
        'select account, sum(amount_centavos)::int8 as total from journal_postings where business_code = $1::bigint group by account',
        [merchant.businessCode]);
      const journal = Object.fromEntries(rows.map((r) => [r.account, r.total]));
      expect({ available: journal.available ?? 0, pending_out: journal.pending_out ?? 0, revenue: journal.revenue ?? 0 }).toEqual({
        available: collected - reserved(), pending_out: pendingOut(), revenue: paymentFees + live().reduce((sum, x) => sum + x.fee, 0),
      });
    }

    // The history mirrors every transfer's status, and the operator's check agrees with the balances.
    const history = await t.request('GET', '/api/v2/balance/movements?type=transfer&per_page=100', key);
    expect(history.body.meta.total).toBe(transfers.length);
    const statusById = new Map(history.body.data.map((m: { id: number; status: string }) => [m.id, m.status]));
    expect([...statusById.values()].sort()).toEqual(transfers.map((x) => x.status).sort());
    const refundHistory = await t.request('GET', '/api/v2/balance/movements?type=refund&per_page=100', key);
    expect(refundHistory.body.data.map((m: { status: string }) => m.status).sort()).toEqual(refunds.map((r) => r.status).sort());
    const listed = await t.request('GET', '/api/v2/refunds?per_page=100', key);
    expect(listed.body.meta.total).toBe(refunds.length);
    const check = await t.request('GET', '/admin/v1/ledger/check');
    expect(check.body).toMatchObject({ ok: true, violations: [], problems: [] });
  }

  it('holds for any sequence of payments, transfers alone and in bursts, rail outcomes, cancels, refunds, late payments and price plans', async () => {
    await fc.assert(fc.asyncProperty(fc.array(operation, { minLength: 4, maxLength: 24 }), run), { numRuns: 25 });
  }, 240_000);
});
