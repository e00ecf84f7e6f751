// Reconciliation of a bank rail's day (contract §14.5; docs/rails.md, "Reconciliation"), through HTTP against
// the bank simulator on both databases: GET /admin/v1/rails/reconciliation compares the journal with the
// bank's paidQR list and account history, and each kind of break is produced the way it would happen —
// callbacks lost, a payment for a QR the bank never issued, money in USD, a callback forged on the unsigned
// route, another system paying out of the same account, an upload whose answer never came, contradicting
// callbacks, an operator's resolution the bank later contradicts. Two records no channel of the service can
// write (a payment the bank never listed, an amount that differs from the bank's) are forged with SQL, as a
// tampered or corrupted row would be. Then the daily job, /metrics and the errors; `mps rails reconcile` runs
// as a process in cli-rails.test.ts.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BanecoConfig } from '../../src/config.ts';
import { FullAccountNumber } from '../../src/masking.ts';
import type { Centavos } from '../../src/money.ts';
import { BanecoClient } from '../../src/rails/baneco/client.ts';
import { formatWallClock, parseWallClock } from '../../src/time.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fundedMerchant, postTransfer, transferBody, type Merchant } from '../transfers/helpers.ts';
import { CALLBACK_SECRET, POLL_MS, SECRETS, eventually, runJob, startBankedApp, type BankedApp } from './helpers.ts';

const ZONE = 'America/La_Paz';
const DAY_MS = 86_400_000;
type BankBatch = { bankBatchId: number; batchId: string; items: Array<{ batchDetailId: string; status: string; transactionIdDebit?: number }> };
type HistoryLine = { transactionId: number; transactionType: 'C' | 'D'; amount: number };

const dayOf = (instant: Date) => formatWallClock(instant, ZONE).slice(0, 10);

