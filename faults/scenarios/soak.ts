// Scenario `soak`: mixed traffic for FAULTS_SOAK_MINUTES; per minute RSS, p50/p99 latency and request count must stay flat.
import { Acks, ledgerCheck, MoneyClient, type Merchant } from '../api.ts';
import { request, type Exchange } from '../http.ts';
import { runLoops, Tally } from '../load.ts';
import type { Scope } from '../scope.ts';
import { prepareMerchants, scenarioRig, type ScenarioContext } from '../setup.ts';
import { HeapSampler, mib, RssSampler, slope, summarize } from '../stats.ts';
import { checkAcknowledged, checkEventsDelivered, checkMovementsAndEvents, ScratchDb, waitSettled } from '../verify.ts';

const MINUTES = Math.max(1, Math.round(Number(process.env.FAULTS_SOAK_MINUTES ?? 10)));
const POS_CLIENTS = Number(process.env.FAULTS_SOAK_CLIENTS ?? 8);
/**
 * Flatness rule (2-core noisy machine): against the reference minute (the second; the first when the
 * soak is shorter than 3 minutes, since minute 1 holds the warm-up), the last minute's median RSS must
 * be ≤ 1.5 × and its p99 latency ≤ 3 ×, and its request count ≥ 0.5 × (the service did not slow down
 * to keep latency flat).
 */
const RSS_FACTOR = 1.5;
const P99_FACTOR = 3;
const COUNT_FACTOR = 0.5;
const EXPECTED = new Set([200, 201, 304]);

interface Minute { latencies: number[]; count: number; unexpected: number }

