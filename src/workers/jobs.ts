// The background jobs of this process. Each capability adds its own job here.
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import { sandboxHelpersOf, type AppContext } from '../context.ts';
import { reconcilePreviousDayWhenDue } from '../bank/daily-reconciliation.ts';
import { bankPayOutOf, payOutPendingTransfers } from '../bank/pay-out.ts';
import { reconcileContextOf } from '../bank/reconciliation.ts';
import { bankContextOf, DailySweepState, pollRailQrs, sweepDueDays } from '../bank/service.ts';
import { purgeExpiredOutcomes } from '../idempotency/service.ts';
import { sweepExpiredIntents } from '../onboarding/service.ts';
import { payOutDueSchedules } from '../payouts/service.ts';
import { sweepExpiredQrs } from '../qr/service.ts';
import { settleOneDueRefund } from '../refunds/service.ts';
import { advanceOneDueTransfer } from '../transfers/service.ts';
import { Dispatcher } from '../webhooks/dispatcher.ts';
import { sealPlainSecrets } from '../webhooks/service.ts';
import { destinationPolicyOf } from '../webhooks/ssrf.ts';
import { webhookMetrics } from '../webhooks/metrics.ts';
import type { Job } from '../kernel/job.ts';
import { describeError } from '../kernel/logging.ts';

/** Transfers or refunds one run of a sandbox rail worker moves at most before yielding. */
const SANDBOX_RAIL_BATCH = 50;

/** Merchants one run of the scheduled payouts pays out at most before yielding (one transaction each). */
const SCHEDULED_PAYOUT_BATCH = 50;

export interface BackgroundJobOptions {
  /** Registry of /metrics, so worker metrics are served with the HTTP ones. */
  metrics?: Registry;
  onError?: (error: unknown, context: string) => void;
  /** Where jobs report what an operator should see (the daily reconciliation's breaks); silent when absent. */
  log?: Pick<FastifyBaseLogger, 'info' | 'warn'>;
}

const SILENT = { info: () => undefined, warn: () => undefined };