describe.each(databaseKinds())('reconciliation with Banco Económico on %s', (kind) => {
  let s: BankedApp;
  let merchant: Merchant;
  let today: string;
  // Each test reconciles "today" at the bank (the simulator keeps real time), so each needs a fresh bank and
  // database: one app for the file, put back to its start before each test (BankedApp.reset), rather than
  // an app, a database and a bank started for each.
  beforeAll(async () => {
    s = await startBankedApp(kind);
  });
  beforeEach(async () => {
    await s.reset();
    merchant = await fundedMerchant(s.t, '5000.00');
    today = dayOf(s.t.clock.now());
  });
  afterEach(() => {
    const log = s?.logLines.join('');
    for (const secret of SECRETS) expect(log).not.toContain(secret);
  });
  afterAll(() => s?.close());

  const reconcile = (date: string, t: TestApp = s.t) => t.request('GET', `/admin/v1/rails/reconciliation?date=${encodeURIComponent(date)}`);
  const createQr = async (amount: number) => {
    const response = await s.t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount } });
    expect(response.status, response.text).toBe(201);
    return response.body as { id: string; rail_reference: string };
  };
  const recorded = async (transactionId: string) => (await s.t.db.query('select 1 from qr_payments where rail_reference = $1::text', [transactionId])).rows.length > 0;
  /** A QR paid at the bank, and recorded through its callback. */
  const paidQr = async (amount: number) => {
    const qr = await createQr(amount);
    const payment = s.bank.pay(qr.rail_reference) as { transactionId: string };
    await eventually(() => recorded(payment.transactionId));
    return { qr, transactionId: payment.transactionId };
  };
  const transfer = async (amount: number) => {
    const response = await postTransfer(s.t, merchant, transferBody(merchant.businessCode, { amount }));
    expect(response.status, response.text).toBe(201);
    return response.body as { id: number };
  };
  const transferStatus = async (id: number) => (await s.t.request('GET', `/api/v2/transfers/${id}`, { apiKey: merchant.apiKey })).body.status as string;
  /** A transfer paid out in a batch of its own and accepted by the bank (its debit in the history). */
  const paidOut = async (amount: number) => {
    const sent = await transfer(amount);
    await runJob(s.t, 'bank-batch-payout');
    await eventually(async () => (await transferStatus(sent.id)) === 'COMPLETED');
    return sent;
  };
  const bankBatches = () => s.bank.state().batches as BankBatch[];
  const history = () => s.bank.state().history as HistoryLine[];
  const batchKeyOf = async (transferId: number) => `mps-b-${(await s.t.db.query<{ batch_id: number }>('select batch_id from transfer_batch_items where transfer_id = $1::bigint', [transferId])).rows[0]!.batch_id}`;

  it('balances a day whose payments and transfers the bank and the journal agree on; the run is stored, the calls logged', async () => {
    await paidQr(25);
    await paidQr(12.5);
    await paidOut(40);
    const response = await reconcile(today);
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      date: today, rail: 'baneco', status: 'balanced',
      payments: { bank: 2, ours: 2 }, transfers: { bank: 1, ours: 1 }, breaks: [],
    });
    const runs = await s.t.db.query('select business_date::text as date, origin, status, payments_bank, transfers_ours, break_counts, breaks from rail_reconciliations');
    expect(runs.rows).toEqual([{ date: today, origin: 'operator', status: 'balanced', payments_bank: 2, transfers_ours: 1, break_counts: {}, breaks: [] }]);
    const attempts = await s.t.db.query<{ operation: string; outcome: string }>(`select operation, outcome from rail_attempts where operation in ('paidQr', 'accountHistory') order by id`);
    expect(attempts.rows.map((row) => `${row.operation}:${row.outcome}`).sort()).toEqual(['accountHistory:ok', 'paidQr:ok']);
  });

  it("counts a payment on the day of the bank's paid_at, whenever it was recorded", async () => {
    // A QR issued yesterday, paid yesterday evening; its callback lost, the poll records it today.
    const yesterday = parseWallClock(`${dayOf(new Date(s.t.clock.now().getTime() - DAY_MS))} 09:00:00`, ZONE)!;
    const now = s.t.clock.now().toISOString();
    s.t.clock.set(yesterday.toISOString());
    const qr = await createQr(18);
    s.t.clock.set(now);
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    const paidAt = parseWallClock(`${dayOf(yesterday)} 21:15:00`, ZONE)!;
    const payment = s.bank.pay(qr.rail_reference, { paidAt: paidAt.toISOString() }) as { transactionId: string };
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    expect(await recorded(payment.transactionId)).toBe(true);

    expect((await reconcile(dayOf(yesterday))).body).toMatchObject({ status: 'balanced', payments: { bank: 1, ours: 1 }, breaks: [] });
    expect((await reconcile(today)).body).toMatchObject({ status: 'balanced', payments: { bank: 0, ours: 0 }, breaks: [] });
  });

  it('missing_payment: the bank lists a payment the service never recorded (its callback lost, no poll yet); the poll mends it', async () => {
    const qr = await createQr(30);
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    const payment = s.bank.pay(qr.rail_reference) as { transactionId: string };
    const response = await reconcile(today);
    expect(response.body).toEqual({
      date: today, rail: 'baneco', status: 'breaks',
      payments: { bank: 1, ours: 0 }, transfers: { bank: 0, ours: 0 },
      breaks: [{ kind: 'missing_payment', reference: payment.transactionId, ours: null, bank: 30 }],
    });
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    expect((await reconcile(today)).body).toMatchObject({ status: 'balanced', payments: { bank: 1, ours: 1 }, breaks: [] });
  });

  it('unexpected_payment: a bank payment the service holds that the bank does not list (a forged row)', async () => {
    const { transactionId } = await paidQr(15);
    // Forged: a copy of a real payment under a bank id the bank never gave (late, so the single-use index lets
    // it in), written behind the service's back with triggers off — its movement is the real payment's, which
    // movement_states (migration 025) would otherwise refuse to record twice.
    await s.t.db.transaction(async (tx) => {
      await tx.query('set local session_replication_role = replica');
      await tx.query(
        `insert into qr_payments (qr_id, business_code, single_use, amount_centavos, source_bank, account_number, account_titular,
           movement_id, paid_at, late, rail, rail_reference)
         select qr_id, business_code, single_use, 777, source_bank, account_number, account_titular, movement_id, paid_at, true, rail, '4242'
           from qr_payments where rail_reference = $1::text`, [transactionId]);
    });
    expect((await reconcile(today)).body).toMatchObject({
      status: 'breaks', payments: { bank: 1, ours: 2 },
      breaks: [{ kind: 'unexpected_payment', reference: '4242', ours: 7.77, bank: null }],
    });
  });

  it('amount_mismatch: the service holds a bank payment with another amount than the bank lists (a corrupted row)', async () => {
    const { transactionId } = await paidQr(20);
    await s.t.db.query('update qr_payments set amount_centavos = 2100 where rail_reference = $1::text', [transactionId]);
    expect((await reconcile(today)).body).toMatchObject({
      status: 'breaks', payments: { bank: 1, ours: 1 },
      breaks: [{ kind: 'amount_mismatch', reference: transactionId, ours: 21, bank: 20 }],
    });
  });

  it("matches a listed payment the journal dates on another day (a corrupted paid_at): no break on the bank's day, unexpected on the other", async () => {
    const { transactionId } = await paidQr(16);
    const elsewhere = parseWallClock(`${dayOf(new Date(s.t.clock.now().getTime() - 2 * DAY_MS))} 12:00:00`, ZONE)!;
    await s.t.db.query('update qr_payments set paid_at = $2::timestamptz where rail_reference = $1::text', [transactionId, elsewhere]);
    expect((await reconcile(today)).body).toMatchObject({ status: 'balanced', payments: { bank: 1, ours: 0 }, breaks: [] });
    expect((await reconcile(dayOf(elsewhere))).body).toMatchObject({
      status: 'breaks', payments: { bank: 0, ours: 1 },
      breaks: [{ kind: 'unexpected_payment', reference: transactionId, ours: 16, bank: null }],
    });
  });

  it('unmatched_credit: a payment for a qrId the bank never issued for us, and one in USD on a QR of ours', async () => {
    const stranger = s.bank.pay('99999999999999999999', { amount: 10 }) as { transactionId: string };
    const qr = await createQr(5);
    const dollars = s.bank.pay(qr.rail_reference, { currency: 'USD' }) as { transactionId: string };
    // The callbacks came and recorded nothing: the first names a QR the bank does not know, the second is not BOB.
    await eventually(() => s.bank.callbacks().filter((c) => c.kind === 'notifyPaymentQR' && c.outcome === 'answered').length === 2);
    const response = await reconcile(today);
    expect(response.body).toEqual({
      date: today, rail: 'baneco', status: 'breaks',
      payments: { bank: 2, ours: 0 }, transfers: { bank: 0, ours: 0 },
      breaks: [
        // by reference: the bank's numbers grow, so the first payment's is the smaller
        { kind: 'unmatched_credit', reference: stranger.transactionId, ours: null, bank: 10 },
        { kind: 'unmatched_credit', reference: dollars.transactionId, ours: null, bank: null }, // not in BOB: no amount in BOB
      ],
    });
  });

  it('missing_debit: a transfer completed by an ACEP callback (forged on the unsigned route) whose debit the account never booked', async () => {
    s.bank.setKnobs({ batchDecision: 'hold' });
    const sent = await transfer(40);
    await runJob(s.t, 'bank-batch-payout');
    const batch = bankBatches().find((each) => each.items.some((item) => item.batchDetailId === `mps-transfer-${sent.id}`))!;
    const forged = await s.t.request('POST', `/rails/baneco/${CALLBACK_SECRET}/api/notifyStatus`, {
      body: { bankBatchId: batch.bankBatchId, batchId: batch.batchId, batchDetailId: `mps-transfer-${sent.id}`, status: 'ACEP', transactionIdDebit: 123456, transactionIdCredit: 'x' },
    });
    expect(forged.body).toEqual({ responseCode: 0, message: '' });
    expect(await transferStatus(sent.id)).toBe('COMPLETED');
    expect((await reconcile(today)).body).toEqual({
      date: today, rail: 'baneco', status: 'breaks',
      payments: { bank: 0, ours: 0 }, transfers: { bank: 0, ours: 1 },
      breaks: [{ kind: 'missing_debit', reference: `mps-transfer-${sent.id}`, ours: 40, bank: null }],
    });
  });

  it('unexpected_debit: another system pays out of the platform account; its debit is no transfer of ours', async () => {
    await paidOut(40); // ours, matched
    const baneco = (s.t.config.rail as { kind: 'baneco'; baneco: BanecoConfig }).baneco;
    const other = new BanecoClient({ config: baneco, serviceTimeZone: ZONE });
    const uploaded = await other.uploadBatch({
      batchId: 'planilla-otro-sistema-1',
      items: [{ batchDetailId: 'pago-1', amountCentavos: 5025 as Centavos, accountNumber: new FullAccountNumber('3001234567'), bankCode: 1003, beneficiaryName: 'Proveedor', note: '' }],
    });
    expect(uploaded.outcome).toBe('ok');
    await eventually(() => history().filter((line) => line.transactionType === 'D').length === 2);
    const theirs = history().filter((line) => line.transactionType === 'D').at(-1)!;
    expect((await reconcile(today)).body).toEqual({
      date: today, rail: 'baneco', status: 'breaks',
      payments: { bank: 0, ours: 0 }, transfers: { bank: 2, ours: 1 },
      breaks: [{ kind: 'unexpected_debit', reference: String(theirs.transactionId), ours: null, bank: 50.25 }],
    });
  });

  it('unknown_batch: an upload whose answer never came stands until the operator resolves it', async () => {
    s.bank.setKnobs({ faults: { batchUpload: { kind: 'http500' } } });
    const sent = await transfer(40);
    await runJob(s.t, 'bank-batch-payout');
    const batchKey = await batchKeyOf(sent.id);
    expect((await reconcile(today)).body).toMatchObject({
      status: 'breaks', transfers: { bank: 0, ours: 0 },
      breaks: [{ kind: 'unknown_batch', reference: batchKey, ours: 40, bank: null }],
    });
    const resolved = await s.t.request('POST', `/admin/v1/rails/batches/${batchKey}/resolve`, { body: { to: 'FAILED' } });
    expect(resolved.status).toBe(200);
    expect((await reconcile(today)).body).toMatchObject({ status: 'balanced', breaks: [] });

    // Another whose answer was lost after the bank took it: the bank's callbacks settle it, nothing stands.
    s.bank.setKnobs({ faults: { batchUpload: { kind: 'http500', processed: true } } });
    const settled = await transfer(25);
    await runJob(s.t, 'bank-batch-payout');
    expect((await s.t.db.query<{ status: string }>('select status from transfer_batches order by id desc limit 1')).rows[0]!.status).toBe('unknown');
    await eventually(async () => (await transferStatus(settled.id)) === 'COMPLETED');
    expect((await reconcile(today)).body).toMatchObject({ status: 'balanced', transfers: { bank: 1, ours: 1 }, breaks: [] });
  });

  it('conflicting_status: a callback contradicting the first, and an ACEP after the operator resolved FAILED', async () => {
    // A: accepted, then contradicted by a second callback (RECH) 500 ms later.
    s.bank.setKnobs({ callbacks: { contradictNext: 1 } });
    const contradicted = await paidOut(20);
    await eventually(async () => (await s.t.db.query('select 1 from transfer_batch_items where transfer_id = $1::bigint and conflicting_outcome is not null', [contradicted.id])).rows.length > 0);
    // B: the bank took the batch but its answer was lost; the operator resolved it FAILED; then the bank accepted it.
    s.bank.setKnobs({ batchDecision: 'hold', faults: { batchUpload: { kind: 'http500', processed: true } } });
    const resolvedFirst = await transfer(35);
    await runJob(s.t, 'bank-batch-payout');
    const batchKey = await batchKeyOf(resolvedFirst.id);
    expect((await s.t.request('POST', `/admin/v1/rails/batches/${batchKey}/resolve`, { body: { to: 'FAILED' } })).status).toBe(200);
    s.bank.decide(batchKey, `mps-transfer-${resolvedFirst.id}`, 'ACEP');
    await eventually(async () => (await s.t.db.query(`select 1 from transfer_batch_items where transfer_id = $1::bigint and outcome = 'accepted'`, [resolvedFirst.id])).rows.length > 0);
    expect(await transferStatus(resolvedFirst.id)).toBe('FAILED');

    expect((await reconcile(today)).body).toEqual({
      date: today, rail: 'baneco', status: 'breaks',
      payments: { bank: 0, ours: 0 }, transfers: { bank: 2, ours: 2 }, // both debits booked and matched: no missing or unexpected debit
      breaks: [
        { kind: 'conflicting_status', reference: `mps-transfer-${contradicted.id}`, ours: 20, bank: null },
        { kind: 'conflicting_status', reference: `mps-transfer-${resolvedFirst.id}`, ours: 35, bank: null },
      ],
    });
  });

  it('a word forged before the bank\'s own decides the transfer; the account\'s history shows each the other way round', async () => {
    s.bank.setKnobs({ batchDecision: 'hold' });
    const paidByBank = await transfer(15);
    const rejectedByBank = await transfer(16);
    await runJob(s.t, 'bank-batch-payout');
    const batch = bankBatches().find((each) => each.items.some((item) => item.batchDetailId === `mps-transfer-${paidByBank.id}`))!;
    const word = (id: number, status: 'ACEP' | 'RECH', extra: Record<string, unknown>) => s.t.request('POST', `/rails/baneco/${CALLBACK_SECRET}/api/notifyStatus`, {
      body: { bankBatchId: batch.bankBatchId, batchId: batch.batchId, batchDetailId: `mps-transfer-${id}`, status, ...extra },
    });
    expect((await word(paidByBank.id, 'RECH', { transactionIdDebit: 0, transactionIdCredit: '' })).body.responseCode).toBe(0);
    expect((await word(rejectedByBank.id, 'ACEP', { transactionIdDebit: 123456, transactionIdCredit: 'x' })).body.responseCode).toBe(0);
    s.bank.decide(batch.batchId, `mps-transfer-${paidByBank.id}`, 'ACEP');
    s.bank.decide(batch.batchId, `mps-transfer-${rejectedByBank.id}`, 'RECH');
    await eventually(async () => (await s.t.db.query('select 1 from transfer_batch_items where conflicting_outcome is not null')).rows.length === 2);
    expect([await transferStatus(paidByBank.id), await transferStatus(rejectedByBank.id)]).toEqual(['FAILED', 'COMPLETED']);

    const debit = history().find((line) => line.transactionType === 'D')!;
    expect((await reconcile(today)).body).toEqual({
      date: today, rail: 'baneco', status: 'breaks',
      payments: { bank: 0, ours: 0 }, transfers: { bank: 1, ours: 1 }, // the bank paid one, we hold the other as paid
      breaks: [
        // Completed by the forged ACEP: no such debit in the account.
        { kind: 'missing_debit', reference: `mps-transfer-${rejectedByBank.id}`, ours: 16, bank: null },
        // Paid by the bank, FAILED here with the funds back: its debit is no transfer of ours.
        { kind: 'unexpected_debit', reference: String(debit.transactionId), ours: null, bank: 15 },
        { kind: 'conflicting_status', reference: `mps-transfer-${paidByBank.id}`, ours: 15, bank: null },
        { kind: 'conflicting_status', reference: `mps-transfer-${rejectedByBank.id}`, ours: 16, bank: null },
      ],
    });
  });

  it('lists breaks of several kinds in the contract\'s order, then by reference', async () => {
    s.bank.setKnobs({ faults: { batchUpload: { kind: 'http500' } } });
    const stuck = await transfer(11);
    await runJob(s.t, 'bank-batch-payout');
    const stranger = s.bank.pay('99999999999999999998', { amount: 3 }) as { transactionId: string };
    await eventually(() => s.bank.callbacks().some((c) => c.kind === 'notifyPaymentQR' && c.outcome === 'answered'));
    const qr = await createQr(9);
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    const lost = s.bank.pay(qr.rail_reference) as { transactionId: string };
    const body = (await reconcile(today)).body;
    expect(body.breaks).toEqual([
      { kind: 'missing_payment', reference: lost.transactionId, ours: null, bank: 9 },
      { kind: 'unmatched_credit', reference: stranger.transactionId, ours: null, bank: 3 },
      { kind: 'unknown_batch', reference: await batchKeyOf(stuck.id), ours: 11, bank: null },
    ]);
  });

  it('reconciles from 01:00 the previous day once it is swept, once, logs the counts by kind, and /metrics reports them', async () => {
    const metricLines = async () => (await s.t.request<string>('GET', '/metrics')).text.split('\n').filter((line) => line.startsWith('mps_rail_reconciliation_'));
    expect(await metricLines()).toEqual([]); // nothing reconciled yet
    await createQr(1); // the sweep reads no day before the rail's first QR
    const stranger = s.bank.pay('99999999999999999997', { amount: 987.65, senderName: 'ROSA QUISPE', senderAccount: '******4321' }) as { transactionId: string };
    s.bank.setKnobs({ faults: { batchUpload: { kind: 'http500' } } });
    await transfer(12);
    await runJob(s.t, 'bank-batch-payout');
    const runs = async () => (await s.t.db.query<{ origin: string; break_counts: unknown }>('select origin, break_counts from rail_reconciliations order by id')).rows;

    const tomorrow = dayOf(new Date(s.t.clock.now().getTime() + DAY_MS));
    s.t.clock.set(parseWallClock(`${tomorrow} 00:59:00`, ZONE)!.toISOString());
    await runJob(s.t, 'bank-daily-sweep'); // 00:30 passed: today is swept
    await runJob(s.t, 'bank-daily-reconciliation');
    expect(await runs()).toEqual([]); // before 01:00
    s.t.clock.set(parseWallClock(`${tomorrow} 01:30:00`, ZONE)!.toISOString());
    await runJob(s.t, 'bank-daily-reconciliation');
    await runJob(s.t, 'bank-daily-reconciliation'); // once per day
    expect(await runs()).toEqual([{ origin: 'daily', break_counts: { unmatched_credit: 1, unknown_batch: 1 } }]);

    const warnings = s.logLines.filter((line) => line.includes('daily rail reconciliation'));
    expect(warnings).toHaveLength(1);
    const { time, pid, hostname, ...line } = JSON.parse(warnings[0]!) as Record<string, any>;
    expect(line).toMatchObject({ level: 40, rail: 'baneco', date: today, breaks: { unmatched_credit: 1, unknown_batch: 1 }, payments: { bank: 1, ours: 0 } });
    // Counts only: no payer's amount, name, account or payment id (the platform's account: SECRETS, after each test).
    for (const leak of ['987.65', '98765', 'ROSA QUISPE', '4321', stranger.transactionId]) expect(JSON.stringify(line)).not.toContain(leak);

    const lines = await metricLines();
    expect(lines).toContain('mps_rail_reconciliation_breaks{rail="baneco",kind="unmatched_credit"} 1');
    expect(lines).toContain('mps_rail_reconciliation_breaks{rail="baneco",kind="unknown_batch"} 1');
    expect(lines).toContain('mps_rail_reconciliation_breaks{rail="baneco",kind="missing_payment"} 0');
    expect(lines.filter((each) => each.startsWith('mps_rail_reconciliation_breaks{'))).toHaveLength(8);
    expect(lines).toContain(`mps_rail_reconciliation_last_day_seconds{rail="baneco"} ${parseWallClock(`${today} 00:00:00`, ZONE)!.getTime() / 1000}`);

    // The operator settles the batch and reconciles the day again: every process's /metrics follows the latest run.
    const batchKey = `mps-b-${(await s.t.db.query<{ id: number }>('select id from transfer_batches')).rows[0]!.id}`;
    await s.t.request('POST', `/admin/v1/rails/batches/${batchKey}/resolve`, { body: { to: 'FAILED' } });
    expect((await reconcile(today)).status).toBe(200);
    const after = await metricLines();
    expect(after).toContain('mps_rail_reconciliation_breaks{rail="baneco",kind="unknown_batch"} 0');
    expect(after).toContain('mps_rail_reconciliation_breaks{rail="baneco",kind="unmatched_credit"} 1');
  });

  it('waits for the sweep, and asks again later when the bank did not answer', async () => {
    await createQr(1); // the sweep reads no day before the rail's first QR
    const tomorrow = dayOf(new Date(s.t.clock.now().getTime() + DAY_MS));
    s.t.clock.set(parseWallClock(`${tomorrow} 02:00:00`, ZONE)!.toISOString());
    const runs = async () => Number((await s.t.db.query<{ n: number }>('select count(*)::int as n from rail_reconciliations')).rows[0]!.n);
    await runJob(s.t, 'bank-daily-reconciliation');
    expect(s.bank.state().history).toEqual([]);
    expect((await s.t.db.query(`select 1 from rail_attempts where operation = 'accountHistory'`)).rows).toEqual([]); // not swept: the bank not asked
    await runJob(s.t, 'bank-daily-sweep');
    s.bank.setKnobs({ faults: { accountsHistory: { kind: 'http500' } } });
    await runJob(s.t, 'bank-daily-reconciliation');
    expect(await runs()).toBe(0);
    expect(s.logLines.some((line) => line.includes('daily rail reconciliation: the bank did not answer'))).toBe(true);
    await runJob(s.t, 'bank-daily-reconciliation'); // within the claim's ten minutes: not asked again
    expect((await s.t.db.query(`select 1 from rail_attempts where operation = 'accountHistory'`)).rows).toHaveLength(1);
    s.t.clock.advance(10 * 60_000);
    await runJob(s.t, 'bank-daily-reconciliation');
    expect(await runs()).toBe(1);
  });
});

