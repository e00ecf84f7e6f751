// Start: config → HTTP server → (the database answers) migrations, first run, workers; graceful shutdown on
// SIGTERM/SIGINT. The process starts while its database is down and waits for it (src/startup.ts).
import { ConfigError, describeDatabase, loadConfig, MIN_TOKEN_LENGTH, type Config } from './config.ts';
import { DatabaseModeMismatch } from './db/database-mode.ts';
import { DataDirInUseError } from './db/lock-file.ts';
import type { App } from './http/app.ts';
import { createLogger, describeError } from './kernel/logging.ts';
import type { SandboxCredentials } from './merchants/sandbox-setup.ts';
import { startWarnings } from './start-warnings.ts';
import { StartAborted, startService, type RunningService } from './startup.ts';
import { SERVICE_VERSION } from './version.ts';

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
  let service: RunningService;
  try {
    service = await startService(config, { log });
  } catch (error) {
    if (error instanceof DataDirInUseError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    if ((error as { code?: unknown }).code === 'EADDRINUSE') {
      process.stderr.write(`Cannot listen on ${config.host}:${config.port}: another process listens there. Give every process its own PORT (a ROLE=worker too: it serves /healthz, /readyz and /metrics).\n`);
      process.exit(1);
    }
    process.stderr.write(`Cannot start (${describeDatabase(config.database)}): ${describeError(error).message ?? String(error)}\n`);
    process.exit(1);
  }

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
      await service.close();
      process.exit(process.exitCode ?? 0);
    } catch (error) {
      log.error({ error: describeError(error) }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  printBanner(config, service.app);
  service.ready.then(
    (sandbox) => printFirstRun(config, baseUrlOf(config, service.app), sandbox),
    (error) => {
      if (error instanceof StartAborted) return; // stopped (SIGTERM) before the database came: not a failure
      if (error instanceof DatabaseModeMismatch) {
        // The configuration does not fit the database: one line, and the configuration error's exit code.
        process.stderr.write(`Configuration error: ${error.message}\n`);
        process.exitCode = 2;
        void shutdown('database of the other mode');
        return;
      }
      log.fatal({ error: describeError(error) }, 'the database answered but could not be prepared; stopping');
      process.exitCode = 1;
      void shutdown('startup failure');
    },
  );
}

function printBanner(config: Config, app: App): void {
  const lines: string[] = [''];
  const base = baseUrlOf(config, app);
  if (config.role !== 'worker') {
    lines.push(`Merchant Payments Service ${SERVICE_VERSION} (${config.mode}) listening on ${base}`);
    lines.push(`  API base:  ${base}/api/v2`);
    lines.push(`  API docs:  ${base}/docs   (OpenAPI: ${base}/openapi.json)`);
    lines.push(`  Public base for payer and onboarding links: ${config.publicBaseUrl}`);
  } else {
    lines.push(`Merchant Payments Service ${SERVICE_VERSION} (${config.mode}) running workers only (ROLE=worker)`);
    lines.push(`  /healthz, /readyz and /metrics on ${base}`);
  }
  lines.push(`  Database:  ${describeDatabase(config.database)}`);
  if (config.databaseReplica && config.role !== 'worker') lines.push(`  Replica:   ${describeDatabase(config.databaseReplica)} (lists, movements, statements)`);
  lines.push(...railLines(config));
  lines.push(...warningLines(config));
  if (!config.adminToken && config.role !== 'worker') lines.push('', `Operator API /admin/v1 is off: set ADMIN_TOKEN (${MIN_TOKEN_LENGTH}+ characters) to enable it.`);
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

/**
 * Which rail moves the money: for a bank, where it is (the origin of BANECO_URL: no user, path or query)
 * and, where the API runs, the callback base to register with it — its secret segment named, never shown.
 */
function railLines(config: Config): string[] {
  if (config.rail.kind === 'sandbox') return ['  Rail:      sandbox (the pretend bank: no money moves)'];
  const lines = [`  Rail:      baneco (Banco Económico) at ${new URL(config.rail.baneco.url).origin}`];
  if (config.role !== 'worker') lines.push(`  Bank callbacks: ${config.publicBaseUrl}/rails/baneco/<BANECO_CALLBACK_SECRET>/ (register it with the bank)`);
  return lines;
}

/** The settings to look at before money moves, one per line under the variable's name. */
function warningLines(config: Config): string[] {
  const warnings = startWarnings(config);
  if (warnings.length === 0) return [];
  return ['', `Check before taking money (docs/going-live.md#what-the-start-checks):`,
    ...warnings.map((warning) => `  ${warning.variable.padEnd(16)} ${warning.text}`)];
}

/** Once the database is ready: the sandbox keys of a first run (shown once), or how to get another. */
function printFirstRun(config: Config, base: string, sandbox: SandboxCredentials | null): void {
  const lines: string[] = [];
  if (sandbox) {
    lines.push('First run: sandbox accounts created. These keys are shown once; only their hashes are stored.');
    lines.push(`  Merchant business_code: ${sandbox.businessCode}`);
    lines.push(`  Merchant API key:       ${sandbox.apiKey}`);
    lines.push(`  Partner id:             ${sandbox.partnerId}`);
    lines.push(`  Partner master key:     ${sandbox.masterKey}`);
    // A worker has no API: the keys work on the API processes of the same database.
    lines.push('', config.role === 'worker'
      ? '  Use them on an API process of this database (ROLE=api or all): GET /api/v2/balance with X-API-KEY.'
      : `  Try:  curl -H "X-API-KEY: ${sandbox.apiKey}" ${base}/api/v2/balance`);
  } else if (config.mode === 'sandbox') {
    lines.push('Sandbox keys were printed on the first run. Lost them? Create another:',
      '  npm run mps -- key create 1001   (stop the service first when it runs on the embedded database)');
  }
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n\n`);
}

function baseUrlOf(config: Config, app: App): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${describeError(error).message ?? String(error)}\n`);
  process.exit(1);
});