/** The jobs of a process, given what the composition root built (its rail, its secret box). */
export function backgroundJobs(context: AppContext, options: BackgroundJobOptions = {}): Job[] {
  const { config, db, clock, secrets } = context;
  const log = options.log ?? SILENT;
  const metrics = options.metrics ? webhookMetrics(options.metrics) : undefined;
  const dispatcher = new Dispatcher({
    db, clock, metrics, secrets, destinations: destinationPolicyOf(config), timeoutMs: config.webhookTimeoutMs,
    retryScheduleMs: config.webhookRetryScheduleMs, onError: options.onError,
  });
  const jobs: Job[] = [
    {
      name: 'idempotency-purge',
      intervalMs: 10 * 60_000,
      // Batches of 1,000 keep each delete short; a full batch means more may be waiting.
      runOnce: async () => (await purgeExpiredOutcomes(db, clock.now(), 1000)) === 1000,
    },
    {
      // Records expired QRs as CANCELED with their simple_qr.canceled event. Reads never wait for it (the
      // effective status applies expiry at once), so a few seconds of delay only delay the webhook.
      name: 'qr-expiry-sweep',
      intervalMs: 5_000,
      runOnce: async () => (await sweepExpiredQrs(db, config, clock.now(), 500)) === 500,
    },
    {
      // Records expired onboarding intents with their onboarding_intent.expired event for the partner. Reads
      // and the hosted flow apply expiry at once; the sweep only delays the webhook by a few seconds.
      name: 'onboarding-expiry-sweep',
      intervalMs: 5_000,
      runOnce: async () => (await sweepExpiredIntents(db, clock.now(), 500)) === 500,
    },
    dispatcher.job(),
    {
      // Seals webhook secrets still stored in clear (rows from before migration 014, or written by a process of
      // that version during a rolling deploy); docs/webhooks.md. Nothing to do is one probe of an empty index.
      name: 'webhook-secret-sealing',
      intervalMs: 60_000,
      runOnce: async () => (await sealPlainSecrets(db, secrets, clock.now(), 100)) === 100,
    },
    {
      // Scheduled payouts (docs/payouts.md): at PAYOUT_TIME of each scheduled day, and for days no worker ran
      // at theirs, one merchant per transaction. Each run's day is recorded with its transfer, so a minute's
      // lateness is all the polling costs, and any number of processes may run it.
      name: 'scheduled-payouts',
      intervalMs: 60_000,
      runOnce: async () => {
        const { runs, more } = await payOutDueSchedules(context, SCHEDULED_PAYOUT_BATCH, (error, businessCode) => {
          log.warn({ business_code: businessCode, error: describeError(error) }, 'scheduled payouts: a merchant\'s run failed; it is tried again at the next run');
        });
        if (runs.length > 0) log.info({ runs: countsBy(runs.map((run) => run.outcome)), days: runs.reduce((sum, run) => sum + run.days.length, 0) }, `scheduled payouts: ${runs.length} merchants run`);
        return more;
      },
    },
  ];
  // The sandbox's pretend bank settles by itself after SANDBOX_SETTLEMENT; a bank's rail has jobs of its own.
  const sandbox = sandboxHelpersOf(context);
  if (sandbox && config.sandboxSettlementMs) {
    const payOut = sandbox.payOut;
    const [pendingMs, inTransitMs] = config.sandboxSettlementMs;
    jobs.push({
      name: 'transfers-sandbox-rail',
      // Polls at a tenth of the shorter delay (at most every 5 s, at least every 100 ms), so a step is late by little.
      intervalMs: Math.min(5_000, Math.max(100, Math.floor(Math.min(pendingMs, inTransitMs) / 10))),
      runOnce: async () => {
        // One transaction per transfer keeps each balance lock short; a full batch means more may be due.
        for (let moved = 0; moved < SANDBOX_RAIL_BATCH; moved++) {
          if (!(await advanceOneDueTransfer(db, payOut, { pendingMs, inTransitMs }, clock.now()))) return false;
        }
        return true;
      },
    });
  }
  if (sandbox && config.sandboxSettlementMs) {
    const refunds = sandbox.refunds;
    // Refunds settle after the first sandbox delay (docs/api-reference.md#refunds).
    const [delayMs] = config.sandboxSettlementMs;
    jobs.push({
      name: 'refunds-sandbox-rail',
      intervalMs: Math.min(5_000, Math.max(100, Math.floor(delayMs / 10))),
      runOnce: async () => {
        for (let settled = 0; settled < SANDBOX_RAIL_BATCH; settled++) {
          if (!(await settleOneDueRefund(db, refunds, delayMs, clock.now()))) return false;
        }
        return true;
      },
    });
  }
  // A bank's pay-in (docs/rails.md): the status poll (and the cancels it carries to the bank), and the daily sweep.
  const bank = bankContextOf(context);
  if (bank) {
    const onError = options.onError ?? (() => undefined);
    jobs.push({
      name: 'bank-qr-poll',
      intervalMs: Math.max(100, Math.floor(bank.payIn.pollIntervalMs / 4)),
      runOnce: () => pollRailQrs(bank, (error) => onError(error, 'bank-qr-poll')),
    });
    // One per process, as the jobs are built: each day's wait after a refusal lasts from run to run.
    const sweepState = new DailySweepState();
    jobs.push({
      name: 'bank-daily-sweep',
      intervalMs: 60_000,
      runOnce: async () => {
        await sweepDueDays(bank, sweepState, (error) => onError(error, 'bank-daily-sweep'));
        return false;
      },
    });
  }
  // A bank's reconciliation (docs/operators.md): from 01:00, the previous day once it is swept, once per day.
  const reconcile = reconcileContextOf(context);
  if (reconcile) {
    jobs.push({
      name: 'bank-daily-reconciliation',
      intervalMs: 60_000,
      runOnce: async () => {
        await reconcilePreviousDayWhenDue(reconcile, log);
        return false;
      },
    });
  }
  // A bank's pay-out (docs/rails.md): every BANECO_BATCH_INTERVAL, the PENDING transfers become one batch.
  const payOut = bankPayOutOf(context);
  if (payOut) {
    jobs.push({
      name: 'bank-batch-payout',
      intervalMs: payOut.payOut.batchIntervalMs,
      runOnce: () => payOutPendingTransfers(payOut),
    });
  }
  return jobs;
}

/** How many of each: `{ transferred: 3, below_minimum: 1 }` (what a log line says of a batch, never amounts or accounts). */
function countsBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