describe.each(databaseKinds())('reconciliation errors on %s', (kind) => {
  let s: BankedApp;
  beforeAll(async () => {
    s = await startBankedApp(kind, { timeoutMs: 300 });
  });
  afterEach(() => s.bank.setKnobs({ faults: { paidQR: null, accountsHistory: null } }));
  afterAll(() => s?.close());

  const reconcile = (query: string) => s.t.request('GET', `/admin/v1/rails/reconciliation${query}`);
  const stored = async () => (await s.t.db.query('select 1 from rail_reconciliations')).rows.length;

  it('answers 422 naming date for a missing, malformed, impossible or future date, before calling the bank', async () => {
    const tomorrow = dayOf(new Date(s.t.clock.now().getTime() + DAY_MS));
    for (const query of ['', '?date=', '?date=yesterday', '?date=2026-02-30', '?date=26-11-01', `?date=${tomorrow}`]) {
      const response = await reconcile(query);
      expect(response.status, query).toBe(422);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(response.body.errors.map((e: { field: string }) => e.field), query).toEqual(['date']);
    }
    const extra = await reconcile(`?date=${dayOf(s.t.clock.now())}&rail=baneco`);
    expect(extra.status).toBe(422);
    expect(extra.body.errors).toEqual([expect.objectContaining({ field: 'rail', code: 'unknown_field' })]);
    expect((await s.t.db.query(`select 1 from rail_attempts where operation in ('paidQr', 'accountHistory')`)).rows).toEqual([]);
  });

  it('answers 503 RAIL_UNAVAILABLE with Retry-After when the bank stalls, and 502 RAIL_REFUSED with its message; nothing stored', async () => {
    const today = dayOf(s.t.clock.now());
    s.bank.setKnobs({ faults: { paidQR: { kind: 'stall' } } });
    const stalled = await reconcile(`?date=${today}`);
    expect(stalled.status).toBe(503);
    expect(stalled.body.code).toBe('RAIL_UNAVAILABLE');
    expect(Number(stalled.headers.get('retry-after'))).toBeGreaterThan(0);
    s.bank.setKnobs({ faults: { paidQR: null, accountsHistory: { kind: 'refuse', code: 3, message: 'Cuenta no habilitada' } } });
    const refused = await reconcile(`?date=${today}`);
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ code: 'RAIL_REFUSED', message: 'The bank refused the request: Cuenta no habilitada' });
    expect(await stored()).toBe(0);
  });

  it('needs the operator token', async () => {
    const response = await s.t.request('GET', `/admin/v1/rails/reconciliation?date=${dayOf(s.t.clock.now())}`, { adminToken: null });
    expect(response.status).toBe(401);
  });
});

describe.each(databaseKinds())('reconciliation on the sandbox rail on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t?.close());

  it('answers 409 RAIL_NOT_RECONCILABLE: there is no bank to compare with', async () => {
    const response = await t.request('GET', `/admin/v1/rails/reconciliation?date=${dayOf(t.clock.now())}`);
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'RAIL_NOT_RECONCILABLE', type: 'business_logic_error' });
    // A bad date is still a 422 first: the query is checked before the rail.
    expect((await t.request('GET', '/admin/v1/rails/reconciliation?date=2026-13-01')).status).toBe(422);
  });
});
