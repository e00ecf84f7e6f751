// Scenario `webhook-receiver`: the receiver answers 500, then refuses connections, then is slower than WEBHOOK_TIMEOUT, then recovers; every event still arrives and memory stays bounded.
import { Acks, ledgerCheck, MoneyClient } from '../api.ts';
import { runLoops, Tally } from '../load.ts';
import type { ReceiverMode } from '../receiver.ts';
import type { Scope } from '../scope.ts';
import { prepareMerchants, scenarioRig, type ScenarioContext } from '../setup.ts';
import { mib, RssSampler, summarize } from '../stats.ts';
import { checkAcknowledged, checkEventsDelivered, checkMovementsAndEvents, ScratchDb, waitSettled } from '../verify.ts';

const PHASES: Array<{ mode: ReceiverMode; ms: number }> = [
  { mode: 'ok', ms: 5_000 },
  { mode: 'error500', ms: 10_000 },
  { mode: 'closed', ms: 10_000 },
  { mode: 'slow', ms: 10_000 },
];
/** The receiver's slow answers come after this; the service gives up at WEBHOOK_TIMEOUT = 1 s. */
const SLOW_MS = 3_000;
const DELIVERY_BOUND_MS = 60_000;
/**
 * Memory rule: baseline = median VmRSS of the first healthy phase under load. Unbounded growth fails:
 * the peak over the whole scenario must stay ≤ 2 × baseline, and once everything is delivered the RSS
 * (median of the last 5 samples) must be ≤ 1.5 × baseline.
 */
const PEAK_FACTOR = 2;
const END_FACTOR = 1.5;

export const webhookReceiverScenario = {
  name: 'webhook-receiver',
  summary: 'receiver answers 500, then refuses connections, then is slower than WEBHOOK_TIMEOUT, then recovers: every event arrives, memory bounded',
  timeoutMs: () => 5 * 60_000,
  async run(ctx: ScenarioContext, scope: Scope): Promise<void> {
    const { report, name } = ctx;
    const { url, receiver, fleet } = await scenarioRig(ctx, scope);
    receiver.slowMs = SLOW_MS;
    const service = await fleet.start('all', 'all', { WEBHOOK_TIMEOUT: '1s' });
    await service.waitStarted(60_000);
    const merchants = await prepareMerchants(service.baseUrl, ctx, receiver, 4);
    const codes = merchants.map((m) => m.businessCode);

    const rss = new RssSampler(() => service).start();
    scope.defer('stop RSS sampling', () => rss.stop());
    const acks = new Acks();
    const tally = new Tally();
    const client = new MoneyClient({ baseUrl: () => service.baseUrl, scope, acks, onExchange: (e) => tally.add(e) });
    const loops = runLoops(4, scope, async (loop, round) => {
      await client.round(merchants[loop]!, round);
      await scope.sleep(50);
    });

    const phaseTimes: Array<{ mode: ReceiverMode; from: number; to: number }> = [];
    for (const phase of PHASES) {
      await receiver.setMode(phase.mode);
      const from = Date.now();
      report.note(name, `receiver: ${phase.mode} for ${phase.ms / 1000} s`);
      await scope.sleep(phase.ms);
      phaseTimes.push({ mode: phase.mode, from, to: Date.now() });
    }
    await receiver.setMode('ok');
    const healthyAt = Date.now();
    report.note(name, 'receiver: ok again');
    await scope.sleep(5_000);
    await loops.stop();

    report.figure(name, 'requests', `${tally.requests} (${tally.describe()})`);
    report.check(name, 'no 5xx and no lost answer on the API', tally.errors5xx() === 0 && tally.count('none') === 0 && tally.count('503') === 0, tally.describe());
    const db = await ScratchDb.open(url);
    scope.defer('close harness connection', () => db.close());
    await waitSettled(db, codes, 30_000, scope);
    await checkAcknowledged(db, acks, codes, report, name);
    await checkMovementsAndEvents(db, codes, report, name);
    await checkEventsDelivered(db, receiver, codes, DELIVERY_BOUND_MS, report, name, scope);
    const drainedAfter = Date.now() - healthyAt;

    // Each failure mode was really met by the service's attempts (not skipped by timing).
    const attempts = await db.rows<{ outcome: string; n: number }>(`
      select case when status_code is not null then status_code::text
                  when error ilike '%refused%' then 'connection refused'
                  when error ilike '%timeout%' or error ilike '%timed out%' then 'timeout'
                  else coalesce(left(error, 60), 'null') end as outcome, count(*)::int n
      from webhook_attempts group by 1 order by 2 desc`);
    const byOutcome = new Map(attempts.map((a) => [a.outcome, a.n]));
    report.figure(name, 'delivery attempts by outcome', attempts.map((a) => `${a.outcome}: ${a.n}`).join(', '));
    report.figure(name, 'receiver requests by mode', JSON.stringify(receiver.requestsByMode));
    report.check(name, 'each failure mode was met by delivery attempts (500, refused, timeout)',
      (byOutcome.get('500') ?? 0) > 0 && (byOutcome.get('connection refused') ?? 0) > 0 && (byOutcome.get('timeout') ?? 0) > 0,
      `500: ${byOutcome.get('500') ?? 0}, refused: ${byOutcome.get('connection refused') ?? 0}, timeout: ${byOutcome.get('timeout') ?? 0}`);

    await scope.sleep(5_000); // a few samples after the drain
    rss.stop();
    const first = phaseTimes[0]!;
    const baseline = summarize(rss.between(first.from, first.to)).p50;
    const all = summarize(rss.samples.map((s) => s.kib));
    const end = summarize(rss.samples.slice(-5).map((s) => s.kib)).p50;
    const perPhase = phaseTimes.map((p) => `${p.mode} max ${mib(summarize(rss.between(p.from, p.to)).max).toFixed(0)}`).join(', ');
    report.figure(name, 'RSS (MiB)', `min ${mib(all.min).toFixed(0)}, max ${mib(all.max).toFixed(0)}, baseline ${mib(baseline).toFixed(0)}, end ${mib(end).toFixed(0)}; ${perPhase}; ${rss.samples.length} samples`);
    report.figure(name, 'every event delivered after the receiver recovered (s; the load ran 5 s more)', (drainedAfter / 1000).toFixed(1));
    report.check(name, `memory bounded: peak ≤ ${PEAK_FACTOR} × baseline and end ≤ ${END_FACTOR} × baseline`,
      Number.isFinite(baseline) && all.max <= PEAK_FACTOR * baseline && end <= END_FACTOR * baseline,
      `peak ${(all.max / baseline).toFixed(2)} ×, end ${(end / baseline).toFixed(2)} ×`);
    const ledger = await ledgerCheck(service.baseUrl, ctx.adminToken);
    report.check(name, 'ledger check passes', ledger.ok, `${ledger.balances_checked} balances checked`);
    fleet.checkNoCrash(report);
  },
};
