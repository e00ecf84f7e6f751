// A service on the Banco Económico rail against the bank simulator (simulators/baneco/, a black box through
// its options and control API): the app's port is taken first, so the simulator's callbacks reach it.
import { AsyncLocalStorage } from 'node:async_hooks';
import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { BanecoConfig } from '../../src/config.ts';
import type { Transaction } from '../../src/db/database.ts';
import type { PayInRail } from '../../src/rails/pay-in.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startBanecoSimulator, type BanecoSimulator } from '../../simulators/baneco/index.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import type { DatabaseKind } from '../helpers/databases.ts';

export const PASSWORD = 'Clave-Del-Banco-Muy-Secreta-2026';
export const AES_KEY = '7A6B5C4D3E2F1A0B9C8D7E6F5A4B3C2D';
export const ACCOUNT = '1041070563';
export const CALLBACK_SECRET = 'cbsecret_Qw3rTy7uI9oP1aS5dF8gH2jK4lZ6xC0v';
export const SECRETS = [PASSWORD, AES_KEY, ACCOUNT, CALLBACK_SECRET];
export const POLL_MS = 1_000;

export interface BankedApp {
  t: TestApp;
  bank: BanecoSimulator;
  /** Every log line the app wrote. */
  logLines: string[];
  /** Every line the bank simulator logged: one per call it received (and per callback try). */
  bankLog: string[];
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function startBankedApp(kind: DatabaseKind, overrides: Partial<BanecoConfig> = {}, simulatorKnobs: Record<string, unknown> = {}): Promise<BankedApp> {
  const port = await freePort();
  const bankLog: string[] = [];
  const bank = await startBanecoSimulator({
    log: (line) => bankLog.push(line),
    userName: 'mps', password: PASSWORD, aesKey: AES_KEY, account: ACCOUNT,
    callbackBase: `http://127.0.0.1:${port}/rails/baneco/${CALLBACK_SECRET}/`,
    knobs: { batchDecisionDelayMs: 30, ...simulatorKnobs, callbacks: { retryBaseMs: 50, timeoutMs: 3_000 } },
  });
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'trace' }, sink) as unknown as FastifyBaseLogger;
  const baneco: BanecoConfig = {
    url: bank.baseUrl, user: 'mps', password: PASSWORD, aesKey: AES_KEY, account: ACCOUNT, callbackSecret: CALLBACK_SECRET,
    branchCode: null, qrDueDays: 365, pollIntervalMs: POLL_MS, batchIntervalMs: 60_000,
    amlSource: 'Cobros QR de comercios', amlDestination: 'Pago a comercio', timeoutMs: 3_000, ...overrides,
  };
  // The simulator keeps real time (a QR's dueDate may not be before its today): so does the app's clock.
  // The fixture routes fund balances for the pay-out tests (test/transfers/helpers.ts).
  const t = await startTestApp({ kind, port, baneco, logger, clock: new TestClock(new Date().toISOString()), plugins: [fixtureRoutes] });
  return {
    t, bank, logLines, bankLog,
    async close() {
      await t.close();
      await bank.stop();
    },
  };
}

/** The days (yyyyMMdd) whose paidQR the bank was asked for, in the order it was asked. */
export function paidQrCalls(bankLog: readonly string[]): string[] {
  return bankLog.flatMap((line) => /^GET api\/qrsimple\/v2\/paidQR\/(\d{8}) /.exec(line)?.[1] ?? []);
}

/** The app's jobs, built once per app as the worker builds them once per process (what they keep in memory lasts). */
const jobsOfApp = new WeakMap<TestApp, ReturnType<typeof backgroundJobs>>();

/** Runs one of the app's background jobs once, as the worker would. */
export async function runJob(t: TestApp, name: string): Promise<boolean> {
  let jobs = jobsOfApp.get(t);
  if (!jobs) {
    jobs = backgroundJobs(t.context);
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
