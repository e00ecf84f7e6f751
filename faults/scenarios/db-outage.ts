// Scenario `db-outage`: PostgreSQL stopped (immediate) for 10 s under load, then started; and the service started while PostgreSQL is down.
import { Acks, ledgerCheck, MoneyClient } from '../api.ts';
import { describe, request, type Exchange } from '../http.ts';
import { runLoops, Tally } from '../load.ts';
import type { Scope } from '../scope.ts';
import { prepareMerchants, scenarioRig, type ScenarioContext } from '../setup.ts';
import { checkAcknowledged, checkEventsDelivered, checkMovementsAndEvents, ScratchDb, waitSettled } from '../verify.ts';

const OUTAGE_MS = 10_000;
/** No request may take longer than this, outage or not (the client gives up at 20 s and counts a hang). */
const HANG_BOUND_MS = 15_000;
/** After PostgreSQL accepts connections again, writes must succeed within this, without a restart. */
const RECOVERY_BOUND_MS = 15_000;
const COLD_START_BOUND_MS = 30_000;
/**
 * Counted from the end of the load. A delivery claimed just before the stop whose result could not be
 * written stays leased for WEBHOOK_TIMEOUT (2 s) + 60 s (src/webhooks/dispatcher.ts LEASE_MARGIN_MS)
 * before it is sent again: the bound is that lease plus slack, as in the kill scenario.
 */
const DELIVERY_BOUND_MS = 90_000;
/** How long the database stays down after the service started without it. */
const COLD_HOLD_MS = 5_000;

