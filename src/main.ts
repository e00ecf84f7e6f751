// Start: config → database → migrations → (first run) → HTTP app and workers; graceful shutdown on SIGTERM/SIGINT.
import { ConfigError, describeDatabase, loadConfig, type Config } from './config.ts';
import type { AppContext } from './context.ts';
import { DataDirInUseError } from './db/lock-file.ts';
import { migrate } from './db/migrate.ts';
import { openDatabase } from './db/open.ts';
import { buildApp, type App } from './http/app.ts';
import { createLogger, describeError, logBackgroundError } from './http/logging.ts';
import { createMetricsRegistry } from './http/metrics.ts';
import { createSandboxAccountsIfEmpty, type SandboxCredentials } from './merchants/sandbox-setup.ts';
import { systemClock } from './time.ts';
import { backgroundJobs } from './workers/jobs.ts';
import { WorkerRunner } from './workers/runner.ts';

/** Longest a shutdown may take before the process exits anyway. */
const SHUTDOWN_TIMEOUT_MS = 15_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) process.stderr.write(`Configuration error: ${problem}\n`);
      process.exit(2);
    }
    throw error;
  }

  const log = createLogger(config.logLevel);
  const onBackgroundError = (error: unknown, context: string) => logBackgroundError(log, error, context);
  let db;
  try {
    db = await openDatabase(config.database, { purpose: 'service', onBackgroundError });
  } catch (error) {
    if (error instanceof DataDirInUseError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`Cannot open the database (${describeDatabase(config.database)}): ${(error as Error).message}\n`);
    process.exit(1);
  }

  const context: AppContext = { config, db, clock: systemClock };
  const applied = await migrate(db);
  if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');
  const sandbox = await createSandboxAccountsIfEmpty(context);

  // One registry for the HTTP metrics and the workers' (webhook deliveries, outbox lag), served on /metrics.
  const metrics = createMetricsRegistry();
  let app: App | null = null;
  if (config.role !== 'worker') {
    app = await buildApp(context, { logger: log, metrics });
    await app.listen({ port: config.port, host: config.host });
  }
  const workers = config.role !== 'api' ? new WorkerRunner(db, log, backgroundJobs(context, { metrics, onError: onBackgroundError })) : null;
  await workers?.start();

  printBanner(config, app, sandbox);

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info({ signal }, 'shutting down');
    const forced = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    forced.unref();
    try {
      await app?.close(); // stops accepting, finishes in-flight requests
      await workers?.stop(); // finishes the current batch of each job
      await db.close();
      process.exit(0);
    } catch (error) {
      log.error({ error: describeError(error) }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

function printBanner(config: Config, app: App | null, sandbox: SandboxCredentials | null): void {
  const lines: string[] = [''];
  if (app) {
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    lines.push(`Merchant Payments Service (${config.mode}) listening on ${base}`);
    lines.push(`  API base:  ${base}/api/v2`);
    lines.push(`  API docs:  ${base}/docs   (OpenAPI: ${base}/openapi.json)`);
    lines.push(`  Public base for payer and onboarding links: ${config.publicBaseUrl}`);
  } else {
    lines.push(`Merchant Payments Service (${config.mode}) running workers only (ROLE=worker)`);
  }
  lines.push(`  Database:  ${describeDatabase(config.database)}`);
  if (sandbox) {
    lines.push('', 'First run: sandbox accounts created. These keys are shown once; only their hashes are stored.');
    lines.push(`  Merchant business_code: ${sandbox.businessCode}`);
    lines.push(`  Merchant API key:       ${sandbox.apiKey}`);
    lines.push(`  Partner id:             ${sandbox.partnerId}`);
    lines.push(`  Partner master key:     ${sandbox.masterKey}`);
    lines.push('', '  Try:  curl -H "X-API-KEY: <merchant key>" ' + `${config.publicBaseUrl}/api/v2/balance`);
  } else if (config.mode === 'sandbox') {
    lines.push('', 'Sandbox keys were printed on the first run. Lost them? Create another:',
      '  npm run mps -- key create 1001   (stop the service first when it runs on the embedded database)');
  }
  if (!config.adminToken) lines.push('', 'Operator API /admin/v1 is off: set ADMIN_TOKEN (16+ characters) to enable it.');
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${describeError(error).message ?? String(error)}\n`);
  process.exit(1);
});
