// Scenario `bank`: the service on the Banco Económico rail (RAIL=baneco) against the bank simulator — the bank down during QR creation and during a batch upload, callbacks lost, doubled, delayed and reordered, kill -9 of the worker between a batch's upload and its answer, the sweep after an outage; nothing lost, paid or credited twice.
import { randomUUID } from 'node:crypto';
import { createMerchant, ledgerCheck, type Merchant } from '../api.ts';
import { BankRig, runMps, type SimPayment } from '../bank.ts';
import { describe, errorCode, request, type Exchange, type RequestOptions } from '../http.ts';
import { Tally } from '../load.ts';
import { anyFreePort } from '../ports.ts';
import type { Scope } from '../scope.ts';
import { Fleet, scratchDatabase, type ScenarioContext } from '../setup.ts';
import type { ServiceProcess } from '../service.ts';
import { checkMovementsAndEvents, ScratchDb } from '../verify.ts';

/** BANECO_TIMEOUT of the service processes: a stalled bank costs a request this long. */
const TIMEOUT_MS = 2_000;
const BANK_SETTINGS = { BANECO_POLL_INTERVAL: '1s', BANECO_BATCH_INTERVAL: '1s', BANECO_TIMEOUT: `${TIMEOUT_MS / 1000}s` };
/** src/rails/baneco/pay-out.ts: an upload still without answer 3 × BANECO_TIMEOUT + 30 s after its batch was written is given up for. */
const UPLOAD_GIVE_UP_MS = 3 * TIMEOUT_MS + 30_000;
/** How late the bank answers the upload the worker is killed waiting for (less than BANECO_TIMEOUT: only the kill loses it). */
const UPLOAD_DELAY_MS = 1_500;
const MERCHANTS = 4;
/** Every merchant's first QR, paid at the bank before the faults: the money its transfers spend. */
const FUNDING = '2000.00';
/** A beneficiary account the simulator rejects ("Cuenta cerrada"), and one it accepts. */
const CLOSED_ACCOUNT = '5550-0000';
const GOOD_ACCOUNT = '2015-0123-4556';

type Part = '1' | '2' | '3' | '4' | '5' | 'end';
const PART_TITLES: Record<Part, string> = {
  1: 'bank down at QR creation',
  2: 'bank down at a batch upload',
  3: 'callbacks lost, doubled, delayed, reordered',
  4: 'kill -9 of the worker between upload and answer',
  5: 'the sweep after an outage',
  end: 'bank ↔ database',
};

const centavos = (amount: number) => Math.round(amount * 100);
const list = (items: unknown[], max = 4) => `${items.slice(0, max).map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('; ')}${items.length > max ? `; … (${items.length} in all)` : ''}`;

export const bankScenario = {
  name: 'bank',
  summary: 'RAIL=baneco against the bank simulator: bank down at QR creation and at a batch upload, callbacks lost/doubled/reordered, kill -9 between upload and answer, sweep after an outage',
  timeoutMs: () => 6 * 60_000,
  async run(ctx: ScenarioContext, scope: Scope): Promise<void> {
    await new BankScenario(ctx, scope).run();
  },
};

interface BatchState { id: number; status: string; message: string | null; resolution: string | null; updated_ms: number; transfer_ids: number[] }

class BankScenario {
  private readonly tally = new Tally();
  /** The 503s and 502s part 1 asked the bank for (the only 5xx the API may answer). */
  private readonly allowed5xx = { 503: 0, 502: 0 };
  private bank!: BankRig;
  private fleet!: Fleet;
  private db!: ScratchDb;
  private url = '';
  private api!: ServiceProcess;
  private worker!: ServiceProcess;
  private merchants: Merchant[] = [];
  /** Transfer id → its merchant and amount, for every transfer the API acknowledged. */
  private readonly transfers = new Map<number, { businessCode: number; amountCentavos: number }>();
  /** Bank payments to QRs the service never acknowledged (an answer lost after the bank issued the QR). */
  private readonly orphanPayments: SimPayment[] = [];
  /** Batches the operator resolved, and to what. */
  private readonly resolutions = new Map<number, 'COMPLETED' | 'FAILED'>();

  constructor(private readonly ctx: ScenarioContext, private readonly scope: Scope) {}

  private check(part: Part, name: string, ok: boolean, detail = ''): boolean {
    return this.ctx.report.check(this.ctx.name, `${part === 'end' ? '' : `${part}. `}${PART_TITLES[part]}: ${name}`, ok, detail);
  }

  private note(text: string): void {
    this.ctx.report.note(this.ctx.name, text);
  }

  private figure(name: string, value: string | number): void {
    this.ctx.report.figure(this.ctx.name, name, value);
  }

