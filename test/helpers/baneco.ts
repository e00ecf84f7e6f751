// A service on the Banco Económico rail against the bank simulator (simulators/baneco/, a black box through
// its options and control API), configured as an operator configures it: RAIL=baneco and the BANECO_*
// variables the simulator prints. The app's port is taken first, so the simulator's callbacks reach it.
// test/bank/ tests the rail this way, and every test of MODE=live runs on it: live mode refuses the sandbox
// rail (src/config.ts), so a live service always talks to a bank.
import net from 'node:net';
import type { BanecoConfig } from '../../src/config.ts';
import { startBanecoSimulator, type BanecoSimulator } from '../../simulators/baneco/index.ts';
import { startTestApp, TestClock, type StartOptions, type TestApp } from './app.ts';

/** What the simulated bank issued to the platform (fixed, so a test can look for them in logs and answers). */
export const BANK_USER = 'mps';
export const PASSWORD = 'Clave-Del-Banco-Muy-Secreta-2026';
export const AES_KEY = '7A6B5C4D3E2F1A0B9C8D7E6F5A4B3C2D';
export const ACCOUNT = '1041070563';
export const CALLBACK_SECRET = 'cbsecret_Qw3rTy7uI9oP1aS5dF8gH2jK4lZ6xC0v';
/** Each must stay out of every log line, answer and page. */
export const SECRETS = [PASSWORD, AES_KEY, ACCOUNT, CALLBACK_SECRET];

export interface BanecoAppOptions extends Omit<StartOptions, 'port' | 'baneco'> {
  /** Values of the rail's typed config set over what the BANECO_* variables gave (a shorter timeout…). */
  baneco?: Partial<BanecoConfig>;
  /** Knobs the simulator starts with (the shape of its POST /_control/knobs). */
  simulatorKnobs?: Record<string, unknown>;
  /**
   * Whose time the bank keeps. `app` (the default): the app's TestClock, so the bank judges a QR's dueDate
   * on the app's day even when a test's clock is far from the machine's. `real`: the machine's.
   */
  bankClock?: 'app' | 'real';
}

export interface BanecoApp extends TestApp {
  bank: BanecoSimulator;
  /** Every line the simulator logged: one per call it received (and per callback try). */
  bankLog: string[];
  /** Closes the app, then stops the simulator. */
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts the bank simulator on a free port, its callbacks aimed at the app that will listen on `appPort`. */
export function startBankFor(appPort: number, options: { log?: (line: string) => void; knobs?: Record<string, unknown>; now?: () => number } = {}): Promise<BanecoSimulator> {
  return startBanecoSimulator({
    log: options.log,
    userName: BANK_USER, password: PASSWORD, aesKey: AES_KEY, account: ACCOUNT,
    callbackBase: `http://127.0.0.1:${appPort}/rails/baneco/${CALLBACK_SECRET}/`,
    knobs: options.knobs,
    now: options.now,
  });
}

/** The app on RAIL=baneco (in the mode `env` names; sandbox by default) against a simulator of its own. */
export async function startBanecoApp(options: BanecoAppOptions): Promise<BanecoApp> {
  const { baneco, simulatorKnobs, bankClock = 'app', ...appOptions } = options;
  const port = await freePort();
  const clock = appOptions.clock ?? new TestClock();
  const bankLog: string[] = [];
  const bank = await startBankFor(port, {
    log: (line) => bankLog.push(line),
    knobs: simulatorKnobs,
    now: bankClock === 'app' ? () => clock.now().getTime() : undefined,
  });
  let t: TestApp;
  try {
    t = await startTestApp({ ...appOptions, clock, port, env: { ...bank.env, ...appOptions.env }, baneco });
  } catch (error) {
    await bank.stop();
    throw error;
  }
  const closeApp = t.close;
  return Object.assign(t, {
    bank,
    bankLog,
    async close() {
      try {
        await closeApp();
      } finally {
        await bank.stop();
      }
    },
  });
}

/**
 * The app in MODE=live, as an operator runs it: RAIL=baneco against the simulator, with live keys
 * (`mk_live_…`), no sandbox helpers and no payment form. QRs created here are issued by the simulator.
 */
export function startLiveApp(options: BanecoAppOptions): Promise<BanecoApp> {
  return startBanecoApp({ ...options, env: { MODE: 'live', ...options.env } });
}
