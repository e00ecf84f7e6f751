// The operator API of a bank's rail through HTTP, as an integrator's tooling calls it: a day reconciled with
// the bank, and a batch whose upload's answer never came resolved. Kept in test/http so the contract run
// (npm run contract) sends both through Stoplight Prism and holds their answers to the document; their
// behaviour in depth is test/bank/reconciliation.test.ts and test/bank/pay-out.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatWallClock } from '../../src/time.ts';
import { runJob, startBankedApp, type BankedApp } from '../bank/helpers.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fundedMerchant, postTransfer, transferBody } from '../transfers/helpers.ts';

describe.each(databaseKinds())('operator API of a bank rail on %s', (kind) => {
  let s: BankedApp;
  beforeAll(async () => {
    // Long enough for the reconciliation's bank calls on a loaded machine (300 ms failed one in CI as 503);
    // the batch test's stalled upload waits for it once.
    s = await startBankedApp(kind, { timeoutMs: 2000 });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('reconciles a day with the bank: 200 with the contract\'s shape', async () => {
    const today = formatWallClock(s.t.clock.now(), s.t.config.serviceTimeZone).slice(0, 10);
    const response = await s.t.request('GET', `/admin/v1/rails/reconciliation?date=${today}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ date: today, rail: 'baneco', status: 'balanced', payments: { bank: 0, ours: 0 }, transfers: { bank: 0, ours: 0 }, breaks: [] });
  });

  it('resolves a batch whose upload got no answer: 200 with the batch and its transfers', async () => {
    const merchant = await fundedMerchant(s.t, '100.00');
    const created = await postTransfer(s.t, merchant, transferBody(merchant.businessCode, { amount: 40 }));
    expect(created.status).toBe(201);
    s.bank.setKnobs({ faults: { batchUpload: { kind: 'stall' } } });
    await runJob(s.t, 'bank-batch-payout');
    s.bank.setKnobs({ faults: { batchUpload: null } });
    const batchId = `mps-b-${(await s.t.db.query<{ id: number }>('select b.id from transfer_batch_items i join transfer_batches b on b.id = i.batch_id where i.transfer_id = $1::bigint', [created.body.id])).rows[0]!.id}`;
    const resolved = await s.t.request('POST', `/admin/v1/rails/batches/${batchId}/resolve`, { body: { to: 'FAILED' } });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ id: batchId, status: 'unknown', resolution: 'FAILED', transfers: [{ id: created.body.id, status: 'FAILED' }] });
  });
});
