// Scenario `kill`: kill -9 of the API process and of a worker process under a retrying load of QR payments and transfers; nothing acknowledged may be lost or doubled.
import { Acks, ledgerCheck, MoneyClient } from '../api.ts';
import { runLoops, Tally } from '../load.ts';
import type { Scope } from '../scope.ts';
import { prepareMerchants, scenarioRig, type ScenarioContext } from '../setup.ts';
import type { ServiceProcess } from '../service.ts';
import { checkAcknowledged, checkEventsDelivered, checkMovementsAndEvents, ScratchDb, waitSettled } from '../verify.ts';

const MERCHANTS = 6;
/** Two clients per merchant, so transfers of one merchant race on its balance row. */
const CLIENTS = 12;
const ROUNDS = Number(process.env.FAULTS_KILL_ROUNDS ?? 2);
/**
 * A delivery claimed by a worker that is then killed stays leased for WEBHOOK_TIMEOUT (2 s) + 60 s
 * (src/webhooks/dispatcher.ts LEASE_MARGIN_MS) before another worker may retry it: the bound is that plus slack.
 */
const DELIVERY_BOUND_MS = 90_000;
const SETTLE_BOUND_MS = 30_000;

export const killScenario = {
  name: 'kill',
  summary: 'kill -9 of the API (ROLE=api) and of a worker (ROLE=worker) under retrying load; restart; nothing acknowledged lost or doubled',
  timeoutMs: () => 6 * 60_000 + ROUNDS * 30_000,
  async run(ctx: ScenarioContext, scope: Scope): Promise<void> {
    const { report, name } = ctx;
    const { url, receiver, fleet } = await scenarioRig(ctx, scope);

    let api: ServiceProcess = await fleet.start('api', 'api');
    await api.waitStarted(60_000); // the first process applies the migrations
    let worker: ServiceProcess = await fleet.start('worker', 'worker');
    await worker.waitStarted(60_000);
    const merchants = await prepareMerchants(api.baseUrl, ctx, receiver, MERCHANTS);
    const codes = merchants.map((m) => m.businessCode);

    const acks = new Acks();
    const tally = new Tally();
    const client = new MoneyClient({ baseUrl: () => api.baseUrl, scope, acks, onExchange: (e) => tally.add(e) });
    const loops = runLoops(CLIENTS, scope, (loop, round) => client.round(merchants[loop % MERCHANTS]!, round));

    const restartMs: { api: number[]; worker: number[] } = { api: [], worker: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      await scope.sleep(4_000);
      const lostBefore = tally.count('none');
      await api.kill9();
      report.note(name, `round ${round}: kill -9 API pid ${api.pid}`);
      await scope.sleep(500);
      api = fleet.restart(api);
      restartMs.api.push(await api.waitStarted(60_000) + 500);
      await scope.sleep(4_000);
      report.note(name, `round ${round}: API back after ${restartMs.api.at(-1)} ms; ${tally.count('none') - lostBefore} answers lost meanwhile; kill -9 worker pid ${worker.pid}`);
      await worker.kill9();
      await scope.sleep(500);
      worker = fleet.restart(worker);
      restartMs.worker.push(await worker.waitStarted(60_000) + 500);
    }
    await scope.sleep(4_000);
    await loops.stop();
    const loadEnded = Date.now();

    report.figure(name, 'kill rounds (API + worker each)', ROUNDS);
    report.figure(name, 'requests', `${tally.requests} (${tally.describe()})`);
    report.figure(name, 'lost answers by kind', `${tally.describeLost()}; ${tally.replayed} idempotent replays`);
    report.figure(name, 'acknowledged', `${acks.qrs.size} QRs, ${acks.payments.size} payments, ${acks.transfers.size} transfers`);
    report.figure(name, 'kill → restarted (ms; API: /readyz 200, worker: start banner)', `API ${restartMs.api.join(', ')}; worker ${restartMs.worker.join(', ')}`);
    report.check(name, 'no 5xx other than 503', tally.errors5xx() === 0, tally.samples5xx.join(' | '));

    const db = await ScratchDb.open(url);
    scope.defer('close harness connection', () => db.close());
    const settled = await waitSettled(db, codes, SETTLE_BOUND_MS, scope);
    report.check(name, `every transfer settled by the sandbox rail within ${SETTLE_BOUND_MS / 1000} s`, settled.open === 0, `${settled.open} still open after ${settled.ms} ms`);
    await checkAcknowledged(db, acks, codes, report, name);
    await checkMovementsAndEvents(db, codes, report, name);
    const ledger = await ledgerCheck(api.baseUrl, ctx.adminToken);
    report.check(name, 'ledger check passes', ledger.ok, `${ledger.balances_checked} balances checked${ledger.ok ? '' : `; ${JSON.stringify(ledger.violations).slice(0, 400)}`}`);
    await checkEventsDelivered(db, receiver, codes, DELIVERY_BOUND_MS, report, name, scope, loadEnded);
    fleet.checkNoCrash(report);
  },
};
