// Property (issue "Balance and movements"): for any sequence of QR payments, transfers, rail outcomes and
// cancels, driven through the HTTP API, the balance is what an independent model of docs/api-reference.md#transfer-lifecycle and docs/api-reference.md#balance-invariant
// says after every step, never negative, and the operator's ledger check finds nothing wrong.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { centavos, formatCentavos } from '../../src/money.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';

type Operation =
  | { kind: 'pay'; centavos: number }
  | { kind: 'transfer'; centavos: number; closedAccount: boolean }
  | { kind: 'advance'; pick: number; to: 'IN_TRANSIT' | 'COMPLETED' | 'FAILED' }
  | { kind: 'cancel'; pick: number };

type TransferStatus = 'PENDING' | 'IN_TRANSIT' | 'COMPLETED' | 'FAILED' | 'CANCELED';
interface ModelTransfer { id: number; centavos: number; closedAccount: boolean; status: TransferStatus }

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('pay' as const), centavos: fc.integer({ min: 10, max: 50_000 }) }),
  fc.record({ kind: fc.constant('transfer' as const), centavos: fc.integer({ min: 10, max: 40_000 }), closedAccount: fc.boolean() }),
  fc.record({ kind: fc.constant('advance' as const), pick: fc.nat(), to: fc.constantFrom('IN_TRANSIT' as const, 'COMPLETED' as const, 'FAILED' as const) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
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
    let collected = 0;
    const transfers: ModelTransfer[] = [];
    const reserved = () => transfers.filter((x) => x.status !== 'FAILED' && x.status !== 'CANCELED').reduce((sum, x) => sum + x.centavos, 0);
    const pendingOut = () => transfers.filter((x) => x.status === 'PENDING' || x.status === 'IN_TRANSIT').reduce((sum, x) => sum + x.centavos, 0);

    for (const op of operations) {
      if (op.kind === 'pay') {
        const qr = await t.request('POST', '/api/v2/simple-qrs', { ...key, body: { business_code: merchant.businessCode, amount: formatCentavos(centavos(op.centavos)) } });
        expect(qr.status).toBe(201);
        const payment = await t.request('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, { ...key, body: {} });
        expect(payment.status).toBe(201);
        collected += op.centavos;
      } else if (op.kind === 'transfer') {
        const response = await t.request('POST', '/api/v2/transfers', {
          ...key,
          headers: { 'idempotency-key': randomUUID() },
          body: {
            business_code: merchant.businessCode, amount: formatCentavos(centavos(op.centavos)), currency: 'BOB',
            destination: { type: 'bank_account', bank_code: 1001, account_number: op.closedAccount ? '1234-0000' : '1234-5678', account_titular: 'Ana Pérez' },
          },
        });
        if (collected - reserved() >= op.centavos) {
          expect(response.status).toBe(201);
          transfers.push({ id: response.body.id, centavos: op.centavos, closedAccount: op.closedAccount, status: 'PENDING' });
        } else {
          expect(response.status).toBe(400);
          expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
        }
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
    }

    // The history mirrors every transfer's status, and the operator's check agrees with the balances.
    const history = await t.request('GET', '/api/v2/balance/movements?type=transfer&per_page=100', key);
    expect(history.body.meta.total).toBe(transfers.length);
    const statusById = new Map(history.body.data.map((m: { id: number; status: string }) => [m.id, m.status]));
    expect([...statusById.values()].sort()).toEqual(transfers.map((x) => x.status).sort());
    const check = await t.request('GET', '/admin/v1/ledger/check');
    expect(check.body.ok).toBe(true);
  }

  it('holds for any sequence of payments, transfers, rail outcomes and cancels', async () => {
    await fc.assert(fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 14 }), run), { numRuns: 12 });
  }, 240_000);
});
