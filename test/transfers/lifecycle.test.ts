import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ledger from '../../src/ledger/service.ts';
import { createAppContext } from '../../src/composition.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { balanceOf, fundedMerchant, postTransfer, transferBody, type Merchant } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

const closedAccount = { type: 'bank_account', bank_code: 1003, account_number: '4010-2233-0000', account_titular: 'Cuenta Cerrada' };

describe.each(databaseKinds())('transfer lifecycle on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes], env: { SANDBOX_SETTLEMENT: '10s,20s' } });
  });
  afterAll(() => t.close());

  const create = async (merchant: Merchant, overrides: Record<string, unknown> = {}) => {
    const response = await postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: '40.00', ...overrides }));
    expect(response.status).toBe(201);
    return response.body;
  };
  const read = async (merchant: Merchant, id: number) => (await t.request('GET', `/api/v2/transfers/${id}`, { apiKey: merchant.apiKey })).body;
  const advance = (merchant: Merchant, id: number, body: unknown) =>
    t.request('POST', `/api/v2/sandbox/transfers/${id}/advance`, { apiKey: merchant.apiKey, body });
  const eventTypesOf = async (merchant: Merchant, id: number) =>
    (await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode }))
      .filter((event) => event.data.id === id).map((event) => event.type).reverse();
  const movementStatus = async (movementId: number) =>
    (await t.db.query<{ status: string }>('select status from movement_history where id = $1::bigint', [movementId])).rows[0]!.status;
  const sandboxRail = () => backgroundJobs(t.context).find((job) => job.name === 'transfers-sandbox-rail')!;

  describe('cancel', () => {
    it('cancels a PENDING transfer: CANCELED, funds back, movement CANCELED, transfer.canceled', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const transfer = await create(merchant);
      expect(await balanceOf(t, merchant)).toEqual({ available: 60, pending_out: 40 });
      t.clock.advance(1_000);
      const response = await t.request('POST', `/api/v2/transfers/${transfer.id}/cancel`, { apiKey: merchant.apiKey });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: transfer.id, status: 'CANCELED', failure_code: null });
      expect(response.body.updated_at).not.toBe(transfer.updated_at);
      expect(await balanceOf(t, merchant)).toEqual({ available: 100, pending_out: 0 });
      expect(await movementStatus(transfer.movement_id)).toBe('CANCELED');
      expect(await eventTypesOf(merchant, transfer.id)).toEqual(['transfer.created', 'transfer.canceled']);
    });

    it('accepts an empty body with or without Content-Type, and refuses unknown fields', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const a = await create(merchant);
      const withType = await t.request('POST', `/api/v2/transfers/${a.id}/cancel`, { apiKey: merchant.apiKey, headers: { 'content-type': 'application/json' }, rawBody: '' });
      expect(withType.status).toBe(200);
      const b = await create(merchant);
      const unknown = await t.request('POST', `/api/v2/transfers/${b.id}/cancel`, { apiKey: merchant.apiKey, body: { reason: 'x' } });
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors).toEqual([expect.objectContaining({ field: 'reason', code: 'unknown_field' })]);
    });

    it('answers 409 TRANSFER_NOT_CANCELABLE once canceled or in transit, and moves no money', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const canceled = await create(merchant);
      await t.request('POST', `/api/v2/transfers/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
      const inTransit = await create(merchant);
      await advance(merchant, inTransit.id, { to: 'IN_TRANSIT' });
      const before = await balanceOf(t, merchant);
      for (const id of [canceled.id, inTransit.id]) {
        const response = await t.request('POST', `/api/v2/transfers/${id}/cancel`, { apiKey: merchant.apiKey });
        expect(response.status).toBe(409);
        expect(response.body).toMatchObject({ type: 'business_logic_error', code: 'TRANSFER_NOT_CANCELABLE' });
      }
      expect(await balanceOf(t, merchant)).toEqual(before);
      expect((await t.request('POST', '/api/v2/transfers/987654321/cancel', { apiKey: merchant.apiKey })).status).toBe(404);
    });
  });

  describe('advance helper', () => {
    it('walks PENDING → IN_TRANSIT → COMPLETED with an event for each step; COMPLETED releases pending_out', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const transfer = await create(merchant);
      const inTransit = await advance(merchant, transfer.id, { to: 'IN_TRANSIT' });
      expect(inTransit.status).toBe(200);
      expect(inTransit.body.status).toBe('IN_TRANSIT');
      expect(await movementStatus(transfer.movement_id)).toBe('IN_TRANSIT');
      expect(await balanceOf(t, merchant)).toEqual({ available: 60, pending_out: 40 });
      const completed = await advance(merchant, transfer.id, { to: 'COMPLETED' });
      expect(completed.body.status).toBe('COMPLETED');
      expect(await balanceOf(t, merchant)).toEqual({ available: 60, pending_out: 0 });
      expect(await movementStatus(transfer.movement_id)).toBe('COMPLETED');
      expect(await eventTypesOf(merchant, transfer.id)).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.completed']);
      const history = await t.request('GET', '/api/v2/balance/movements?type=transfer', { apiKey: merchant.apiKey });
      expect(history.body.data).toEqual([expect.objectContaining({
        id: transfer.movement_id, type: 'transfer', amount: -40, status: 'COMPLETED', reference: 'Payroll Nov',
        destination: { type: 'bank_account', bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Pérez' },
      })]);
    });

    it('COMPLETED from PENDING passes through IN_TRANSIT', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const transfer = await create(merchant);
      const completed = await advance(merchant, transfer.id, { to: 'COMPLETED' });
      expect(completed.body.status).toBe('COMPLETED');
      expect(await eventTypesOf(merchant, transfer.id)).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.completed']);
    });

    it('FAILED from IN_TRANSIT returns the funds, with the failure_code given or ACCOUNT_CLOSED', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const a = await create(merchant);
      await advance(merchant, a.id, { to: 'IN_TRANSIT' });
      const failed = await advance(merchant, a.id, { to: 'FAILED', failure_code: 'INVALID_ACCOUNT' });
      expect(failed.body).toMatchObject({ status: 'FAILED', failure_code: 'INVALID_ACCOUNT' });
      const b = await create(merchant);
      const failedPending = await advance(merchant, b.id, { to: 'FAILED' });
      expect(failedPending.body).toMatchObject({ status: 'FAILED', failure_code: 'ACCOUNT_CLOSED' });
      expect(await balanceOf(t, merchant)).toEqual({ available: 100, pending_out: 0 });
      expect(await movementStatus(a.movement_id)).toBe('FAILED');
      expect(await eventTypesOf(merchant, a.id)).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.failed']);
      const failedEvent = (await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode }))
        .find((event) => event.type === 'transfer.failed' && event.data.id === a.id)!;
      expect(failedEvent.data).toEqual(failed.body);
    });

    it('an account ending in -0000 fails on submission with ACCOUNT_CLOSED and the funds return', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const transfer = await create(merchant, { destination: closedAccount });
      const response = await advance(merchant, transfer.id, { to: 'IN_TRANSIT' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: 'FAILED', failure_code: 'ACCOUNT_CLOSED' });
      expect(response.body.destination.account_number).toBe('**********0000');
      expect(await balanceOf(t, merchant)).toEqual({ available: 100, pending_out: 0 });
      expect(await eventTypesOf(merchant, transfer.id)).toEqual(['transfer.created', 'transfer.failed']);
    });

    it('refuses a step the state does not allow with 422 on `to`, and checks the body', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const transfer = await create(merchant);
      await advance(merchant, transfer.id, { to: 'COMPLETED' });
      for (const to of ['IN_TRANSIT', 'COMPLETED', 'FAILED']) {
        const response = await advance(merchant, transfer.id, { to });
        expect(response.status).toBe(422);
        expect(response.body.errors).toEqual([expect.objectContaining({ field: 'to', code: 'invalid_value' })]);
      }
      expect((await advance(merchant, transfer.id, { to: 'CANCELED' })).body.errors).toEqual([expect.objectContaining({ field: 'to', code: 'invalid_value' })]);
      expect((await advance(merchant, transfer.id, {})).body.errors).toEqual([expect.objectContaining({ field: 'to', code: 'required' })]);
      const other = await create(merchant);
      expect((await advance(merchant, other.id, { to: 'COMPLETED', failure_code: 'ACCOUNT_CLOSED' })).body.errors)
        .toEqual([expect.objectContaining({ field: 'failure_code', code: 'invalid_value' })]);
      expect((await read(merchant, other.id)).status).toBe('PENDING');
      expect(await balanceOf(t, merchant)).toEqual({ available: 20, pending_out: 40 });
    });
  });

  describe('sandbox rail worker', () => {
    it('moves transfers after the SANDBOX_SETTLEMENT delays: IN_TRANSIT after 10 s, COMPLETED 20 s later', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const job = sandboxRail();
      while (await job.runOnce()); // settle whatever earlier tests left due
      t.clock.advance(60_000);
      while (await job.runOnce());
      const transfer = await create(merchant);
      t.clock.advance(9_999);
      await job.runOnce();
      expect((await read(merchant, transfer.id)).status).toBe('PENDING');
      t.clock.advance(1);
      await job.runOnce();
      expect((await read(merchant, transfer.id)).status).toBe('IN_TRANSIT');
      t.clock.advance(19_999);
      await job.runOnce();
      expect((await read(merchant, transfer.id)).status).toBe('IN_TRANSIT');
      t.clock.advance(1);
      await job.runOnce();
      const done = await read(merchant, transfer.id);
      expect(done.status).toBe('COMPLETED');
      expect(await balanceOf(t, merchant)).toEqual({ available: 60, pending_out: 0 });
      expect(await eventTypesOf(merchant, transfer.id)).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.completed']);
    });

    it('fails -0000 accounts on submission and leaves canceled transfers alone', async () => {
      const merchant = await fundedMerchant(t, '100.00');
      const closed = await create(merchant, { destination: closedAccount });
      const canceled = await create(merchant);
      await t.request('POST', `/api/v2/transfers/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
      t.clock.advance(10_000);
      const job = sandboxRail();
      while (await job.runOnce());
      expect(await read(merchant, closed.id)).toMatchObject({ status: 'FAILED', failure_code: 'ACCOUNT_CLOSED' });
      expect((await read(merchant, canceled.id)).status).toBe('CANCELED');
      expect(await balanceOf(t, merchant)).toEqual({ available: 100, pending_out: 0 });
      expect(await eventTypesOf(merchant, canceled.id)).toEqual(['transfer.created', 'transfer.canceled']);
    });

    it('does not exist when SANDBOX_SETTLEMENT is off, and a live service never gets the sandbox rail', async () => {
      expect(backgroundJobs(createAppContext({ config: { ...t.config, sandboxSettlementMs: null }, db: t.db, clock: t.clock })).map((job) => job.name)).not.toContain('transfers-sandbox-rail');
      // config.ts refuses MODE=live on the sandbox rail; a config typed past that check is refused where the
      // rail is built (live mode's own jobs: 'transfers in live mode' below).
      expect(() => createAppContext({ config: { ...t.config, mode: 'live' }, db: t.db, clock: t.clock })).toThrow(/RAIL=sandbox cannot run with MODE=live/);
    });
  });

  it('keeps the ledger invariant through every lifecycle', async () => {
    const report = await ledger.checkLedger(t.db);
    expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
  });
});

