// The operator's resolution of a refund the rail cannot pay back by itself (docs/api-reference.md#resolve-a-refund):
// POST /admin/v1/refunds/{id}/resolve moves a PENDING refund exactly as the sandbox's advance helper does,
// keeps the operator's note, and answers 409 REFUND_NOT_PENDING for one already resolved — under concurrency too.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { createQr, pay, type Merchant } from '../qr/qr-helpers.ts';

async function pendingRefund(t: TestApp, merchant: Merchant, amount = 20) {
  const qr = await createQr(t, merchant, { amount });
  const payment = await pay(t, merchant, qr.id);
  const refund = await t.request('POST', '/api/v2/refunds', { apiKey: merchant.apiKey, body: { payment_id: payment.body.id }, headers: { 'idempotency-key': randomUUID() } });
  expect(refund.body.status).toBe('PENDING');
  return refund.body as { id: string; payment_id: number };
}

const balanceOf = async (t: TestApp, merchant: Merchant) => (await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available;

describe.each(databaseKinds())('resolving refunds by hand on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind }); // SANDBOX_SETTLEMENT=off: refunds stay PENDING until someone moves them
    merchant = await t.createMerchant();
  });
  afterAll(() => t?.close());

  it('COMPLETED: keeps the note, emits refund.completed, and the merchant sees both', async () => {
    const refund = await pendingRefund(t, merchant);
    const resolved = await t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'COMPLETED', note: 'Pagado por transferencia 4471' } });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: refund.id, status: 'COMPLETED', failure_code: null, resolution_note: 'Pagado por transferencia 4471', completed_at: expect.any(String) });
    const seen = await t.request('GET', `/api/v2/refunds/${refund.id}`, { apiKey: merchant.apiKey });
    expect(seen.body).toMatchObject({ status: 'COMPLETED', resolution_note: 'Pagado por transferencia 4471' });
    const events = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(events.filter((event) => event.type === 'refund.completed').map((event) => (event.data as { id: string }).id)).toContain(refund.id);
    expect(await balanceOf(t, merchant)).toBe(0);
  });

  it('FAILED: the funds return to the balance, with the advance helper\'s default failure code; no note is fine', async () => {
    const before = await balanceOf(t, merchant);
    const refund = await pendingRefund(t, merchant, 15);
    expect(await balanceOf(t, merchant)).toBe(before);
    const resolved = await t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'FAILED' } });
    expect(resolved.body).toMatchObject({ status: 'FAILED', failure_code: 'ACCOUNT_CLOSED', resolution_note: null });
    expect(await balanceOf(t, merchant)).toBe(before + 15);
    const payment = await t.request('GET', `/api/v2/simple-qrs/${(await t.request('GET', `/api/v2/refunds/${refund.id}`, { apiKey: merchant.apiKey })).body.qr_id}/payments`, { apiKey: merchant.apiKey });
    expect(payment.body.data[0].amount_refunded).toBe(0);
    expect((await t.request('GET', '/admin/v1/ledger/check')).body.ok).toBe(true);
  });

  it('answers 409 REFUND_NOT_PENDING for a resolved refund and 404 for an unknown one, changing nothing', async () => {
    const refund = await pendingRefund(t, merchant, 5);
    await t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'COMPLETED' } });
    const before = await balanceOf(t, merchant);
    const again = await t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'FAILED', note: 'tarde' } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ type: 'business_logic_error', code: 'REFUND_NOT_PENDING', message: expect.stringContaining('COMPLETED') });
    expect(await balanceOf(t, merchant)).toBe(before);
    expect((await t.request('GET', `/api/v2/refunds/${refund.id}`, { apiKey: merchant.apiKey })).body).toMatchObject({ status: 'COMPLETED', resolution_note: null });
    const unknown = await t.request('POST', `/admin/v1/refunds/rf_${'A'.repeat(22)}/resolve`, { body: { to: 'COMPLETED' } });
    expect(unknown.status).toBe(404);
  });

  it('validates the body like every other: to, a note of at most 500 characters, no unknown field', async () => {
    const refund = await pendingRefund(t, merchant, 3);
    const bad = await t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'PAID', note: 'x'.repeat(501), extra: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]).sort()).toEqual([['extra', 'unknown_field'], ['note', 'too_long'], ['to', 'invalid_value']]);
    expect((await t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: {} })).body.errors).toEqual([expect.objectContaining({ field: 'to', code: 'required' })]);
    expect((await t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'COMPLETED' }, adminToken: null })).status).toBe(401);
    expect((await t.request('GET', `/api/v2/refunds/${refund.id}`, { apiKey: merchant.apiKey })).body.status).toBe('PENDING');
  });
});

describeOnPostgres('resolving one refund twice at once', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t?.close());

  it('resolves it once: one 200, the other 409, the funds moved once', async () => {
    const merchant = await t.createMerchant();
    const refund = await pendingRefund(t, merchant, 30);
    const answers = await Promise.all([
      t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'FAILED' } }),
      t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'FAILED' } }),
      t.request('POST', `/admin/v1/refunds/${refund.id}/resolve`, { body: { to: 'COMPLETED' } }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const final = answers.find((a) => a.status === 200)!.body.status;
    expect(await balanceOf(t, merchant)).toBe(final === 'FAILED' ? 30 : 0);
    expect((await t.request('GET', '/admin/v1/ledger/check')).body.ok).toBe(true);
  });
});
