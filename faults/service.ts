// Runs the service as users do — `node --import tsx src/main.ts` as a direct child (so kill -9 hits the service itself) — with its logs in a file.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './scope.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export type Role = 'api' | 'worker' | 'all';

export interface ServiceOptions {
  name: string;
  role: Role;
  databaseUrl: string;
  /** Listen port: the API, or for ROLE=worker its /healthz, /readyz and /metrics. */
  port: number;
  adminToken: string;
  logDir: string;
  /** Overrides of the defaults below (WEBHOOK_TIMEOUT, retry schedule, …). */
  env?: Record<string, string>;
}

/** Short delays so a scenario sees transfers settle and webhooks retry within seconds, not minutes. */
export const DEFAULT_SERVICE_ENV: Record<string, string> = {
  MODE: 'sandbox',
  HOST: '127.0.0.1',
  RATE_LIMIT: 'off',
  // Every client of the suite shares 127.0.0.1: the per-address limit for unverified keys would throttle the restarts.
  PUBLIC_RATE_LIMIT: 'off',
  LOG_LEVEL: 'warn',
  SANDBOX_SETTLEMENT: '300ms,300ms',
  WEBHOOK_TIMEOUT: '2s',
  WEBHOOK_RETRY_SCHEDULE: ['200ms', '500ms', '1s', ...Array.from({ length: 27 }, () => '2s')].join(','),
};

export interface ExitInfo { code: number | null; signal: NodeJS.Signals | null; at: number }

export class ServiceProcess {
  exit: ExitInfo | null = null;
  readonly exited: Promise<ExitInfo>;
  /** Set by the harness before it kills the process on purpose; any other exit is a crash. */
  expectedExit = false;

  private constructor(readonly options: ServiceOptions, readonly child: ChildProcess, readonly logFile: string) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, at: Date.now() };
        resolve(this.exit);
      });
    });
  }

  get pid(): number { return this.child.pid ?? -1; }
  get baseUrl(): string { return `http://127.0.0.1:${this.options.port}`; }
  get alive(): boolean { return this.exit === null; }

  static start(options: ServiceOptions, generation = 1): ServiceProcess {
    const logFile = path.join(options.logDir, `${options.name}.${generation}.log`);
    const fd = fs.openSync(logFile, 'a');
    const env: Record<string, string> = {
      // Only what the service needs: the developer's own DATABASE_URL, PORT… must not leak in.
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ...DEFAULT_SERVICE_ENV,
      ...options.env,
      DATABASE_URL: options.databaseUrl,
      PORT: String(options.port),
      ADMIN_TOKEN: options.adminToken,
      ROLE: options.role,
    };
    // Not the tsx CLI: it runs the program in a grandchild, and a kill -9 would only hit the wrapper.
    // FAULTS_SERVICE_NODE_ARGS adds Node flags for a diagnosis (e.g. --heapsnapshot-signal=SIGUSR2
    // --diagnostic-dir=/tmp/snapshots); unset in normal runs.
    const extra = (process.env.FAULTS_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...extra, '--import', 'tsx', 'src/main.ts'], { cwd: REPO_ROOT, env, stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    return new ServiceProcess(options, child, logFile);
  }

  /** A new process with the same options (after a kill), logging to the next generation's file. */
  restart(generation: number): ServiceProcess {
    return ServiceProcess.start(this.options, generation);
  }

  log(): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  /**
   * Waits until the process printed its start banner (workers and API are up), then, for an API process,
   * until `/healthz` answers (and `/readyz` when `ready` is asked). Throws with the log's tail if the
   * process exits first or the bound passes.
   */
  async waitStarted(timeoutMs: number, { ready = true, banner = true }: { ready?: boolean; banner?: boolean } = {}): Promise<number> {
    const started = Date.now();
    const deadline = started + timeoutMs;
    const marker = this.options.role === 'worker' ? 'running workers only' : 'listening on';
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`${this.options.name} exited during start (${describeExit(this.exit)}); log tail:\n${tail(this.log(), 15)}`);
      const bannerSeen = !banner || this.log().includes(marker);
      if (bannerSeen && this.options.role === 'worker') return Date.now() - started;
      if (bannerSeen && (await this.answers(ready ? '/readyz' : '/healthz'))) return Date.now() - started;
      await sleep(100);
    }
    throw new Error(`${this.options.name} did not start within ${timeoutMs} ms; log tail:\n${tail(this.log(), 15)}`);
  }

  private async answers(pathname: string): Promise<boolean> {
    try {
      const response = await fetch(`${this.baseUrl}${pathname}`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      return response.status === 200;
    } catch {
      return false;
    }
  }

  /** kill -9: no shutdown hook runs, buffered log lines are lost, transactions in flight are cut. */
  async kill9(): Promise<ExitInfo> {
    this.expectedExit = true;
    if (this.alive) this.child.kill('SIGKILL');
    return this.exited;
  }

  /** Graceful stop (SIGTERM), then SIGKILL after 20 s. */
  async stop(): Promise<ExitInfo> {
    this.expectedExit = true;
    if (!this.alive) return this.exit!;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  /** Resident memory in KiB from /proc/<pid>/status (VmRSS), or null once the process is gone. */
  rssKiB(): number | null {
    try {
      const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
      return match ? Number(match[1]) : null;
    } catch {
      return null;
    }
  }
}

export function describeExit(exit: ExitInfo | null): string {
  if (!exit) return 'running';
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

export function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