describe.each(databaseKinds())('transfers in live mode on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startLiveApp({ kind, plugins: [fixtureRoutes], env: { SANDBOX_SETTLEMENT: '10s,20s' } });
  });
  afterAll(() => t.close());

  it('runs the bank\'s batch pay-out and no sandbox rail worker, even with SANDBOX_SETTLEMENT set', () => {
    const jobs = backgroundJobs(t.context).map((job) => job.name);
    expect(jobs).toContain('bank-batch-payout');
    expect(jobs).not.toContain('transfers-sandbox-rail');
    expect(jobs).not.toContain('refunds-sandbox-rail');
  });

  it('has no advance helper (404), while create and cancel work', async () => {
    const merchant = await fundedMerchant(t, '200.00');
    const created = await postTransfer(t, merchant, transferBody(merchant.businessCode));
    expect(created.status).toBe(201);
    const advance = await t.request('POST', `/api/v2/sandbox/transfers/${created.body.id}/advance`, { apiKey: merchant.apiKey, body: { to: 'COMPLETED' } });
    expect(advance.status).toBe(404);
    const canceled = await t.request('POST', `/api/v2/transfers/${created.body.id}/cancel`, { apiKey: merchant.apiKey });
    expect(canceled.body.status).toBe('CANCELED');
  });
});
