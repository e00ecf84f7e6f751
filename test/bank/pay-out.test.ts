// The pay-out half of the Banco Económico rail (docs/rails.md, "Pay-out through a bank"; contract §14.4),
// through HTTP against the bank simulator: PENDING transfers become a batch written before its upload (IN_TRANSIT
// from then on, no longer cancelable), the bank's item callbacks complete or fail them once, a refused upload
// fails them with the bank's message and returns the funds, and an upload whose answer never came is never
// sent again — its transfers wait for the bank's callbacks or the operator's resolution.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseWallClock } from '../../src/time.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { balanceOf, fundedMerchant, postTransfer, transferBody, type Merchant } from '../transfers/helpers.ts';
import { CALLBACK_SECRET, SECRETS, eventually, runJob, startBankedApp, type BankedApp } from './helpers.ts';

type BankBatch = { bankBatchId: number; batchId: string; amount: number; items: Array<Record<string, any>> };

describe.each(databaseKinds())('Banco Económico pay-out on %s', (kind) => {
  let s: BankedApp;
  let merchant: Merchant;
  beforeAll(async () => {
    s = await startBankedApp(kind);
    merchant = await fundedMerchant(s.t, '20000.00');
  });
  afterEach(async () => {
    s.bank.setKnobs({ batchDecision: 'auto', faults: { batchUpload: null }, callbacks: { dropNext: 0, duplicate: false, contradictNext: 0 } });
    // Nothing left for the next test's batch.
    await eventually(async () => (await s.t.db.query(`select 1 from transfers where status = 'PENDING'`)).rows.length === 0 || (await runJob(s.t, 'bank-batch-payout'), false));
  });
  afterAll(async () => {
    const log = s?.logLines.join('');
    for (const secret of SECRETS) expect(log).not.toContain(secret);
    expect(log).not.toContain('20150123455678'); // a beneficiary's full account number
    await s?.close();
  });

  const transfer = async (overrides: Record<string, unknown> = {}) => {
    const response = await postTransfer(s.t, merchant, transferBody(merchant.businessCode, overrides));
    expect(response.status).toBe(201);
    return response.body as { id: number; status: string };
  };
  const read = async (id: number) => (await s.t.request('GET', `/api/v2/transfers/${id}`, { apiKey: merchant.apiKey })).body;
  const bankBatches = () => s.bank.state().batches as BankBatch[];
  const bankBatchHolding = (id: number) => bankBatches().find((batch) => batch.items.some((item) => item.batchDetailId === `mps-transfer-${id}`));
  const batchRow = async (id: number) => (await s.t.db.query<{ id: number; status: string; bank_batch_id: string | null; message: string | null }>(
    `select b.id, b.status, b.bank_batch_id, b.message from transfer_batches b join transfer_batch_items i on i.batch_id = b.id where i.transfer_id = $1::bigint`, [id])).rows[0];
  const statusCallback = (body: unknown, secret = CALLBACK_SECRET) => s.t.request('POST', `/rails/baneco/${secret}/api/notifyStatus`, { body });

  it('uploads the PENDING transfers as one batch, written first: IN_TRANSIT, no longer cancelable, every field as §14.4 says', async () => {
    const first = await transfer({ amount: 100.25, reference: 'Liquidación 1' });
    const second = await transfer({ amount: 50, reference: undefined, destination: { type: 'bank_account', bank_code: 1003, account_number: '1-2345-678', account_titular: 'María Quispe' } });
    s.bank.setKnobs({ batchDecision: 'hold' });
    expect(await runJob(s.t, 'bank-batch-payout')).toBe(false); // not a full batch
    expect((await read(first.id)).status).toBe('IN_TRANSIT');
    const cancel = await s.t.request('POST', `/api/v2/transfers/${first.id}/cancel`, { apiKey: merchant.apiKey });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('TRANSFER_NOT_CANCELABLE');

    const ours = await batchRow(first.id);
    expect(ours).toMatchObject({ status: 'uploaded' });
    const batch = bankBatchHolding(first.id)!;
    expect(batch).toMatchObject({ batchId: `mps-b-${ours!.id}`, type: 'PROVIDERS', description: 'Pagos a comercios', detailedDebit: true, currency: 'BOB', amount: 150.25 });
    expect(String(batch.bankBatchId)).toBe(ours!.bank_batch_id);
    expect(batch.items).toEqual([
      expect.objectContaining({ batchDetailId: `mps-transfer-${first.id}`, amount: 100.25, account: '20150123455678', accountTypeCode: 'CCAD', bankCode: '1014', beneficiaryName: 'Juan Pérez', note: 'Liquidación 1' }),
      expect.objectContaining({ batchDetailId: `mps-transfer-${second.id}`, amount: 50, account: '1-2345-678', bankCode: '1003', beneficiaryName: 'María Quispe', note: '' }),
    ]);
    // Each transfer went out once, in this batch only.
    expect(await runJob(s.t, 'bank-batch-payout')).toBe(false);
    expect(bankBatches().filter((each) => each.items.some((item) => item.batchDetailId === `mps-transfer-${first.id}`))).toHaveLength(1);

    s.bank.decide(batch.batchId, `mps-transfer-${first.id}`, 'ACEP');
    s.bank.decide(batch.batchId, `mps-transfer-${second.id}`, 'RECH', 'Cuenta inexistente');
    await eventually(async () => (await read(second.id)).status === 'FAILED' && (await read(first.id)).status === 'COMPLETED');
    const completed = await read(first.id);
    const decided = (s.bank.state().batches as BankBatch[]).find((each) => each.batchId === batch.batchId)!;
    expect(completed.rail_reference ?? (await s.t.db.query<{ rail_reference: string }>('select rail_reference from transfers where id = $1::bigint', [first.id])).rows[0]!.rail_reference)
      .toBe(String(decided.items[0]!.transactionIdDebit));
    expect(await read(second.id)).toMatchObject({ status: 'FAILED', failure_code: 'REJECTED_BY_BANK', failure_message: 'Cuenta inexistente' });
    expect(completed).toMatchObject({ failure_code: null, failure_message: null });
  });

  it('returns the funds of a rejected item, and emits each status once', async () => {
    const before = await balanceOf(s.t, merchant);
    const rejected = await transfer({ amount: 30, destination: { type: 'bank_account', bank_code: 1014, account_number: '55500000', account_titular: 'Cuenta Cerrada' } });
    await runJob(s.t, 'bank-batch-payout');
    await eventually(async () => (await read(rejected.id)).status === 'FAILED');
    expect(await read(rejected.id)).toMatchObject({ failure_code: 'REJECTED_BY_BANK', failure_message: 'Cuenta cerrada' });
    expect(await balanceOf(s.t, merchant)).toEqual(before);
    const types = (await eventsOfOwner(s.t.db, { kind: 'merchant', businessCode: merchant.businessCode }))
      .filter((event) => (event.data as { id?: number }).id === rejected.id).map((event) => event.type).reverse(); // oldest first
    expect(types).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.failed']);
  });

  it('fails the transfers of a refused upload with the bank\'s message, their funds back', async () => {
    const before = await balanceOf(s.t, merchant);
    s.bank.setKnobs({ faults: { batchUpload: { kind: 'refuse', code: 7, message: 'Saldo insuficiente' } } });
    const refused = await transfer({ amount: 12.5 });
    await runJob(s.t, 'bank-batch-payout');
    expect(await read(refused.id)).toMatchObject({ status: 'FAILED', failure_code: 'REJECTED_BY_BANK', failure_message: 'Saldo insuficiente' });
    expect(await batchRow(refused.id)).toMatchObject({ status: 'refused', message: 'Saldo insuficiente' });
    expect(await balanceOf(s.t, merchant)).toEqual(before);
  });

  // A bank that does not answer in time: an app whose calls give up after 200 ms, shared by these tests and
  // put back to its start before each (BankedApp.reset), rather than one app, database and bank for each.
  describe('with BANECO_TIMEOUT at 200 ms', () => {
    let quick: BankedApp;
    beforeAll(async () => {
      quick = await startBankedApp(kind, { timeoutMs: 200 });
    });
    beforeEach(() => quick.reset());
    afterAll(() => quick?.close());

    it('never sends again an upload whose answer was lost; the bank\'s callbacks settle it', async () => {
      const payer = await fundedMerchant(quick.t, '500.00');
      const response = await postTransfer(quick.t, payer, transferBody(payer.businessCode, { amount: 40 }));
      quick.bank.setKnobs({ faults: { batchUpload: { kind: 'stall', processed: true } } });
      await runJob(quick.t, 'bank-batch-payout');
      const row = (await quick.t.db.query<{ status: string; message: string }>('select status, message from transfer_batches')).rows[0]!;
      expect(row.status).toBe('unknown');
      expect(row.message).toMatch(/timeout/);
      quick.bank.setKnobs({ faults: { batchUpload: null } });
      await runJob(quick.t, 'bank-batch-payout');
      expect((quick.bank.state().batches as unknown[]).length).toBe(1); // taken once by the bank, never again by us
      await eventually(async () => (await quick.t.request('GET', `/api/v2/transfers/${response.body.id}`, { apiKey: payer.apiKey })).body.status === 'COMPLETED');
    });

    it('marks a batch whose upload outlived its longest wait unknown, and never uploads it', async () => {
      s.bank.setKnobs({ faults: { batchUpload: { kind: 'stall', processed: false } } });
      quick.bank.setKnobs({ faults: { batchUpload: { kind: 'close', times: 'always' } } });
      const payer = await fundedMerchant(quick.t, '500.00');
      await postTransfer(quick.t, payer, transferBody(payer.businessCode, { amount: 40 }));
      // A process wrote the batch and died before the upload's answer: the row stays uploading.
      await quick.t.db.query(`update transfers set status = 'IN_TRANSIT' where status = 'PENDING'`);
      await quick.t.db.query(`insert into transfer_batches (rail, status, item_count, amount_centavos, created_at, updated_at)
                              values ('baneco', 'uploading', 1, 4000, $1::timestamptz, $1::timestamptz)`, [quick.t.clock.now()]);
      await runJob(quick.t, 'bank-batch-payout');
      expect((await quick.t.db.query<{ status: string }>('select status from transfer_batches')).rows[0]!.status).toBe('uploading');
      quick.t.clock.advance(3 * 200 + 30_001);
      await runJob(quick.t, 'bank-batch-payout');
      expect((await quick.t.db.query<{ status: string }>('select status from transfer_batches')).rows[0]!.status).toBe('unknown');
      expect((quick.bank.state().batches as unknown[]).length).toBe(0);
    });

    it('lets the operator resolve an unknown batch: 200, then 409 BATCH_NOT_RESOLVABLE; 404 unknown; 422 a bad body', async () => {
      const payer = await fundedMerchant(quick.t, '500.00');
      const before = await balanceOf(quick.t, payer);
      const first = (await postTransfer(quick.t, payer, transferBody(payer.businessCode, { amount: 40 }))).body;
      const second = (await postTransfer(quick.t, payer, transferBody(payer.businessCode, { amount: 60 }))).body;
      quick.bank.setKnobs({ faults: { batchUpload: { kind: 'stall' } } });
      await runJob(quick.t, 'bank-batch-payout');
      const batchId = `mps-b-${(await quick.t.db.query<{ id: number }>('select id from transfer_batches')).rows[0]!.id}`;

      const resolved = await quick.t.request('POST', `/admin/v1/rails/batches/${batchId}/resolve`, { body: { to: 'FAILED' } });
      expect(resolved.status).toBe(200);
      expect(resolved.body).toMatchObject({ id: batchId, status: 'unknown', resolution: 'FAILED', item_count: 2, amount: 100, currency: 'BOB' });
      expect(resolved.body.transfers).toEqual([
        { id: first.id, business_code: payer.businessCode, status: 'FAILED' },
        { id: second.id, business_code: payer.businessCode, status: 'FAILED' },
      ]);
      expect(await balanceOf(quick.t, payer)).toEqual(before);
      const again = await quick.t.request('POST', `/admin/v1/rails/batches/${batchId}/resolve`, { body: { to: 'COMPLETED' } });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('BATCH_NOT_RESOLVABLE');
      expect((await quick.t.request('POST', '/admin/v1/rails/batches/mps-b-999999/resolve', { body: { to: 'FAILED' } })).status).toBe(404);
      // An id that cannot name a batch is not found, as every id in a path; a bad body is a 422.
      expect((await quick.t.request('POST', '/admin/v1/rails/batches/42/resolve', { body: { to: 'FAILED' } })).status).toBe(404);
      const malformed = await quick.t.request('POST', `/admin/v1/rails/batches/${batchId}/resolve`, { body: { to: 'LOST' } });
      expect(malformed.status).toBe(422);
      expect(malformed.body.errors.map((e: { field: string }) => e.field)).toEqual(['to']);
    });
  });

  it('applies a repeated callback once, keeps a contradicting one without changing anything, refuses one not ours', async () => {
    s.bank.setKnobs({ batchDecision: 'hold', callbacks: { duplicate: true, contradictNext: 1 } });
    const accepted = await transfer({ amount: 20 });
    await runJob(s.t, 'bank-batch-payout');
    const batch = bankBatchHolding(accepted.id)!;
    s.bank.decide(batch.batchId, `mps-transfer-${accepted.id}`, 'ACEP');
    const callbacksOfItem = () => s.bank.callbacks().filter((c) => c.kind === 'notifyStatus' && (c.body as { batchDetailId?: string }).batchDetailId === `mps-transfer-${accepted.id}`);
    // The decision and its copy, then the contradiction and its copy.
    await eventually(() => callbacksOfItem().filter((c) => c.outcome === 'answered').length === 4);
    expect(await read(accepted.id)).toMatchObject({ status: 'COMPLETED' });
    const item = (await s.t.db.query<{ outcome: string; conflicting_outcome: string | null }>('select outcome, conflicting_outcome from transfer_batch_items where transfer_id = $1::bigint', [accepted.id])).rows[0];
    expect(item).toEqual({ outcome: 'accepted', conflicting_outcome: 'rejected' });
    for (const callback of callbacksOfItem()) {
      expect(callback.answer).toEqual({ responseCode: 0, message: '' });
    }
    const types = (await eventsOfOwner(s.t.db, { kind: 'merchant', businessCode: merchant.businessCode }))
      .filter((event) => (event.data as { id?: number }).id === accepted.id).map((event) => event.type).reverse(); // oldest first
    expect(types).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.completed']);

    const body = { bankBatchId: 1, batchId: batch.batchId, batchDetailId: 'mps-transfer-999999999', status: 'ACEP', transactionIdDebit: 5, transactionIdCredit: 'x' };
    expect((await statusCallback(body)).body).toEqual({ responseCode: 1, message: 'unknown batchDetailId' });
    expect((await statusCallback({ ...body, batchDetailId: `mps-transfer-${accepted.id}`, batchId: 'mps-b-999999' })).body.responseCode).toBe(1);
    expect((await statusCallback({ ...body, status: 'MAYBE' })).body).toEqual({ responseCode: 1, message: 'unreadable notification' });
    expect((await statusCallback('[1,2')).body).toEqual({ responseCode: 1, message: 'unreadable notification' });
    const wrongSecret = await statusCallback(body, `x${CALLBACK_SECRET.slice(1)}`);
    expect(wrongSecret.status).toBe(404);
  });

  it('refuses a word on our batch and item that names another of the bank\'s batches, and takes the one naming the upload\'s', async () => {
    s.bank.setKnobs({ batchDecision: 'hold' });
    const held = await transfer({ amount: 12 });
    await runJob(s.t, 'bank-batch-payout');
    const batch = bankBatchHolding(held.id)!;
    const word = { batchId: batch.batchId, batchDetailId: `mps-transfer-${held.id}`, status: 'ACEP', transactionIdDebit: 77, transactionIdCredit: 'c-77' };
    const otherBankBatch = Number(batch.bankBatchId) + 1000;
    expect((await statusCallback({ ...word, bankBatchId: otherBankBatch })).body).toEqual({ responseCode: 1, message: 'unknown batchDetailId' });
    expect(await read(held.id)).toMatchObject({ status: 'IN_TRANSIT' });
    const item = async () => (await s.t.db.query('select outcome from transfer_batch_items where transfer_id = $1::bigint', [held.id])).rows[0];
    expect(await item()).toEqual({ outcome: null });
    expect((await statusCallback({ ...word, bankBatchId: batch.bankBatchId })).body).toEqual({ responseCode: 0, message: '' });
    expect(await read(held.id)).toMatchObject({ status: 'COMPLETED' });
    expect(await item()).toEqual({ outcome: 'accepted' });
  });

  // The callback is unsigned and the bank offers no read of an item's status: a word that comes before the
  // bank's own (forged by whoever learnt the secret path, or a stale one) decides, and the bank's word is only
  // kept as the contradiction; the account's history shows the truth to reconciliation (reconciliation.test.ts).
  it('lets a contradicting word that comes before the bank\'s decide, and keeps the bank\'s own as the contradiction', async () => {
    const before = await balanceOf(s.t, merchant);
    // The 15 came back, the 16 is gone (in centavos, so no float sum is compared).
    const afterBoth = { ...before, available: (Math.round(before.available * 100) - 1600) / 100 };
    s.bank.setKnobs({ batchDecision: 'hold' });
    const paidByBank = await transfer({ amount: 15 });
    const rejectedByBank = await transfer({ amount: 16 });
    await runJob(s.t, 'bank-batch-payout');
    const batch = bankBatchHolding(paidByBank.id)!;
    expect(bankBatchHolding(rejectedByBank.id)?.batchId).toBe(batch.batchId);
    const word = (id: number, status: 'ACEP' | 'RECH', extra: Record<string, unknown>) =>
      statusCallback({ bankBatchId: batch.bankBatchId, batchId: batch.batchId, batchDetailId: `mps-transfer-${id}`, status, ...extra });

    // First, the words the bank never said: a rejection of the one it will pay, an acceptance of the one it will not.
    expect((await word(paidByBank.id, 'RECH', { descriptionStatus: 'Cuenta inexistente', transactionIdDebit: 0, transactionIdCredit: '' })).body).toEqual({ responseCode: 0, message: '' });
    expect((await word(rejectedByBank.id, 'ACEP', { transactionIdDebit: 123456, transactionIdCredit: '654321' })).body).toEqual({ responseCode: 0, message: '' });
    expect(await read(paidByBank.id)).toMatchObject({ status: 'FAILED', failure_code: 'REJECTED_BY_BANK', failure_message: 'Cuenta inexistente' });
    expect(await read(rejectedByBank.id)).toMatchObject({ status: 'COMPLETED' });
    expect(await balanceOf(s.t, merchant)).toEqual(afterBoth);

    // Then the bank's own decisions, by its callbacks: answered 0, kept, and nothing else changes.
    s.bank.decide(batch.batchId, `mps-transfer-${paidByBank.id}`, 'ACEP');
    s.bank.decide(batch.batchId, `mps-transfer-${rejectedByBank.id}`, 'RECH', 'Cuenta cerrada');
    const bankCallbacks = () => s.bank.callbacks().filter((c) => c.kind === 'notifyStatus' && c.outcome === 'answered'
      && [paidByBank.id, rejectedByBank.id].some((id) => (c.body as { batchDetailId?: string }).batchDetailId === `mps-transfer-${id}`));
    await eventually(() => bankCallbacks().length === 2);
    for (const callback of bankCallbacks()) expect(callback.answer).toEqual({ responseCode: 0, message: '' });
    const items = (await s.t.db.query<{ transfer_id: number; outcome: string; conflicting_outcome: string; debit_reference: string | null }>(
      'select transfer_id, outcome, conflicting_outcome, debit_reference from transfer_batch_items where transfer_id = any($1::bigint[]) order by transfer_id',
      [[paidByBank.id, rejectedByBank.id]])).rows;
    expect(items).toEqual([
      { transfer_id: paidByBank.id, outcome: 'rejected', conflicting_outcome: 'accepted', debit_reference: null },
      { transfer_id: rejectedByBank.id, outcome: 'accepted', conflicting_outcome: 'rejected', debit_reference: '123456' },
    ]);
    expect(await read(paidByBank.id)).toMatchObject({ status: 'FAILED', failure_message: 'Cuenta inexistente' });
    expect(await read(rejectedByBank.id)).toMatchObject({ status: 'COMPLETED', failure_code: null, failure_message: null });
    expect(await balanceOf(s.t, merchant)).toEqual(afterBoth);
    // The bank did pay the first: its debit is in the account's history, which is what reconciliation reads.
    const history = s.bank.state().history as Array<{ transactionType: string; description: string }>;
    expect(history.filter((line) => line.transactionType === 'D' && line.description.endsWith(` mps-transfer-${paidByBank.id}`))).toHaveLength(1);
    expect(history.filter((line) => line.description.endsWith(` mps-transfer-${rejectedByBank.id}`))).toEqual([]);
    const events = await eventsOfOwner(s.t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    const typesOf = (id: number) => events.filter((event) => (event.data as { id?: number }).id === id).map((event) => event.type).reverse(); // oldest first
    expect(typesOf(paidByBank.id)).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.failed']);
    expect(typesOf(rejectedByBank.id)).toEqual(['transfer.created', 'transfer.in_transit', 'transfer.completed']);
  });

  it('never lets a cancel and a batch both take a transfer; two resolutions of one batch: one wins', async () => {
    s.bank.setKnobs({ batchDecision: 'hold' });
    const created = await Promise.all(Array.from({ length: 12 }, () => transfer({ amount: 1 })));
    const [cancels] = await Promise.all([
      Promise.all(created.map((each) => s.t.request('POST', `/api/v2/transfers/${each.id}/cancel`, { apiKey: merchant.apiKey }))),
      runJob(s.t, 'bank-batch-payout'),
    ]);
    for (const [n, each] of created.entries()) {
      const row = (await s.t.db.query<{ status: string; in_batch: boolean }>(
        `select t.status, exists (select 1 from transfer_batch_items i where i.transfer_id = t.id) as in_batch from transfers t where t.id = $1::bigint`, [each.id])).rows[0]!;
      // Canceled (200) and never in a batch, or in a batch, IN_TRANSIT, and its cancel refused (409).
      if (cancels[n]!.status === 200) expect(row).toEqual({ status: 'CANCELED', in_batch: false });
      else {
        expect(cancels[n]!.status).toBe(409);
        expect(row).toEqual({ status: 'IN_TRANSIT', in_batch: true });
      }
    }
    // A batch held at the bank (its items undecided), resolved twice at once.
    await transfer({ amount: 1 });
    await runJob(s.t, 'bank-batch-payout');
    const batch = (await s.t.db.query<{ id: number }>(`select id from transfer_batches order by id desc limit 1`)).rows[0]!;
    const batchId = `mps-b-${batch.id}`;
    const answers = await Promise.all(['COMPLETED', 'FAILED'].map((to) => s.t.request('POST', `/admin/v1/rails/batches/${batchId}/resolve`, { body: { to } })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
  });

  it('pays a scheduled payout out in the next batch like any transfer: its reference as the note, completed by the bank\'s callback', async () => {
    const payee = await fundedMerchant(s.t, '75.00');
    const zone = s.t.config.serviceTimeZone;
    const startedAt = s.t.clock.now().toISOString();
    const schedule = await s.t.request('PUT', `/admin/v1/merchants/${payee.businessCode}/payout-schedule`, {
      body: { interval: 'daily', destination: { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' } },
    });
    expect(schedule.status).toBe(200);
    const day = schedule.body.effective_from as string; // today or tomorrow, by the time of day the test runs
    try {
      s.t.clock.set(parseWallClock(`${day} 18:00:00`, zone)!.toISOString());
      expect(await runJob(s.t, 'scheduled-payouts')).toBe(false);
      const [scheduled] = (await s.t.request('GET', '/api/v2/transfers', { apiKey: payee.apiKey })).body.data;
      expect(scheduled).toMatchObject({ status: 'PENDING', amount: 75, reference: `Liquidación ${day}`, origin: 'schedule' });
      s.bank.setKnobs({ batchDecision: 'hold' });
      await runJob(s.t, 'bank-batch-payout');
      const batch = bankBatchHolding(scheduled.id)!;
      expect(batch.items).toEqual([expect.objectContaining({ batchDetailId: `mps-transfer-${scheduled.id}`, amount: 75, bankCode: '1014', note: `Liquidación ${day}` })]);
      s.bank.decide(batch.batchId, `mps-transfer-${scheduled.id}`, 'ACEP');
      await eventually(async () => (await s.t.request('GET', `/api/v2/transfers/${scheduled.id}`, { apiKey: payee.apiKey })).body.status === 'COMPLETED');
      expect(await balanceOf(s.t, payee)).toEqual({ available: 0, pending_out: 0 });
    } finally {
      s.t.clock.set(startedAt);
    }
  });
});