export const soakScenario = {
  name: 'soak',
  summary: `mixed traffic (QR create, polling with If-None-Match, payments, transfers, lists, webhooks) for FAULTS_SOAK_MINUTES (${MINUTES}); per-minute RSS and latency stay flat`,
  timeoutMs: () => (MINUTES + 5) * 60_000,
  async run(ctx: ScenarioContext, scope: Scope): Promise<void> {
    const { report, name } = ctx;
    const { url, receiver, fleet } = await scenarioRig(ctx, scope);
    const service = await fleet.start('all', 'all');
    await service.waitStarted(60_000);
    const merchants = await prepareMerchants(service.baseUrl, ctx, receiver, POS_CLIENTS);
    const codes = merchants.map((m) => m.businessCode);

    const started = Date.now();
    const minutes: Minute[] = Array.from({ length: MINUTES }, () => ({ latencies: [], count: 0, unexpected: 0 }));
    const tally = new Tally();
    const unexpectedSamples: string[] = [];
    const record = (e: Exchange) => {
      tally.add(e);
      const minute = minutes[Math.floor((e.endedAt - started) / 60_000)];
      if (!minute) return;
      minute.count++;
      minute.latencies.push(e.ms);
      if (e.status === null || !EXPECTED.has(e.status)) {
        minute.unexpected++;
        if (unexpectedSamples.length < 10) unexpectedSamples.push(`${e.route} → ${e.status ?? e.error}`);
      }
    };
    const rss = new RssSampler(() => service).start();
    scope.defer('stop RSS sampling', () => rss.stop());
    const heap = new HeapSampler(() => service.baseUrl).start();
    scope.defer('stop heap sampling', () => heap.stop());
    const acks = new Acks();
    const client = new MoneyClient({ baseUrl: () => service.baseUrl, scope, acks, onExchange: record });
    const get = async (merchant: Merchant, path: string, route: string, etag?: string) => {
      const e = await request(service.baseUrl, 'GET', path, { route, apiKey: merchant.apiKey, headers: etag ? { 'If-None-Match': etag } : {} });
      record(e);
      return e;
    };

    // A POS terminal: show a QR, poll it with its ETag (304s) while the payer pays, see it PAID; pay out now and then.
    const pos = runLoops(POS_CLIENTS, scope, async (loop, round) => {
      const merchant = merchants[loop]!;
      const qrId = await client.createQr(merchant, '10.00');
      if (!qrId) return;
      let etag = (await get(merchant, `/api/v2/simple-qrs/${qrId}`, 'GET /api/v2/simple-qrs/:id')).headers?.get('etag') ?? undefined;
      for (let poll = 0; poll < 3; poll++) {
        await scope.sleep(200);
        await get(merchant, `/api/v2/simple-qrs/${qrId}`, 'GET /api/v2/simple-qrs/:id', etag);
      }
      await client.payQr(merchant, qrId);
      etag = (await get(merchant, `/api/v2/simple-qrs/${qrId}`, 'GET /api/v2/simple-qrs/:id', etag)).headers?.get('etag') ?? etag;
      if (round % 2 === 1) await client.createTransfer(merchant, 300 + (round % 4) * 100, round % 16 === 15);
      await scope.sleep(200);
    });
    // A back office: the list endpoints.
    const lists = ['/api/v2/simple-qrs?per_page=20', '/api/v2/simple-qrs?status=PAID&per_page=5', '/api/v2/transfers?per_page=20',
      '/api/v2/balance/movements?per_page=20', '/api/v2/events?per_page=20', '/api/v2/balance'];
    const office = runLoops(2, scope, async (loop, round) => {
      const path = lists[round % lists.length]!;
      await get(merchants[(loop + round) % merchants.length]!, path, `GET ${path.split('?')[0]}${path.includes('status=') ? '?status' : ''}`);
      await scope.sleep(250);
    });

    for (let m = 1; m <= MINUTES; m++) {
      await scope.sleep(started + m * 60_000 - Date.now());
      const minute = minutes[m - 1]!;
      const l = summarize(minute.latencies);
      const r = summarize(rss.between(started + (m - 1) * 60_000, started + m * 60_000));
      const h = summarize(heap.between(started + (m - 1) * 60_000, started + m * 60_000).map((s) => s.heapUsedMiB));
      report.note(name, `minute ${m}: ${minute.count} requests, p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, RSS median ${mib(r.p50).toFixed(0)} MiB (max ${mib(r.max).toFixed(0)}), JS heap used ${h.min.toFixed(0)}–${h.max.toFixed(0)} MiB, unexpected ${minute.unexpected}`);
    }
    await pos.stop();
    await office.stop();
    rss.stop();
    heap.stop();

    const table = minutes.map((minute, i) => {
      const l = summarize(minute.latencies);
      const r = summarize(rss.between(started + i * 60_000, started + (i + 1) * 60_000));
      return { minute: i + 1, count: minute.count, p50: l.p50, p99: l.p99, rss: r.p50, rssMax: r.max, unexpected: minute.unexpected };
    });
    report.figure(name, 'per minute (requests / p50 ms / p99 ms / RSS median MiB)', table.map((t) => `${t.minute}: ${t.count} / ${t.p50.toFixed(1)} / ${t.p99.toFixed(1)} / ${mib(t.rss).toFixed(0)}`).join('; '));
    report.figure(name, 'requests', `${tally.requests} (${tally.describe()})`);
    // Not a check, a trend to watch: the growth of RSS per minute after the warm-up minute.
    const after = rss.samples.filter((s) => s.atMs >= started + 60_000).map((s): [number, number] => [(s.atMs - started) / 60_000, mib(s.kib)]);
    const heapAfter = heap.samples.filter((s) => s.atMs >= started + 60_000).map((s): [number, number] => [(s.atMs - started) / 60_000, s.heapUsedMiB]);
    report.figure(name, 'memory trend after minute 1 (MiB per minute, least squares)', `RSS ${slope(after).toFixed(2)}, JS heap used ${slope(heapAfter).toFixed(2)}`);
    const reference = table[MINUTES >= 3 ? 1 : 0]!;
    const last = table[MINUTES - 1]!;
    report.check(name, `RSS flat: last minute ≤ ${RSS_FACTOR} × minute ${reference.minute}`, last.rss <= RSS_FACTOR * reference.rss,
      `${mib(last.rss).toFixed(0)} vs ${mib(reference.rss).toFixed(0)} MiB (${(last.rss / reference.rss).toFixed(2)} ×)`);
    report.check(name, `p99 flat: last minute ≤ ${P99_FACTOR} × minute ${reference.minute}`, last.p99 <= P99_FACTOR * reference.p99,
      `${last.p99.toFixed(1)} vs ${reference.p99.toFixed(1)} ms (${(last.p99 / reference.p99).toFixed(2)} ×)`);
    report.check(name, `throughput flat: last minute ≥ ${COUNT_FACTOR} × minute ${reference.minute}`, last.count >= COUNT_FACTOR * reference.count,
      `${last.count} vs ${reference.count} requests`);
    report.check(name, 'every answer was 200/201/304 (no 5xx, no lost answer, no refusal)', table.every((t) => t.unexpected === 0), unexpectedSamples.join(' | '));

    const db = await ScratchDb.open(url);
    scope.defer('close harness connection', () => db.close());
    await waitSettled(db, codes, 30_000, scope);
    await checkAcknowledged(db, acks, codes, report, name);
    await checkMovementsAndEvents(db, codes, report, name);
    const ledger = await ledgerCheck(service.baseUrl, ctx.adminToken);
    report.check(name, 'ledger check passes', ledger.ok, `${ledger.balances_checked} balances checked`);
    await checkEventsDelivered(db, receiver, codes, 60_000, report, name, scope);
    fleet.checkNoCrash(report);
  },
};
