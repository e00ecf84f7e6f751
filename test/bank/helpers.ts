// A service on the Banco Económico rail against the bank simulator, for the tests of the rail itself: the
// app and the simulator are started by test/helpers/baneco.ts (RAIL=baneco from the environment, the
// simulator's callbacks aimed at the app); here the bank keeps real time, polls are quick and logs are kept.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { BanecoConfig } from '../../src/config.ts';
import type { Transaction } from '../../src/db/database.ts';
import type { PayInRail } from '../../src/rails/pay-in.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import type { BanecoSimulator } from '../../simulators/baneco/index.ts';
import { TestClock, type TestApp } from '../helpers/app.ts';
import { startBanecoApp } from '../helpers/baneco.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { databaseReset, type DatabaseKind } from '../helpers/databases.ts';
import { formatWallClock } from '../../src/time.ts';

export { ACCOUNT, AES_KEY, CALLBACK_SECRET, PASSWORD, SECRETS } from '../helpers/baneco.ts';
export const POLL_MS = 1_000;

export interface BankedApp {
  t: TestApp;
  bank: BanecoSimulator;
  /** Every log line the app wrote. */
  logLines: string[];
  /** Every line the bank simulator logged: one per call it received (and per callback try). */
  bankLog: string[];
  /**
   * Puts the app and its bank back to what startBankedApp gave, for a file whose tests each need a fresh
   * bank and database but can share one app: once the bank has sent every callback it owes, the bank reset
   * (its data, callbacks and knobs as started), the app's bank token renewed (the reset forgot it: the 401
   * happens here, not in the next test's attempt log), the database as it was after the app's start
   * (databaseReset), the clock back to now, the jobs built anew, the logs emptied.
   */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function startBankedApp(kind: DatabaseKind, overrides: Partial<BanecoConfig> = {}, simulatorKnobs: Record<string, unknown> = {}): Promise<BankedApp> {
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'trace' }, sink) as unknown as FastifyBaseLogger;
  // The simulator keeps real time (a QR's dueDate may not be before its today): so does the app's clock.
  // The fixture routes fund balances for the pay-out tests (test/transfers/helpers.ts).
  const t = await startBanecoApp({
    kind, logger, clock: new TestClock(new Date().toISOString()), bankClock: 'real', plugins: [fixtureRoutes],
    baneco: { pollIntervalMs: POLL_MS, batchIntervalMs: 60_000, timeoutMs: 3_000, ...overrides },
    simulatorKnobs: { batchDecisionDelayMs: 30, ...simulatorKnobs, callbacks: { retryBaseMs: 50, timeoutMs: 3_000 } },
  });
  const resetDatabase = await databaseReset(t.db);
  return {
    t, bank: t.bank, logLines, bankLog: t.bankLog,
    async reset() {
      await eventually(() => t.bank.pendingCallbacks() === 0);
      t.bank.reset();
      // Any call renews it; a few tries, as an app with a short BANECO_TIMEOUT may miss one on a busy machine.
      const day = formatWallClock(new Date(), t.config.serviceTimeZone).slice(0, 10);
      for (let attempt = 1; ; attempt++) {
        const renewed = await t.context.rail!.payIn!.paymentsOfDay(day);
        if (renewed.outcome === 'ok') break;
        if (attempt === 5) throw new Error(`the bank did not answer after its reset: ${JSON.stringify(renewed)}`);
      }
      await resetDatabase();
      t.clock.set(new Date().toISOString());
      jobsOfApp.delete(t);
      logLines.length = 0;
      t.bankLog.length = 0;
    },
    close: () => t.close(),
  };
}

/** The days (yyyyMMdd) whose paidQR the bank was asked for, in the order it was asked. */
export function paidQrCalls(bankLog: readonly string[]): string[] {
  return bankLog.flatMap((line) => /^GET api\/qrsimple\/v2\/paidQR\/(\d{8}) /.exec(line)?.[1] ?? []);
}

/** The app's jobs, built once per app as the worker builds them once per process (what they keep in memory lasts). */
const jobsOfApp = new WeakMap<TestApp, ReturnType<typeof backgroundJobs>>();

/** Runs one of the app's background jobs once, as the worker would (logging to the app's logger). */
export async function runJob(t: TestApp, name: string): Promise<boolean> {
  let jobs = jobsOfApp.get(t);
  if (!jobs) {
    jobs = backgroundJobs(t.context, { log: t.app.log });
    jobsOfApp.set(t, jobs);
  }
  const job = jobs.find((candidate) => candidate.name === name);
  if (!job) throw new Error(`no job ${name}`);
  return job.runOnce();
}

/**
 * Makes the database refuse to record the bank payment `railReference` (a trigger that raises on its
 * qr_payments insert): an unexpected failure of that payment alone, as a full disk or a bad row would be.
 * Answers the function that lifts it.
 */
export async function refusePaymentInDatabase(t: TestApp, railReference: string): Promise<() => Promise<void>> {
  if (!/^\d{1,40}$/.test(railReference)) throw new Error('a bank payment id is digits');
  await t.db.query(`create function refuse_bank_payment() returns trigger language plpgsql as $$
    begin
      if new.rail_reference = '${railReference}' then raise exception 'injected failure for one bank payment'; end if;
      return new;
    end $$`);
  await t.db.query('create trigger refuse_bank_payment before insert on qr_payments for each row execute function refuse_bank_payment()');
  return async () => {
    await t.db.query('drop trigger refuse_bank_payment on qr_payments');
    await t.db.query('drop function refuse_bank_payment()');
  };
}

/** Waits until `check` holds (callbacks arrive on their own time). */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A call the app made to the bank's pay-in, and whether a database transaction of its own caller was open. */
export interface BankCall {
  operation: 'issueQr' | 'cancelQr' | 'readQr' | 'paymentsOfDay';
  inTransaction: boolean;
}

/**
 * Watches the rule that no call to the bank runs inside a database transaction: each transaction's work
 * runs marked (AsyncLocalStorage follows it through every await), and each call of the rail's pay-in is
 * recorded with whether it was made under that mark. Other requests' transactions do not count: only one
 * open in the calling code's own path does. Observes only: the calls and transactions go on unchanged.
 */
export function watchBankCalls(t: TestApp): BankCall[] {
  const marked = new AsyncLocalStorage<true>();
  const calls: BankCall[] = [];
  const db = t.context.db;
  const transaction = db.transaction.bind(db);
  db.transaction = <T>(work: (tx: Transaction) => Promise<T>) => transaction((tx) => marked.run(true, () => work(tx)));
  const payIn = t.context.rail!.payIn! as unknown as Record<BankCall['operation'], (...args: unknown[]) => Promise<unknown>>;
  for (const operation of ['issueQr', 'cancelQr', 'readQr', 'paymentsOfDay'] as const satisfies readonly (keyof PayInRail)[]) {
    const original = payIn[operation].bind(payIn);
    payIn[operation] = (...args) => {
      calls.push({ operation, inTransaction: marked.getStore() === true });
      return original(...args);
    };
  }
  return calls;
}
