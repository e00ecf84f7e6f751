// What every scenario sets up the same way: its scratch database, its service processes (tracked for crashes and killed at the end), merchants with webhook endpoints.
import { createMerchant, registerWebhookEndpoint, type Merchant } from './api.ts';
import type { Cluster } from './cluster.ts';
import { anyFreePort } from './ports.ts';
import { Receiver } from './receiver.ts';
import type { Report } from './report.ts';
import type { Scope } from './scope.ts';
import { describeExit, ServiceProcess, type Role } from './service.ts';

export interface ScenarioContext {
  name: string;
  cluster: Cluster;
  report: Report;
  logDir: string;
  adminToken: string;
}

/** The service processes of one scenario, every generation kept so an unplanned exit is never missed. */
export class Fleet {
  readonly all: ServiceProcess[] = [];
  private readonly generations = new Map<string, number>();

  constructor(private readonly ctx: ScenarioContext, scope: Scope, private readonly databaseUrl: string) {
    scope.defer('kill service processes', async () => {
      await Promise.all(this.all.filter((p) => p.alive).map((p) => p.kill9()));
    });
  }

  async start(name: string, role: Role, env: Record<string, string> = {}, port?: number): Promise<ServiceProcess> {
    const generation = (this.generations.get(name) ?? 0) + 1;
    this.generations.set(name, generation);
    const process = ServiceProcess.start({
      name: `${this.ctx.name}-${name}`, role, databaseUrl: this.databaseUrl, port: port ?? (await anyFreePort()),
      adminToken: this.ctx.adminToken, logDir: this.ctx.logDir, env,
    }, generation);
    this.all.push(process);
    return process;
  }

  /** A new process in place of a killed one: same name, role, port and environment. */
  restart(previous: ServiceProcess): ServiceProcess {
    const name = previous.options.name;
    const generation = (this.generations.get(name) ?? 1) + 1;
    this.generations.set(name, generation);
    const process = previous.restart(generation);
    this.all.push(process);
    return process;
  }

  /** Processes that exited without the harness asking them to (a crash). */
  unplannedExits(): string[] {
    return this.all.filter((p) => !p.alive && !p.expectedExit).map((p) => `${p.options.name} pid ${p.pid} (${describeExit(p.exit)}, log ${p.logFile})`);
  }

  checkNoCrash(report: Report): void {
    const crashes = this.unplannedExits();
    report.check(this.ctx.name, 'no service process exited on its own', crashes.length === 0, crashes.join('; '));
  }
}

export async function scratchDatabase(ctx: ScenarioContext): Promise<string> {
  return ctx.cluster.createDatabase(`faults_${ctx.name.replace(/[^a-z0-9]/g, '_')}`);
}

/** What every scenario starts from: its scratch database, a webhook receiver and a fleet on that database (both torn down by `scope`). */
export async function scenarioRig(ctx: ScenarioContext, scope: Scope): Promise<{ url: string; receiver: Receiver; fleet: Fleet }> {
  const url = await scratchDatabase(ctx);
  const receiver = await Receiver.start();
  scope.defer('close receiver', () => receiver.close());
  return { url, receiver, fleet: new Fleet(ctx, scope, url) };
}

/** `count` merchants with the ACH module, each with a webhook endpoint on the receiver (all event types). */
export async function prepareMerchants(baseUrl: string, ctx: ScenarioContext, receiver: Receiver, count: number): Promise<Merchant[]> {
  const merchants: Merchant[] = [];
  for (let n = 0; n < count; n++) {
    const merchant = await createMerchant(baseUrl, ctx.adminToken, `Faults ${ctx.name} ${n + 1}`);
    const endpoint = await registerWebhookEndpoint(baseUrl, merchant, receiver.urlFor(merchant.businessCode));
    receiver.addSecret(merchant.businessCode, endpoint.secret);
    merchants.push(merchant);
  }
  return merchants;
}
