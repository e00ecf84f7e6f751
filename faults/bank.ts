// The Banco Económico simulator as the `bank` scenario runs it: in this process, its callbacks aimed at the API process, its state typed, its calls counted; and the operator CLI run against the cluster.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startBanecoSimulator, type BanecoSimulator, type CallbackAttempt } from '../simulators/baneco/index.ts';
import { REPO_ROOT } from './service.ts';

/** What `state()` lists, as far as the scenario reads it (simulators/baneco/control-api.ts). */
export interface SimQr { qrId: string; transactionId: string; amount: number; status: 'active' | 'paid' | 'cancelled' }
export interface SimPayment { qrId: string; transactionId: string; amount: number; paymentDate: string; knownQr: boolean }
export interface SimItem { batchDetailId: string; amount: number; account: string; status: 'PENDING' | 'ACEP' | 'RECH' }
export interface SimBatch { bankBatchId: number; batchId: string; items: SimItem[] }
export interface SimState { qrs: SimQr[]; payments: SimPayment[]; batches: SimBatch[] }

/** The bank's operations as its log names them (one line per request received). */
const OPERATIONS: Array<[RegExp, string]> = [
  [/^POST api\/authentication\/authenticate /, 'authenticate'],
  [/^POST api\/qrsimple\/generateQR /, 'generateQR'],
  [/^DELETE api\/qrsimple\/cancelQR /, 'cancelQR'],
  [/^GET api\/qrsimple\/v2\/statusQR\//, 'statusQR'],
  [/^GET api\/qrsimple\/v2\/paidQR\//, 'paidQR'],
  [/^POST api\/accounts\/history /, 'accountsHistory'],
  [/^POST api\/batchPayment\/upload /, 'batchUpload'],
];

export class BankRig {
  /** Requests the bank received, by operation (a request is counted once, whatever fault it met). */
  readonly requests = new Map<string, number>();
  /** Called with each line the simulator logs, as it logs it (the kill of the worker hooks in here). */
  onLine: ((line: string) => void) | null = null;

  private constructor(readonly sim: BanecoSimulator, readonly serviceEnv: Record<string, string>) {}

  /**
   * Starts the simulator on a free port, its callbacks aimed at `/rails/baneco/<new secret>/` of the API
   * that will listen on `apiPort`; `serviceEnv` is what points a service process at it.
   */
  static async start(apiPort: number, serviceSettings: Record<string, string>, knobs: Record<string, unknown>): Promise<BankRig> {
    const secret = randomBytes(32).toString('base64url');
    let rig: BankRig | null = null;
    const sim = await startBanecoSimulator({
      callbackBase: `http://127.0.0.1:${apiPort}/rails/baneco/${secret}/`,
      knobs,
      log: (line) => rig?.line(line),
    });
    rig = new BankRig(sim, { ...sim.env, PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`, ...serviceSettings });
    return rig;
  }

  private line(line: string): void {
    // "→ processed, then fault …" follows the answer's own line: the same request, not another.
    if (!line.includes('→ processed, then fault')) {
      const operation = OPERATIONS.find(([pattern]) => pattern.test(line))?.[1];
      if (operation) this.requests.set(operation, (this.requests.get(operation) ?? 0) + 1);
    }
    this.onLine?.(line);
  }

  count(operation: string): number {
    return this.requests.get(operation) ?? 0;
  }

  state(): SimState {
    return this.sim.state() as unknown as SimState;
  }

  callbacks(): CallbackAttempt[] {
    return this.sim.callbacks();
  }

  set(knobs: Record<string, unknown>): void {
    this.sim.setKnobs(knobs);
  }

  /** The bank's QR issued for our QR `id` (generateQR's transactionId is our id). */
  qrOf(id: string): SimQr | undefined {
    return this.state().qrs.find((qr) => qr.transactionId === id);
  }

  /** Every bank item holding one of these transfers, with its batch. */
  itemsOf(transferIds: Iterable<number>): Array<{ batch: SimBatch; item: SimItem; transferId: number }> {
    const wanted = new Set([...transferIds].map((id) => `mps-transfer-${id}`));
    return this.state().batches.flatMap((batch) => batch.items.filter((item) => wanted.has(item.batchDetailId))
      .map((item) => ({ batch, item, transferId: Number(item.batchDetailId.slice('mps-transfer-'.length)) })));
  }

  /** The bank's back office decides every item of these transfers still pending: a beneficiary account ending 0000 is closed. */
  decide(transferIds: Iterable<number>): number {
    let decided = 0;
    for (const { batch, item } of this.itemsOf(transferIds)) {
      if (item.status !== 'PENDING') continue;
      if (item.account.replace(/\D/g, '').endsWith('0000')) this.sim.decide(batch.batchId, item.batchDetailId, 'RECH', 'Cuenta cerrada');
      else this.sim.decide(batch.batchId, item.batchDetailId, 'ACEP');
      decided++;
    }
    return decided;
  }

  stop(): Promise<void> {
    return this.sim.stop();
  }
}

export interface CliRun { code: number | null; stdout: string; stderr: string; ms: number; json: unknown }

/**
 * Runs the operator CLI (`mps …`, src/cli/main.ts) the way the suite runs the service — node with tsx, no
 * build of dist/ — with only the environment given (plus PATH and HOME); killed after `timeoutMs`.
 */
export function runMps(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, ms: Date.now() - started, json });
    });
  });
}