/** Polls one path every 250 ms and keeps every answer. */
function probe(baseUrl: () => string, path: string, scope: Scope): { results: Exchange[]; stop(): Promise<void> } {
  const results: Exchange[] = [];
  let stopping = false;
  const done = (async () => {
    while (!stopping && !scope.aborted) {
      results.push(await request(baseUrl(), 'GET', path, { timeoutMs: 20_000 }));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return { results, async stop() { stopping = true; await done; } };
}

const hasRetryAfter = (e: Exchange) => e.status === 503 && Boolean(e.headers?.get('retry-after'));

export const dbOutageScenario = {
  name: 'db-outage',
  summary: 'PostgreSQL stopped (immediate) for 10 s under load and started again; then the service started while PostgreSQL is down',
  timeoutMs: () => 5 * 60_000,
  async run(ctx: ScenarioContext, scope: Scope): Promise<void> {
    const { report, name, cluster } = ctx;
    scope.defer('PostgreSQL running again', async () => { if (!cluster.running) await cluster.start(); });
    const { url, receiver, fleet } = await scenarioRig(ctx, scope);
    const service = await fleet.start('all', 'all');
    await service.waitStarted(60_000);
    const merchants = await prepareMerchants(service.baseUrl, ctx, receiver, 4);
    const codes = merchants.map((m) => m.businessCode);

    // --- Part 1: outage under load -------------------------------------------------------------
    const acks = new Acks();
    const exchanges: Exchange[] = [];
    const tally = new Tally();
    const record = (e: Exchange) => { exchanges.push(e); tally.add(e); };
    const client = new MoneyClient({ baseUrl: () => service.baseUrl, scope, acks, onExchange: record, retryDelayMs: 250, operationBoundMs: 90_000 });
    const writers = runLoops(8, scope, (loop, round) => client.round(merchants[loop % merchants.length]!, round));
    const readers = runLoops(2, scope, async (loop) => {
      record(await request(service.baseUrl, 'GET', '/api/v2/balance', { route: 'GET /api/v2/balance', apiKey: merchants[loop]!.apiKey }));
      await scope.sleep(200);
    });
    const health = probe(() => service.baseUrl, '/healthz', scope);
    const readiness = probe(() => service.baseUrl, '/readyz', scope);

    await scope.sleep(5_000);
    const stopAt = Date.now();
    await cluster.stop('immediate');
    const stoppedAt = Date.now();
    report.note(name, `PostgreSQL stopped (pg_ctl stop -m immediate took ${stoppedAt - stopAt} ms)`);
    await scope.sleep(OUTAGE_MS);
    const startAt = Date.now();
    await cluster.start();
    const startedAt = Date.now();
    report.note(name, `PostgreSQL started again after ${((startAt - stoppedAt) / 1000).toFixed(1)} s down (pg_ctl start took ${startedAt - startAt} ms)`);
    await scope.sleep(10_000);
    await writers.stop();
    const loadEnded = Date.now();
    await readers.stop();
    await health.stop();
    await readiness.stop();

    const during = exchanges.filter((e) => e.sentAt >= stoppedAt && e.endedAt <= startAt);
    const wrongDuring = during.filter((e) => !hasRetryAfter(e));
    report.figure(name, 'requests', `${tally.requests} (${tally.describe()})`);
    report.check(name, 'during the outage every answer is 503 with Retry-After', during.length > 0 && wrongDuring.length === 0,
      `${during.length} answers sent and received while down, ${wrongDuring.length} otherwise${wrongDuring.length ? `: ${wrongDuring.slice(0, 5).map(describe).join('; ')}` : ''}`);
    report.check(name, 'no 5xx other than 503, and no lost answer, at any time', tally.errors5xx() === 0 && tally.count('none') === 0,
      `${tally.errors5xx()} 5xx, ${tally.count('none')} without answer${tally.samples5xx.length ? `: ${tally.samples5xx.join(' | ')}` : ''}${tally.count('none') ? `: ${exchanges.filter((e) => e.status === null).slice(0, 3).map(describe).join('; ')}` : ''}`);
    const maxDuring = Math.max(0, ...during.map((e) => e.ms));
    const overlapping = exchanges.filter((e) => e.endedAt >= stoppedAt && e.sentAt <= startedAt);
    const maxOverlapping = Math.max(0, ...overlapping.map((e) => e.ms));
    report.figure(name, 'max latency (ms)', `${maxOverlapping.toFixed(0)} for requests overlapping the outage, ${maxDuring.toFixed(0)} sent and answered within it, ${tally.maxMs.toFixed(0)} overall`);
    report.check(name, `no request took longer than ${HANG_BOUND_MS / 1000} s`, tally.maxMs <= HANG_BOUND_MS, `max ${tally.maxMs.toFixed(0)} ms`);

    const badHealth = health.results.filter((e) => e.status !== 200);
    report.check(name, '/healthz answered 200 throughout', health.results.length > 0 && badHealth.length === 0,
      `${health.results.length} probes, max ${Math.max(0, ...health.results.map((e) => e.ms)).toFixed(0)} ms${badHealth.length ? `; ${badHealth.slice(0, 3).map(describe).join('; ')}` : ''}`);
    const readyDuring = readiness.results.filter((e) => e.sentAt >= stoppedAt && e.endedAt <= startAt);
    report.check(name, '/readyz answered 503 with Retry-After while down', readyDuring.length > 0 && readyDuring.every(hasRetryAfter),
      `${readyDuring.length} probes: ${[...new Set(readyDuring.map((e) => e.status ?? e.error))].join(',')}`);
    report.check(name, 'the process never exited', service.alive && fleet.unplannedExits().length === 0, service.alive ? `pid ${service.pid} alive` : `exited: ${service.exit?.code ?? service.exit?.signal}`);

    const firstWrite = exchanges.filter((e) => e.method === 'POST' && e.sentAt >= startedAt && e.status !== null && e.status < 300).sort((a, b) => a.endedAt - b.endedAt)[0];
    const firstReady = readiness.results.find((e) => e.sentAt >= startedAt && e.status === 200);
    const recoveryMs = firstWrite ? firstWrite.endedAt - startedAt : Infinity;
    report.figure(name, 'recovery after PostgreSQL accepts connections (ms)', `first successful write ${Number.isFinite(recoveryMs) ? recoveryMs : 'never'}, /readyz 200 after ${firstReady ? firstReady.endedAt - startedAt : 'never'}`);
    report.check(name, `writes succeed again within ${RECOVERY_BOUND_MS / 1000} s without a restart`, recoveryMs <= RECOVERY_BOUND_MS, `${recoveryMs} ms`);

    // If it died, a fresh process serves the verification (the failure is already recorded above), so the
    // run still tells whether anything acknowledged was lost.
    let verifier = service;
    if (!service.alive) {
      report.note(name, `the service died (${service.exit?.code ?? service.exit?.signal}); starting another process for the verification`);
      verifier = fleet.restart(service);
      await verifier.waitStarted(60_000);
    }
    const db = await ScratchDb.open(url);
    scope.defer('close harness connection', () => db.close());
    const settled = await waitSettled(db, codes, 30_000, scope);
    report.check(name, 'every transfer settled after the outage', settled.open === 0, `${settled.open} still open after ${settled.ms} ms`);
    await checkAcknowledged(db, acks, codes, report, name);
    await checkMovementsAndEvents(db, codes, report, name);
    const ledger = await ledgerCheck(verifier.baseUrl, ctx.adminToken);
    report.check(name, 'ledger check passes', ledger.ok, `${ledger.balances_checked} balances checked`);
    await checkEventsDelivered(db, receiver, codes, DELIVERY_BOUND_MS, report, name, scope, loadEnded);
    await db.close();

    // --- Part 2: start while the database is down ----------------------------------------------
    await verifier.stop();
    await cluster.stop('immediate');
    const cold = await fleet.start('cold-start', 'all');
    let healthyAfter: number | null = null;
    try {
      healthyAfter = await cold.waitStarted(COLD_START_BOUND_MS, { ready: false, banner: false });
    } catch (error) {
      report.check(name, 'started with the database down: /healthz 200', false, (error as Error).message.split('\n').slice(0, 6).join(' | '));
    }
    if (healthyAfter !== null) {
      report.check(name, 'started with the database down: /healthz 200', true, `after ${healthyAfter} ms`);
      const ready = await request(cold.baseUrl, 'GET', '/readyz');
      report.check(name, 'started with the database down: /readyz 503 with Retry-After', hasRetryAfter(ready), describe(ready));
      const api = await request(cold.baseUrl, 'GET', '/api/v2/balance', { apiKey: merchants[0]!.apiKey });
      report.check(name, 'started with the database down: API 503 with Retry-After', hasRetryAfter(api), describe(api));
      // It must also stay up while the database stays away (its start-up keeps waiting, it does not give up).
      const hold = probe(() => cold.baseUrl, '/healthz', scope);
      await scope.sleep(COLD_HOLD_MS);
      await hold.stop();
      const bad = hold.results.filter((e) => e.status !== 200);
      report.check(name, `started with the database down: alive and /healthz 200 for ${COLD_HOLD_MS / 1000} s more`, cold.alive && bad.length === 0,
        `${hold.results.length} probes${bad.length ? `; ${bad.slice(0, 3).map(describe).join('; ')}` : ''}`);
    }
    await cluster.start();
    const upAt = Date.now();
    let readyAfter: number | null = null;
    while (Date.now() - upAt < COLD_START_BOUND_MS && cold.alive) {
      const ready = await request(cold.baseUrl, 'GET', '/readyz', { timeoutMs: 5_000 });
      if (ready.status === 200) { readyAfter = Date.now() - upAt; break; }
      await scope.sleep(200);
    }
    report.check(name, `after PostgreSQL starts, /readyz 200 within ${COLD_START_BOUND_MS / 1000} s`, readyAfter !== null, `${readyAfter ?? 'never'} ms${cold.alive ? '' : ' (process exited)'}`);
    if (readyAfter !== null) {
      const coldAcks = new Acks();
      const coldClient = new MoneyClient({ baseUrl: () => cold.baseUrl, scope, acks: coldAcks, operationBoundMs: 30_000 });
      for (const [n, merchant] of merchants.entries()) await coldClient.round(merchant, n);
      report.check(name, 'after PostgreSQL starts, it serves: QR, payment and transfer acknowledged', coldAcks.payments.size === merchants.length && coldAcks.transfers.size === merchants.length && coldAcks.problems.length === 0 && coldAcks.unanswered.length === 0,
        `${coldAcks.qrs.size} QRs, ${coldAcks.payments.size} payments, ${coldAcks.transfers.size} transfers${[...coldAcks.problems, ...coldAcks.unanswered].slice(0, 3).map((p) => `; ${p}`).join('')}`);
      const db2 = await ScratchDb.open(url);
      scope.defer('close harness connection', () => db2.close());
      await waitSettled(db2, codes, 30_000, scope);
      // Its workers run too: the new events reach the receiver (the listener came up after the database).
      await checkEventsDelivered(db2, receiver, codes, 30_000, report, name, scope, Date.now(), ' (after the cold start)');
    }
    fleet.checkNoCrash(report);
  },
};