  async run(): Promise<void> {
    const started = Date.now();
    await this.setUp();
    const timings: string[] = [];
    for (const [part, body] of [['1', () => this.qrCreation()], ['2', () => this.batchUpload()], ['3', () => this.callbacks()],
      ['4', () => this.killBetweenUploadAndAnswer()], ['5', () => this.sweepAfterOutage()]] as Array<[Part, () => Promise<void>]>) {
      const t0 = Date.now();
      try {
        await body();
      } catch (error) {
        if (this.scope.aborted) throw error;
        this.check(part, 'ran to the end', false, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
        // Whatever the part left behind must not break the next one.
        this.bank.set({ batchDecision: 'auto', faults: { generateQR: null, batchUpload: null, statusQR: null }, delays: { batchUpload: null },
          callbacks: { dropNext: 0, duplicate: false, outOfOrder: false, outOfOrderWindowMs: 300, delayMs: 0, contradictNext: 0, contradictAfterMs: 500 } });
        this.bank.onLine = null;
        if (!this.api.alive) await this.restart('api');
        if (!this.worker.alive) await this.restart('worker');
      }
      timings.push(`${part}: ${((Date.now() - t0) / 1000).toFixed(1)}`);
    }
    await this.verifyAll();
    this.figure('time per part (s)', `${timings.join(', ')}; all with set-up and checks ${((Date.now() - started) / 1000).toFixed(0)}`);
  }

  // --- set-up -------------------------------------------------------------------------------------

  private async setUp(): Promise<void> {
    const apiPort = await anyFreePort();
    // Items decided 300 ms after an upload (unless a part holds them); callbacks retried as the simulator does by default (3 times, 1-2-4 s).
    this.bank = await BankRig.start(apiPort, BANK_SETTINGS, { batchDecisionDelayMs: 300 });
    this.scope.defer('stop the bank simulator', () => this.bank.stop());
    this.url = await scratchDatabase(this.ctx);
    this.fleet = new Fleet(this.ctx, this.scope, this.url);
    this.api = await this.fleet.start('api', 'api', this.bank.serviceEnv, apiPort);
    await this.api.waitStarted(60_000); // applies the migrations
    this.worker = await this.fleet.start('worker', 'worker', this.bank.serviceEnv);
    await this.worker.waitStarted(60_000);
    this.db = await ScratchDb.open(this.url);
    this.scope.defer('close harness connection', () => this.db.close());
    this.note(`bank simulator on ${this.bank.sim.url}; API pid ${this.api.pid} on :${apiPort}, worker pid ${this.worker.pid}; ${Object.entries(BANK_SETTINGS).map(([k, v]) => `${k}=${v}`).join(' ')}`);

    for (let n = 0; n < MERCHANTS; n++) this.merchants.push(await createMerchant(this.api.baseUrl, this.ctx.adminToken, `Faults bank ${n + 1}`));
    // Each merchant's money, paid at the bank and recorded through its callback: the path the faults then break.
    const funding = await Promise.all(this.merchants.map((m) => this.newQr(m, FUNDING)));
    for (const id of funding) this.payAtBank(id);
    const funded = await this.until(15_000, async () => (await this.paymentsRecorded(funding)) === funding.length);
    if (!funded.ok) throw new Error(`the funding payments were not recorded within 15 s (${await this.paymentsRecorded(funding)}/${funding.length})`);
    this.note(`${MERCHANTS} merchants funded with ${FUNDING} each through the bank in ${funded.ms} ms`);
  }

  private async restart(which: 'api' | 'worker'): Promise<number> {
    const process = this.fleet.restart(which === 'api' ? this.api : this.worker);
    if (which === 'api') this.api = process;
    else this.worker = process;
    return process.waitStarted(60_000);
  }

  // --- the service's API --------------------------------------------------------------------------

  private async call(method: string, path: string, options: RequestOptions): Promise<Exchange> {
    const exchange = await request(this.api.baseUrl, method, path, { timeoutMs: 20_000, ...options });
    this.tally.add(exchange);
    return exchange;
  }

  private createQr(merchant: Merchant, amount: string, key: string): Promise<Exchange> {
    return this.call('POST', '/api/v2/simple-qrs', {
      route: 'POST /api/v2/simple-qrs', apiKey: merchant.apiKey, headers: { 'Idempotency-Key': key },
      body: { business_code: merchant.businessCode, amount, description: `faults bank ${key.slice(0, 8)}` },
    });
  }

  /** A QR the bank is up for: 201 expected, anything else is unexpected. */
  private async newQr(merchant: Merchant, amount: string): Promise<string> {
    const exchange = await this.createQr(merchant, amount, randomUUID());
    if (exchange.status !== 201) throw new Error(`QR create: ${describe(exchange)} ${JSON.stringify(exchange.body).slice(0, 200)}`);
    const id = (exchange.body as { id: string }).id;
    return id;
  }

  private async newTransfer(merchant: Merchant, amountCentavos: number, closedAccount = false): Promise<number> {
    const exchange = await this.call('POST', '/api/v2/transfers', {
      route: 'POST /api/v2/transfers', apiKey: merchant.apiKey, headers: { 'Idempotency-Key': randomUUID() },
      body: {
        business_code: merchant.businessCode, amount: (amountCentavos / 100).toFixed(2), currency: 'BOB', reference: 'faults bank',
        destination: { type: 'bank_account', bank_code: 1014, account_number: closedAccount ? CLOSED_ACCOUNT : GOOD_ACCOUNT, account_titular: 'Ana Pérez' },
      },
    });
    if (exchange.status !== 201) throw new Error(`transfer create: ${describe(exchange)} ${JSON.stringify(exchange.body).slice(0, 200)}`);
    const id = (exchange.body as { id: number }).id;
    this.transfers.set(id, { businessCode: merchant.businessCode, amountCentavos });
    return id;
  }

  /** `count` transfers of `merchant`, sent together so they likely share a batch; every `closedEvery`-th to a closed account. */
  private transfersOf(merchant: Merchant, count: number, closedEvery: number, base = 1_000): Promise<number[]> {
    return Promise.all(Array.from({ length: count }, (_, n) => this.newTransfer(merchant, base + n * 125, (n + 1) % closedEvery === 0)));
  }

  private async balance(merchant: Merchant): Promise<{ available: number; pendingOut: number }> {
    const exchange = await this.call('GET', '/api/v2/balance', { route: 'GET /api/v2/balance', apiKey: merchant.apiKey });
    if (exchange.status !== 200) throw new Error(`balance: ${describe(exchange)}`);
    const body = exchange.body as { available: number; pending_out: number };
    return { available: centavos(body.available), pendingOut: centavos(body.pending_out) };
  }

  private resolve(batchId: number, to: 'COMPLETED' | 'FAILED'): Promise<Exchange> {
    return this.call('POST', `/admin/v1/rails/batches/mps-b-${batchId}/resolve`, { route: 'POST /admin/v1/rails/batches/:id/resolve', adminToken: this.ctx.adminToken, body: { to } });
  }

  // --- the bank and the database ------------------------------------------------------------------

  /** A payer pays our QR `id` at the bank (its amount); the bank then calls the service back. */
  private payAtBank(id: string): SimPayment {
    const qr = this.bank.qrOf(id);
    if (!qr) throw new Error(`the bank holds no QR for our QR ${id}`);
    return this.bank.sim.pay(qr.qrId) as unknown as SimPayment;
  }

  private async paymentsRecorded(qrIds: string[]): Promise<number> {
    return (await this.db.one<{ n: number }>('select count(*)::int n from qr_payments where qr_id = any($1::uuid[])', [qrIds])).n;
  }

  private async statuses(ids: number[]): Promise<Map<number, string>> {
    const rows = await this.db.rows<{ id: number; status: string }>('select id::int, status from transfers where id = any($1::bigint[])', [ids]);
    return new Map(rows.map((r) => [r.id, r.status]));
  }

  private async open(ids: number[]): Promise<number> {
    return (await this.db.one<{ n: number }>(`select count(*)::int n from transfers where id = any($1::bigint[]) and status in ('PENDING', 'IN_TRANSIT')`, [ids])).n;
  }

  /** The batches holding these transfers. */
  private batchesOf(ids: number[]): Promise<BatchState[]> {
    return this.db.rows<BatchState>(`
      select b.id::int, b.status, b.message, b.resolution,
             (extract(epoch from b.updated_at - b.created_at) * 1000)::float8 as updated_ms,
             array_agg(i.transfer_id::int order by i.transfer_id) as transfer_ids
        from transfer_batches b join transfer_batch_items i on i.batch_id = b.id
       where i.transfer_id = any($1::bigint[]) group by b.id order by b.id`, [ids]);
  }

  /** Waits until `done` holds, polling every 200 ms, for at most `boundMs`. */
  private async until(boundMs: number, done: () => Promise<boolean> | boolean): Promise<{ ok: boolean; ms: number }> {
    const started = Date.now();
    for (;;) {
      if (await done()) return { ok: true, ms: Date.now() - started };
      if (Date.now() - started > boundMs) return { ok: false, ms: Date.now() - started };
      await this.scope.sleep(200);
    }
  }

  /** Transfers whose status differs from the bank's word on their item (ACEP → COMPLETED, RECH → FAILED). */
  private async disagreeWithBank(ids: number[]): Promise<string[]> {
    const statuses = await this.statuses(ids);
    const items = new Map(this.bank.itemsOf(ids).map((each) => [each.transferId, each.item.status]));
    return ids.flatMap((id) => {
      const word = items.get(id);
      const expected = word === 'ACEP' ? 'COMPLETED' : word === 'RECH' ? 'FAILED' : `(bank: ${word ?? 'no item'})`;
      return statuses.get(id) === expected ? [] : [`transfer ${id} ${statuses.get(id)}, bank ${word ?? 'no item'}`];
    });
  }

  private async statusCount(ids: number[]): Promise<Record<string, number>> {
    return [...(await this.statuses(ids)).values()].reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
  }

  /** The items of these transfers holding a word that contradicts their first one. */
  private conflicts(ids: number[]): Promise<Array<{ transfer_id: number; status: string; outcome: string; conflicting_outcome: string }>> {
    return this.db.rows(`select i.transfer_id::int, t.status, i.outcome, i.conflicting_outcome from transfer_batch_items i join transfers t on t.id = i.transfer_id
      where i.transfer_id = any($1::bigint[]) and i.conflicting_outcome is not null order by i.transfer_id`, [ids]);
  }

  // --- 1. the bank down while a QR is created ------------------------------------------------------

  private async qrCreation(): Promise<void> {
    const merchant = this.merchants[0]!;
    const code = merchant.businessCode;
    const qrCount = async () => (await this.db.one<{ n: number }>('select count(*)::int n from simple_qrs where business_code = $1::bigint', [code])).n;
    const before = await qrCount();
    const bankQrsBefore = this.bank.state().qrs.length;

    // Nothing done at the bank: every way of not answering, and a refusal.
    const faults = ['stall', 'close', 'http500', 'malformed', 'refuse'] as const;
    const attempts: Array<{ kind: string; key: string; exchange: Exchange }> = [];
    for (const kind of faults) {
      this.bank.set({ faults: { generateQR: { kind } } });
      const key = randomUUID();
      attempts.push({ kind, key, exchange: await this.createQr(merchant, '25.00', key) });
    }
    const wrong = attempts.filter(({ kind, exchange }) => kind === 'refuse'
      ? exchange.status !== 502 || errorCode(exchange) !== 'RAIL_REFUSED'
      : exchange.status !== 503 || errorCode(exchange) !== 'RAIL_UNAVAILABLE' || !exchange.headers?.get('retry-after'));
    this.check('1', 'generateQR stalled, closed, HTTP 500 or malformed → 503 RAIL_UNAVAILABLE with Retry-After; refused → 502 RAIL_REFUSED', wrong.length === 0,
      attempts.map(({ kind, exchange }) => `${kind} → ${exchange.status} ${errorCode(exchange)}${exchange.headers?.get('retry-after') ? ` Retry-After ${exchange.headers.get('retry-after')}` : ''} in ${Math.round(exchange.ms)} ms`).join(', '));
    for (const { exchange } of attempts) if (exchange.status === 503 || exchange.status === 502) this.allowed5xx[exchange.status]++;
    const keys = attempts.map((a) => a.key);
    const stored = await this.db.one<{ n: number }>(`select count(*)::int n from idempotency_keys where idempotency_key = any($1::uuid[])`, [keys]);
    const after = await qrCount();
    const bankQrsAfter = this.bank.state().qrs.length;
    this.check('1', 'no QR row and no stored outcome for those requests, and the bank issued nothing', after === before && stored.n === 0 && bankQrsAfter === bankQrsBefore,
      `QRs of the merchant ${before} → ${after}, stored outcomes of the ${keys.length} keys ${stored.n}, bank QRs ${bankQrsBefore} → ${bankQrsAfter}`);

    // The bank back: the same keys, each retried twice.
    const retried: string[] = [];
    const retryProblems: string[] = [];
    for (const key of keys) {
      const first = await this.createQr(merchant, '25.00', key);
      const again = await this.createQr(merchant, '25.00', key);
      const id = (first.body as { id?: string }).id;
      if (first.status !== 201 || again.status !== 201 || !id || (again.body as { id?: string }).id !== id || again.headers?.get('idempotent-replayed') !== 'true') {
        retryProblems.push(`${describe(first)} then ${describe(again)}`);
        continue;
      }
      retried.push(id);
    }
    const found = await this.db.one<{ n: number }>('select count(*)::int n from simple_qrs where id = any($1::uuid[])', [retried]);
    const bankPerQr = retried.map((id) => this.bank.state().qrs.filter((qr) => qr.transactionId === id).length);
    this.check('1', 'a retry with the same Idempotency-Key, the bank back, creates exactly one QR (the second retry replays it)',
      retryProblems.length === 0 && retried.length === keys.length && found.n === keys.length && (await qrCount()) === before + keys.length && bankPerQr.every((n) => n === 1),
      `${retried.length}/${keys.length} keys → one QR each; QRs of the merchant ${before} → ${await qrCount()}; bank QRs per QR ${JSON.stringify(bankPerQr)}${retryProblems.length ? `; ${list(retryProblems)}` : ''}`);

    // The bank issues the QR and only its answer is lost.
    const balanceBefore = await this.balance(merchant);
    const unmatchedBefore = (await this.db.one<{ n: number }>('select count(*)::int n from bank_unmatched_credits')).n;
    const orphans: string[] = [];
    const processedProblems: string[] = [];
    for (const kind of ['stall', 'close'] as const) {
      const known = new Set(this.bank.state().qrs.map((qr) => qr.qrId));
      this.bank.set({ faults: { generateQR: { kind, processed: true } } });
      const key = randomUUID();
      const lost = await this.createQr(merchant, '33.00', key);
      if (lost.status === 503) this.allowed5xx[503]++;
      const issued = this.bank.state().qrs.filter((qr) => !known.has(qr.qrId));
      const ours = await this.db.one<{ n: number }>('select count(*)::int n from simple_qrs where rail_reference = any($1::text[]) or id::text = any($2::text[])',
        [issued.map((qr) => qr.qrId), issued.map((qr) => qr.transactionId)]);
      if (lost.status !== 503 || errorCode(lost) !== 'RAIL_UNAVAILABLE' || issued.length !== 1 || ours.n !== 0) {
        processedProblems.push(`${kind}: ${describe(lost)}, ${issued.length} QRs issued at the bank, ${ours.n} of them ours`);
      }
      orphans.push(...issued.map((qr) => qr.qrId));
      // The merchant retries: a new bank QR, the orphan stays the bank's alone.
      const retry = await this.createQr(merchant, '33.00', key);
      const id = (retry.body as { id?: string }).id;
      if (retry.status !== 201 || !id) processedProblems.push(`${kind} retry: ${describe(retry)}`);
      else if (orphans.includes(this.bank.qrOf(id)?.qrId ?? '')) processedProblems.push(`${kind} retry holds the orphan bank QR`);
    }
    this.check('1', 'generateQR processed but its answer lost (stall, close): 503, the bank holds a QR of which nothing of ours exists, and the retry makes another',
      processedProblems.length === 0 && orphans.length === 2, processedProblems.length ? list(processedProblems) : `orphan bank QRs ${orphans.join(', ')}`);

    // A payer pays the orphans: the bank's money, never a merchant's.
    for (const qrId of orphans) this.orphanPayments.push(this.bank.sim.pay(qrId) as unknown as SimPayment);
    const references = this.orphanPayments.map((p) => p.transactionId);
    const kept = await this.until(10_000, async () => (await this.db.one<{ n: number }>(
      'select count(*)::int n from bank_unmatched_credits where rail_reference = any($1::text[])', [references])).n === references.length);
    const credited = await this.db.one<{ n: number }>(`select count(*)::int n from qr_payments where rail = 'baneco' and rail_reference = any($1::text[])`, [references]);
    const unmatchedAfter = (await this.db.one<{ n: number }>('select count(*)::int n from bank_unmatched_credits')).n;
    const balanceAfter = await this.balance(merchant);
    this.check('1', 'a payment to an orphan bank QR is an unmatched credit, credited to no merchant',
      kept.ok && credited.n === 0 && unmatchedAfter === unmatchedBefore + references.length && balanceAfter.available === balanceBefore.available,
      `${references.length} payments → unmatched credits ${unmatchedBefore} → ${unmatchedAfter} (in ${kept.ms} ms), ${credited.n} recorded as payments; merchant available ${balanceBefore.available} → ${balanceAfter.available} centavos`);
  }

  // --- 2. the bank down while a batch is uploaded -------------------------------------------------

  private async batchUpload(): Promise<void> {
    const merchant = this.merchants[1]!;

    // (a) The bank takes the batch; the answer never comes.
    this.bank.set({ batchDecision: 'hold', faults: { batchUpload: { kind: 'stall', processed: true } } });
    const taken = await this.transfersOf(merchant, 6, 3);
    await this.until(15_000, async () => (await this.batchesOf(taken)).every((b) => b.status !== 'uploading') && (await this.batchesOf(taken)).flatMap((b) => b.transfer_ids).length === taken.length);
    let batches = await this.batchesOf(taken);
    const unknown = batches.filter((b) => b.status === 'unknown');
    const faulted = unknown[0];
    const sentOf = (batchId: number) => this.bank.state().batches.filter((b) => b.batchId === `mps-b-${batchId}`).length;
    const describeBatches = (list: BatchState[]) => list.map((b) => `mps-b-${b.id} ${b.status} (${b.transfer_ids.length} transfers${b.message ? `, "${b.message}"` : ''})`).join(', ');
    if (!faulted || unknown.length !== 1) {
      this.check('2', 'upload stalled after the bank took it: the batch is unknown', false, `our batches ${describeBatches(batches)}`);
      throw new Error('no single unknown batch in part 2a');
    }
    let statuses = await this.statuses(faulted.transfer_ids);
    this.check('2', 'upload stalled after the bank took it: the batch is unknown (no answer within BANECO_TIMEOUT), its transfers IN_TRANSIT',
      faulted.transfer_ids.every((id) => statuses.get(id) === 'IN_TRANSIT') && sentOf(faulted.id) === 1,
      `our batches ${describeBatches(batches)}; the bank holds it ${sentOf(faulted.id)} time(s)`);
    const uploadsBefore = this.bank.count('batchUpload');
    await this.scope.sleep(4_000); // four runs of the batch job
    statuses = await this.statuses(taken);
    batches = await this.batchesOf(taken);
    this.check('2', 'four batch intervals later it is still unknown and IN_TRANSIT, and was not uploaded again',
      this.bank.count('batchUpload') === uploadsBefore && sentOf(faulted.id) === 1 && batches.find((b) => b.id === faulted.id)?.status === 'unknown'
        && faulted.transfer_ids.every((id) => statuses.get(id) === 'IN_TRANSIT'),
      `bank upload requests ${uploadsBefore} → ${this.bank.count('batchUpload')}; the bank holds it ${sentOf(faulted.id)} time(s)`);
    // The bank's back office decides; its callbacks settle the transfers.
    const decided = this.bank.decide(taken);
    this.bank.set({ batchDecision: 'auto' });
    const settled = await this.until(15_000, async () => (await this.open(taken)) === 0);
    const disagree = await this.disagreeWithBank(taken);
    this.check('2', "the bank's callbacks then settle them as the bank decided", settled.ok && disagree.length === 0,
      `${decided} items decided at the bank, settled in ${settled.ms} ms: ${JSON.stringify(await this.statusCount(taken))}${disagree.length ? `; ${list(disagree)}` : ''}`);

    // (b) The bank never got the batch.
    const before = await this.balance(merchant);
    this.bank.set({ faults: { batchUpload: { kind: 'stall' } } });
    const lost = await this.transfersOf(merchant, 4, 4, 2_000);
    const sum = lost.reduce((acc, id) => acc + this.transfers.get(id)!.amountCentavos, 0);
    await this.until(15_000, async () => (await this.batchesOf(lost)).every((b) => b.status !== 'uploading') && (await this.batchesOf(lost)).flatMap((b) => b.transfer_ids).length === lost.length);
    const uploadsAfterB = this.bank.count('batchUpload');
    await this.scope.sleep(4_000);
    batches = await this.batchesOf(lost);
    const gone = batches.filter((b) => b.status === 'unknown');
    const target = gone[0];
    statuses = await this.statuses(lost);
    const during = await this.balance(merchant);
    // Transfers of this set that went in another batch (the job cut between two of them) settle by themselves.
    const others = lost.filter((id) => !target?.transfer_ids.includes(id));
    if (!target || gone.length !== 1) {
      this.check('2', 'upload stalled and not taken: the batch stays unknown', false, `our batches ${describeBatches(batches)}`);
      throw new Error('no single unknown batch in part 2b');
    }
    this.check('2', 'upload stalled and not taken: the batch stays unknown, IN_TRANSIT, never uploaded again (the bank does not hold it)',
      sentOf(target.id) === 0 && this.bank.count('batchUpload') === uploadsAfterB && target.transfer_ids.every((id) => statuses.get(id) === 'IN_TRANSIT'),
      `our batches ${describeBatches(batches)}; held by the bank ${sentOf(target.id)} time(s); upload requests ${uploadsAfterB} → ${this.bank.count('batchUpload')} in 4 s; balance meanwhile available ${before.available} → ${during.available}, pending_out ${before.pendingOut} → ${during.pendingOut}`);
    const resolved = await this.resolve(target.id, 'FAILED');
    this.resolutions.set(target.id, 'FAILED');
    const twice = await this.resolve(target.id, 'FAILED');
    await this.until(10_000, async () => (await this.open(lost)) === 0);
    statuses = await this.statuses(lost);
    const after = await this.balance(merchant);
    const targetSum = target.transfer_ids.reduce((acc, id) => acc + this.transfers.get(id)!.amountCentavos, 0);
    const acceptedElsewhere = this.bank.itemsOf(others).filter((each) => each.item.status === 'ACEP').reduce((acc, each) => acc + centavos(each.item.amount), 0);
    this.check('2', 'the operator resolves it FAILED through the admin API: its transfers FAILED, their funds back exactly once (a second resolve is 409)',
      resolved.status === 200 && twice.status === 409 && errorCode(twice) === 'BATCH_NOT_RESOLVABLE' && target.transfer_ids.every((id) => statuses.get(id) === 'FAILED')
        && after.available === before.available - acceptedElsewhere && after.pendingOut === before.pendingOut,
      `resolve → ${resolved.status}, again → ${twice.status} ${errorCode(twice)}; ${target.transfer_ids.length} transfers of ${(targetSum / 100).toFixed(2)} BOB (of ${(sum / 100).toFixed(2)}) FAILED; available ${before.available} → ${during.available} → ${after.available}, pending_out ${before.pendingOut} → ${during.pendingOut} → ${after.pendingOut}${acceptedElsewhere ? ` (${acceptedElsewhere} paid out in another batch)` : ''}`);
    this.bank.set({ faults: { batchUpload: null } });
  }

  // --- 3. callbacks lost, doubled, delayed and out of order ----------------------------------------

  private async callbacks(): Promise<void> {
    // The knobs count callbacks from now on: none of an earlier part may still be on its way.
    await this.until(15_000, () => this.bank.sim.pendingCallbacks() === 0);
    const attemptsBefore = this.bank.callbacks().length;
    // (a) Pay-in: many QRs paid while callbacks are dropped, doubled, delayed and reordered.
    const qrs = (await Promise.all(this.merchants.map(async (m) => {
      const ids: string[] = [];
      for (let n = 0; n < 6; n++) ids.push(await this.newQr(m, `${(10 + n * 1.25).toFixed(2)}`));
      return ids;
    }))).flat();
    const dropped = 6;
    this.bank.set({ callbacks: { dropNext: dropped, duplicate: true, outOfOrder: true, delayMs: 50 } });
    const paidAt = Date.now();
    const payments = qrs.map((id) => this.payAtBank(id));
    const recorded = await this.until(30_000, async () => (await this.paymentsRecorded(qrs)) === qrs.length);
    const quiet = await this.until(30_000, () => this.bank.sim.pendingCallbacks() === 0);
    const references = payments.map((p) => p.transactionId);
    const rows = await this.db.rows<{ rail_reference: string; qr_id: string; amount_centavos: number; n: number }>(
      `select rail_reference, min(qr_id::text) qr_id, min(amount_centavos)::int amount_centavos, count(*)::int n from qr_payments
        where rail = 'baneco' and rail_reference = any($1::text[]) group by rail_reference`, [references]);
    const byReference = new Map(rows.map((r) => [r.rail_reference, r]));
    const wrong = payments.flatMap((p) => {
      const row = byReference.get(p.transactionId);
      const ours = this.bank.state().qrs.find((qr) => qr.qrId === p.qrId)?.transactionId;
      return row && row.n === 1 && row.qr_id === ours && row.amount_centavos === centavos(p.amount) ? [] : [`bank payment ${p.transactionId}: ${JSON.stringify(row ?? 'not recorded')}`];
    });
    const tries = this.bank.callbacks().slice(attemptsBefore).filter((c) => c.kind === 'notifyPaymentQR');
    const droppedTries = tries.filter((c) => c.outcome === 'dropped').length;
    this.check('3', 'every bank payment recorded exactly once, on its QR, with its amount (the poll catches the dropped callbacks)',
      recorded.ok && wrong.length === 0 && droppedTries === dropped,
      `${payments.length} payments, all recorded ${recorded.ok ? `${recorded.ms} ms` : 'not'} after the payers paid; callbacks: ${droppedTries} dropped, ${tries.filter((c) => c.copy === 2).length} duplicate copies, ${tries.filter((c) => c.outcome === 'answered').length} answered${quiet.ok ? '' : ', some still pending'}${wrong.length ? `; ${list(wrong)}` : ''}`);
    this.figure('3a: payments recorded after the payers paid (ms)', `${Date.now() - paidAt} until every callback ended; ${recorded.ms} until all ${payments.length} were recorded`);

    // (b) Pay-out: many batch items whose callbacks are doubled, delayed and reordered.
    this.bank.set({ callbacks: { dropNext: 0, duplicate: true, outOfOrder: true, delayMs: 50 } });
    const items = (await Promise.all(this.merchants.map((m, n) => this.transfersOf(m, 8, 4, 500 + n * 10)))).flat();
    const settled = await this.until(30_000, async () => (await this.open(items)) === 0);
    const quiet2 = await this.until(30_000, () => this.bank.sim.pendingCallbacks() === 0);
    const disagree = await this.disagreeWithBank(items);
    const bankItems = this.bank.itemsOf(items);
    const inTwoBatches = items.filter((id) => bankItems.filter((each) => each.transferId === id).length !== 1);
    const itemTries = this.bank.callbacks().slice(attemptsBefore).filter((c) => c.kind === 'notifyStatus');
    const batches = await this.batchesOf(items);
    this.check('3', 'every transfer ends COMPLETED or FAILED once, as the bank decided its item, each item in one bank batch',
      settled.ok && quiet2.ok && disagree.length === 0 && inTwoBatches.length === 0,
      `${items.length} transfers in ${batches.length} batches, settled in ${settled.ms} ms: ${JSON.stringify(await this.statusCount(items))}; item callbacks: ${itemTries.filter((c) => c.copy === 2).length} duplicate copies, ${itemTries.filter((c) => c.outcome === 'answered').length} answered${disagree.length ? `; ${list(disagree)}` : ''}${inTwoBatches.length ? `; not in exactly one bank batch: ${list(inTwoBatches)}` : ''}`);

    // (c) A contradicting callback after the bank's real one: kept, changes nothing.
    this.bank.set({ callbacks: { duplicate: true, outOfOrder: false, delayMs: 50, contradictNext: 4, contradictAfterMs: 500 } });
    const contradicted = await this.transfersOf(this.merchants[0]!, 4, 2, 600);
    const settled3 = await this.until(15_000, async () => (await this.open(contradicted)) === 0 && this.bank.sim.pendingCallbacks() === 0);
    const disagree3 = await this.disagreeWithBank(contradicted);
    const kept = await this.conflicts(contradicted);
    this.check('3', "a callback contradicting the bank's earlier one changes nothing and is kept on the item (conflicting_outcome)",
      settled3.ok && disagree3.length === 0 && kept.length === contradicted.length,
      `${contradicted.length} transfers ${JSON.stringify(await this.statusCount(contradicted))}, each contradicted 500 ms after its real callback; ${kept.length} conflicts kept${disagree3.length ? `; ${list(disagree3)}` : ''}`);

    // (d) A contradicting callback that overtakes the bank's real one: the first word decides; the real one is kept as the conflict.
    this.bank.set({ batchDecision: 'hold', callbacks: { duplicate: false, outOfOrder: false, delayMs: 0, contradictNext: 0 } });
    const overtakenMerchant = this.merchants[2]!;
    const [overtaken] = await this.transfersOf(overtakenMerchant, 1, 99, 888);
    if (!(await this.until(10_000, async () => (await this.batchesOf([overtaken!]))[0]?.status === 'uploaded')).ok) throw new Error('the transfer of 3d was not uploaded');
    const beforeWord = await this.balance(overtakenMerchant);
    // Both gathered in one window and sent last-first: the contradiction (RECH) arrives before the real ACEP.
    this.bank.set({ callbacks: { outOfOrder: true, outOfOrderWindowMs: 1_500, contradictNext: 1, contradictAfterMs: 200 } });
    this.bank.decide([overtaken!]);
    this.bank.set({ batchDecision: 'auto' });
    await this.until(10_000, async () => (await this.open([overtaken!])) === 0 && this.bank.sim.pendingCallbacks() === 0);
    this.bank.set({ callbacks: { outOfOrder: false, outOfOrderWindowMs: 300, contradictNext: 0, contradictAfterMs: 500 } });
    const afterWord = await this.balance(overtakenMerchant);
    const [conflict] = await this.conflicts([overtaken!]);
    const bankWord = this.bank.itemsOf([overtaken!])[0]?.item.status;
    this.check('3', "a contradicting callback that overtakes the bank's real one decides the transfer (the service cannot tell which is true); the real word is kept as the item's conflict for reconciliation",
      bankWord === 'ACEP' && conflict?.status === 'FAILED' && conflict.outcome === 'rejected' && conflict.conflicting_outcome === 'accepted',
      `KNOWN GAP: transfer ${overtaken} paid out by the bank (ACEP) but FAILED here, its ${(this.transfers.get(overtaken!)!.amountCentavos / 100).toFixed(2)} BOB back on the merchant's balance (available ${beforeWord.available} → ${afterWord.available}); item ${JSON.stringify(conflict)}; no reconciliation reports it yet and no operator route corrects a settled transfer`);

    // (e) A notifyStatus the bank never sends: nothing else tells the service (the bank has no item status to read).
    this.bank.set({ batchDecision: 'hold' });
    const [silent] = await this.transfersOf(this.merchants[2]!, 1, 99, 777);
    const held = await this.until(10_000, () => this.bank.itemsOf([silent!]).length === 1);
    if (!held.ok) throw new Error('the bank never got the transfer of 3c');
    await this.until(10_000, async () => (await this.batchesOf([silent!]))[0]?.status === 'uploaded');
    this.bank.set({ callbacks: { dropNext: 1 } });
    this.bank.decide([silent!]);
    this.bank.set({ batchDecision: 'auto' });
    await this.scope.sleep(3_000);
    const waiting = (await this.statuses([silent!])).get(silent!);
    const [batch] = await this.batchesOf([silent!]);
    const resolved = await this.resolve(batch!.id, 'COMPLETED'); // the operator asked the bank: accepted
    this.resolutions.set(batch!.id, 'COMPLETED');
    const final = (await this.statuses([silent!])).get(silent!);
    this.check('3', "a dropped notifyStatus leaves its transfer IN_TRANSIT (no status of a batch item can be read at the bank) until the operator resolves the batch with the bank's answer",
      waiting === 'IN_TRANSIT' && resolved.status === 200 && final === 'COMPLETED',
      `transfer ${silent}: ${waiting} 3 s after the bank accepted it and dropped the callback; resolve COMPLETED → ${resolved.status}; now ${final}`);
  }

  // --- 4. kill -9 of the worker between the upload and its answer ----------------------------------

  private async killBetweenUploadAndAnswer(): Promise<void> {
    const merchant = this.merchants[3]!;
    const uploadsBefore = this.bank.count('batchUpload');
    this.bank.set({ batchDecision: 'hold', delays: { batchUpload: UPLOAD_DELAY_MS } });
    let killedAt: number | null = null;
    const victim = this.worker;
    // The simulator logs an upload's answer once it has taken the batch, before it waits to send it: kill then.
    this.bank.onLine = (line) => {
      if (killedAt === null && line.startsWith('POST api/batchPayment/upload → HTTP 200 responseCode 0')) {
        killedAt = Date.now();
        void victim.kill9();
      }
    };
    const ids = await this.transfersOf(merchant, 5, 5, 3_000);
    const killed = await this.until(15_000, () => killedAt !== null && !victim.alive);
    this.bank.onLine = null;
    this.bank.set({ delays: { batchUpload: null } });
    if (!killed.ok) throw new Error('the worker never uploaded the batch of part 4');
    const [first] = await this.batchesOf(ids);
    const heldByBank = first ? this.bank.state().batches.filter((b) => b.batchId === `mps-b-${first.id}`).length : 0;
    this.check('4', 'the worker was killed after the bank took the batch and before its answer: the batch is still uploading',
      first?.status === 'uploading' && heldByBank === 1, `worker pid ${victim.pid} killed; mps-b-${first?.id} ${first?.status}, held by the bank ${heldByBank} time(s), ${first?.transfer_ids.length} transfers`);
    if (!first) throw new Error('no batch written in part 4');

    await this.scope.sleep(500);
    const back = await this.restart('worker');
    this.note(`worker restarted (pid ${this.worker.pid}, banner after ${back} ms); waiting for the batch's longest wait (${UPLOAD_GIVE_UP_MS / 1000} s)`);
    const given = await this.until(UPLOAD_GIVE_UP_MS + 20_000, async () => (await this.batchesOf([first.transfer_ids[0]!]))[0]?.status !== 'uploading');
    const [marked] = await this.batchesOf([first.transfer_ids[0]!]);
    let statuses = await this.statuses(first.transfer_ids);
    this.check('4', `after the restart the batch is marked unknown once its longest wait (3 × BANECO_TIMEOUT + 30 s = ${UPLOAD_GIVE_UP_MS / 1000} s) is over, its transfers IN_TRANSIT`,
      given.ok && marked?.status === 'unknown' && marked.updated_ms >= UPLOAD_GIVE_UP_MS && marked.updated_ms <= UPLOAD_GIVE_UP_MS + 10_000 && first.transfer_ids.every((id) => statuses.get(id) === 'IN_TRANSIT'),
      `marked ${marked?.status} ${((marked?.updated_ms ?? 0) / 1000).toFixed(1)} s after it was written ("${marked?.message}")`);
    // Any transfer of this part the killed worker had not reached went in a later batch, held too.
    this.bank.decide(ids);
    this.bank.set({ batchDecision: 'auto' });
    const settled = await this.until(15_000, async () => (await this.open(ids)) === 0);
    statuses = await this.statuses(ids);
    const disagree = await this.disagreeWithBank(ids);
    const batches = await this.batchesOf(ids);
    const sent = batches.map((b) => this.bank.state().batches.filter((each) => each.batchId === `mps-b-${b.id}`).length);
    this.check('4', "never uploaded again; the bank's callbacks settle its transfers as the bank decided",
      settled.ok && disagree.length === 0 && sent.every((n) => n === 1) && this.bank.count('batchUpload') === uploadsBefore + batches.length,
      `batches ${batches.map((b) => `mps-b-${b.id} ${b.status}`).join(', ')}, each held by the bank ${JSON.stringify(sent)} time(s); upload requests ${uploadsBefore} → ${this.bank.count('batchUpload')}; settled ${settled.ms} ms after the decision${disagree.length ? `; ${list(disagree)}` : ''}`);
  }

  // --- 5. payments while the service is down, the sweep after it -----------------------------------

  private async sweepAfterOutage(): Promise<void> {
    const qrs = (await Promise.all(this.merchants.map(async (m) => [await this.newQr(m, '41.00'), await this.newQr(m, '42.50'), await this.newQr(m, '43.75')]))).flat();
    const attemptsBefore = this.bank.callbacks().length;
    await Promise.all([this.api.kill9(), this.worker.kill9()]);
    const downAt = Date.now();
    const payments = qrs.map((id) => this.payAtBank(id));
    const references = new Set(payments.map((p) => p.transactionId));
    // Every callback tries 1 + 3 times (1, 2, 4 s apart) against a closed port, then the bank gives up.
    const gaveUp = await this.until(30_000, () => this.bank.sim.pendingCallbacks() === 0);
    const tries = this.bank.callbacks().slice(attemptsBefore).filter((c) => c.kind === 'notifyPaymentQR' && references.has((c.body as { payment: { transactionId: string } }).payment.transactionId));
    const lastTries = tries.filter((c) => !c.willRetry);
    this.check('5', 'with the API and the worker down, every payment callback failed 4 times and the bank gave up',
      gaveUp.ok && tries.length === 4 * payments.length && lastTries.length === payments.length && tries.every((c) => c.outcome === 'error' || c.outcome === 'timeout'),
      `${payments.length} payments, ${tries.length} callback tries (${[...new Set(tries.map((c) => c.outcome))].join(', ')}), given up ${((Date.now() - downAt) / 1000).toFixed(1)} s after the stop`);

    // The status reads fail too, so the poll alone cannot catch up: the sweep has to.
    this.bank.set({ faults: { statusQR: { kind: 'http500', times: 'always' } } });
    const [apiMs, workerMs] = await Promise.all([this.restart('api'), this.restart('worker')]);
    await this.scope.sleep(3_000);
    const beforeSweep = await this.paymentsRecorded(qrs);
    this.check('5', 'restarted, with statusQR failing: the poll records none of them', beforeSweep === 0,
      `API ready in ${apiMs} ms, worker in ${workerMs} ms; ${beforeSweep}/${qrs.length} recorded 3 s later`);

    const days = [...new Set(payments.map((p) => p.paymentDate.slice(0, 10)))];
    const cliEnv = { ...this.bank.serviceEnv, DATABASE_URL: this.url, LOG_LEVEL: 'warn' };
    const runs = [];
    for (const day of days) runs.push({ day, run: await runMps(['rails', 'sweep', '--date', day], cliEnv) });
    const recorded = runs.reduce((acc, { run }) => acc + ((run.json as { tally?: { recorded?: number } } | undefined)?.tally?.recorded ?? 0), 0);
    const afterSweep = await this.paymentsRecorded(qrs);
    this.check('5', '`mps rails sweep --date` (the CLI, on the cluster) records every one of them, exit 0',
      runs.every(({ run }) => run.code === 0 && (run.json as { outcome?: string } | undefined)?.outcome === 'swept') && recorded === qrs.length && afterSweep === qrs.length,
      runs.map(({ day, run }) => `${day}: exit ${run.code} in ${run.ms} ms ${JSON.stringify(run.json ?? run.stderr.trim().slice(0, 300))}`).join('; '));

    this.bank.set({ faults: { statusQR: null } });
    await this.scope.sleep(3_000); // the poll reads those QRs (closed within 10 minutes) again: all known
    const again = await runMps(['rails', 'sweep', '--date', days[0]!], cliEnv);
    const rows = await this.db.rows<{ rail_reference: string; n: number }>(
      `select rail_reference, count(*)::int n from qr_payments where rail = 'baneco' and rail_reference = any($1::text[]) group by rail_reference`, [[...references]]);
    const tally = (again.json as { tally?: Record<string, number> } | undefined)?.tally;
    this.check('5', 'the poll back and a second sweep change nothing: each payment recorded exactly once',
      rows.length === references.size && rows.every((r) => r.n === 1) && again.code === 0 && tally?.recorded === 0,
      `${rows.length}/${references.size} payments once each; second sweep exit ${again.code} ${JSON.stringify(tally)}`);
  }

  // --- the whole run, against the bank's own records -----------------------------------------------

  private async verifyAll(): Promise<void> {
    const codes = this.merchants.map((m) => m.businessCode);
    const transferIds = [...this.transfers.keys()];
    const settled = await this.until(15_000, async () => (await this.open(transferIds)) === 0);
    await this.until(15_000, () => this.bank.sim.pendingCallbacks() === 0);
    const state = this.bank.state();

    // Payments: the bank's list ↔ qr_payments, one to one by (rail, rail_reference); the orphans' credit nobody.
    const ourQrs = await this.db.rows<{ id: string; business_code: number; rail_reference: string }>(
      `select id::text, business_code::int, rail_reference from simple_qrs where rail = 'baneco' and rail_reference is not null`);
    const qrByReference = new Map(ourQrs.map((q) => [q.rail_reference, q]));
    const paid = await this.db.rows<{ rail_reference: string; qr_id: string; business_code: number; amount_centavos: number }>(
      `select rail_reference, qr_id::text, business_code::int, amount_centavos::int from qr_payments where rail = 'baneco'`);
    const paidCount = new Map<string, number>();
    for (const p of paid) paidCount.set(p.rail_reference, (paidCount.get(p.rail_reference) ?? 0) + 1);
    const paidByReference = new Map(paid.map((p) => [p.rail_reference, p]));
    const toOurs = state.payments.filter((p) => qrByReference.has(p.qrId));
    const paymentProblems = toOurs.flatMap((p) => {
      const row = paidByReference.get(p.transactionId);
      const qr = qrByReference.get(p.qrId)!;
      if (paidCount.get(p.transactionId) !== 1) return [`bank payment ${p.transactionId} recorded ${paidCount.get(p.transactionId) ?? 0} times`];
      return row!.qr_id === qr.id && row!.amount_centavos === centavos(p.amount) ? [] : [`bank payment ${p.transactionId} recorded on ${row!.qr_id} for ${row!.amount_centavos}`];
    });
    const bankReferences = new Set(state.payments.map((p) => p.transactionId));
    const unknownToBank = paid.filter((p) => !bankReferences.has(p.rail_reference));
    const notOurs = state.payments.filter((p) => !qrByReference.has(p.qrId));
    const unmatched = await this.db.rows<{ rail_reference: string }>(`select rail_reference from bank_unmatched_credits where rail = 'baneco'`);
    const unmatchedSet = new Set(unmatched.map((u) => u.rail_reference));
    const notKept = notOurs.filter((p) => !unmatchedSet.has(p.transactionId) || paidCount.has(p.transactionId));
    this.check('end', "every payment the bank lists for a QR of ours is recorded exactly once (rail, rail_reference), on that QR, with the bank's amount; nothing else is recorded",
      paymentProblems.length === 0 && unknownToBank.length === 0,
      `${toOurs.length} bank payments to our QRs, ${paid.length} recorded${paymentProblems.length ? `; ${list(paymentProblems)}` : ''}${unknownToBank.length ? `; recorded but unknown to the bank: ${list(unknownToBank)}` : ''}`);
    this.check('end', 'every bank payment to a QR not ours is an unmatched credit, once, and no payment',
      notKept.length === 0 && notOurs.length === this.orphanPayments.length && unmatched.length === notOurs.length,
      `${notOurs.length} such payments, ${unmatched.length} unmatched credits${notKept.length ? `; not kept as one: ${list(notKept)}` : ''}`);

    // Transfers: the bank's items ↔ our transfers; none sent twice; the operator's resolutions where the bank said nothing to us.
    const items = this.bank.itemsOf(transferIds);
    const batches = await this.db.rows<{ id: number; status: string; resolution: string | null }>('select id::int, status, resolution from transfer_batches order by id');
    const sentPerBatch = new Map<string, number>();
    for (const b of state.batches) sentPerBatch.set(b.batchId, (sentPerBatch.get(b.batchId) ?? 0) + 1);
    const resent = [...sentPerBatch.entries()].filter(([, n]) => n > 1);
    const itemCount = new Map<number, number>();
    for (const each of items) itemCount.set(each.transferId, (itemCount.get(each.transferId) ?? 0) + 1);
    const twice = [...itemCount.entries()].filter(([, n]) => n > 1);
    const notTaken = batches.filter((b) => !sentPerBatch.has(`mps-b-${b.id}`));
    this.check('end', 'no batch and no transfer was ever sent to the bank twice: one upload request per batch written',
      resent.length === 0 && twice.length === 0 && this.bank.count('batchUpload') === batches.length && notTaken.every((b) => b.status === 'unknown' || b.status === 'refused'),
      `${batches.length} batches written, ${this.bank.count('batchUpload')} upload requests received by the bank, ${state.batches.length} batches it holds (${notTaken.length} it never got: ${notTaken.map((b) => `mps-b-${b.id} ${b.status}`).join(', ') || 'none'})`);

    const statuses = await this.statuses(transferIds);
    const itemOf = new Map(items.map((each) => [each.transferId, each.item]));
    const batchOf = new Map((await this.db.rows<{ transfer_id: number; batch_id: number }>('select transfer_id::int, batch_id::int from transfer_batch_items')).map((r) => [r.transfer_id, r.batch_id]));
    // A transfer decided by a contradicting callback that overtook the bank's real one (3d) differs from the
    // bank, and holds the bank's real word as its conflict: a break kept for reconciliation, reported apart.
    const conflicts = new Map((await this.conflicts(transferIds)).map((c) => [c.transfer_id, c]));
    const breaks: string[] = [];
    const finalProblems = transferIds.flatMap((id) => {
      const word = itemOf.get(id)?.status;
      const resolution = this.resolutions.get(batchOf.get(id) ?? -1);
      const expected = word === 'ACEP' ? 'COMPLETED' : word === 'RECH' ? 'FAILED' : word === undefined ? resolution : undefined;
      if (statuses.get(id) === expected && (resolution === undefined || word === undefined || resolution === expected)) return [];
      const kept = conflicts.get(id)?.conflicting_outcome;
      if (kept !== undefined && kept === (word === 'ACEP' ? 'accepted' : 'rejected') && resolution === undefined) {
        breaks.push(`transfer ${id}: ${statuses.get(id)} here, ${word} at the bank (kept as its conflict)`);
        return [];
      }
      return [`transfer ${id}: ${statuses.get(id)}, bank ${word ?? 'never got it'}, operator ${resolution ?? '-'}`];
    });
    this.check('end', 'every transfer ended COMPLETED or FAILED as the bank decided its item (or, where the bank never got it, as the operator resolved it), but where a kept conflict says otherwise',
      settled.ok && finalProblems.length === 0 && statuses.size === transferIds.length,
      `${transferIds.length} transfers ${JSON.stringify(await this.statusCount(transferIds))}${finalProblems.length ? `; ${list(finalProblems)}` : ''}${breaks.length ? `; breaks kept for reconciliation: ${list(breaks)}` : ''}`);

    // Balances: what the bank took for each merchant's QRs, less what it paid out for its transfers — but
    // for the breaks above, which differ by their amount and are listed.
    const balanceProblems: string[] = [];
    const explained: string[] = [];
    let creditsTotal = 0;
    let debitsTotal = 0;
    for (const merchant of this.merchants) {
      const credits = toOurs.filter((p) => qrByReference.get(p.qrId)!.business_code === merchant.businessCode).reduce((acc, p) => acc + centavos(p.amount), 0);
      const own = transferIds.filter((id) => this.transfers.get(id)!.businessCode === merchant.businessCode);
      const debits = own.filter((id) => itemOf.get(id)?.status === 'ACEP' || (itemOf.get(id) === undefined && this.resolutions.get(batchOf.get(id) ?? -1) === 'COMPLETED'))
        .reduce((acc, id) => acc + this.transfers.get(id)!.amountCentavos, 0);
      // A break: the service's debit differs from the bank's by the transfer's amount.
      const breakDelta = own.filter((id) => conflicts.has(id) && statuses.get(id) !== (itemOf.get(id)?.status === 'ACEP' ? 'COMPLETED' : 'FAILED'))
        .reduce((acc, id) => acc + (statuses.get(id) === 'FAILED' ? 1 : -1) * this.transfers.get(id)!.amountCentavos, 0);
      creditsTotal += credits;
      debitsTotal += debits;
      const balance = await this.balance(merchant);
      if (breakDelta !== 0) explained.push(`merchant ${merchant.businessCode}: ${breakDelta > 0 ? '+' : ''}${breakDelta} centavos against the bank`);
      if (balance.available !== credits - debits + breakDelta || balance.pendingOut !== 0) {
        balanceProblems.push(`merchant ${merchant.businessCode}: available ${balance.available}, pending_out ${balance.pendingOut}; the bank says ${credits} in − ${debits} out = ${credits - debits}${breakDelta ? `, ${breakDelta} by kept breaks` : ''}`);
      }
    }
    this.check('end', "every merchant's balance is what the bank took for its QRs less what it paid out for its transfers (nothing credited or returned twice), but for the kept breaks",
      balanceProblems.length === 0, `${balanceProblems.length ? list(balanceProblems) : `${this.merchants.length} merchants: ${(creditsTotal / 100).toFixed(2)} BOB in, ${(debitsTotal / 100).toFixed(2)} BOB out`}${explained.length ? `; kept breaks: ${explained.join(', ')}` : ''}`);

    await checkMovementsAndEvents(this.db, codes, this.ctx.report, this.ctx.name);
    const ledger = await ledgerCheck(this.api.baseUrl, this.ctx.adminToken);
    this.check('end', 'ledger check passes', ledger.ok, `${ledger.balances_checked} balances checked${ledger.ok ? '' : `; ${JSON.stringify(ledger.violations).slice(0, 400)}`}`);

    // What the service answered the bank and the clients.
    const answered = this.bank.callbacks().filter((c) => c.outcome === 'answered');
    const badAnswers = answered.filter((c) => !(c.httpStatus === 200 && c.acknowledged) && c.httpStatus !== 503);
    this.check('end', 'every callback the service answered was HTTP 200 responseCode 0 (or 503 to be called again)', badAnswers.length === 0,
      `${answered.length} answered: ${JSON.stringify(answered.reduce<Record<string, number>>((acc, c) => ({ ...acc, [`${c.httpStatus}${c.acknowledged ? '/0' : ''}`]: (acc[`${c.httpStatus}${c.acknowledged ? '/0' : ''}`] ?? 0) + 1 }), {}))}${badAnswers.length ? `; ${list(badAnswers.map((c) => `${c.kind} → ${c.httpStatus} ${JSON.stringify(c.answer)}`))}` : ''}`);
    const { 503: allowed503, 502: allowed502 } = this.allowed5xx;
    this.check('end', 'the API answered no 5xx but the 503s and 502 part 1 asked the bank for, and every request got an answer',
      this.tally.count('503') === allowed503 && this.tally.count('502') === allowed502 && this.tally.errors5xx() === allowed502 && this.tally.count('none') === 0,
      `${this.tally.requests} requests (${this.tally.describe()}); part 1 made ${allowed503} × 503 and ${allowed502} × 502${this.tally.samples5xx.length ? `; ${this.tally.samples5xx.join(' | ')}` : ''}`);
    this.figure('bank calls received', [...this.bank.requests.entries()].map(([op, n]) => `${op} ${n}`).join(', '));
    this.fleet.checkNoCrash(this.ctx.report);
  }
}
