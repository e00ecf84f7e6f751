// Starting and stopping the whole service (main.ts, and the tests that start it as users do). The HTTP
// server listens at once, whether or not the database answers: /healthz says the process is up, /readyz
// and every other route answer 503 with Retry-After until the migrations have run, which wait for the
// database as long as it takes. A 10 s database outage at start is then a 10 s outage, not a crashed
// process waiting for its supervisor (or, without one, a permanent outage).
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Config } from './config.ts';
import { isDatabaseUnavailable, type Database } from './db/database.ts';
import { claimDatabaseMode } from './db/database-mode.ts';
import { migrate } from './db/migrate.ts';
import { openDatabase } from './db/open.ts';
import { replicaWithFallback } from './db/replica.ts';
import { buildApp, type App } from './http/app.ts';
import { describeError, logBackgroundError } from './kernel/logging.ts';
import { createMetricsRegistry } from './http/metrics.ts';
import { createSandboxAccountsIfEmpty, type SandboxCredentials } from './merchants/sandbox-setup.ts';
import { systemClock, type Clock } from './time.ts';
import { backgroundJobs } from './workers/jobs.ts';
import { WorkerRunner } from './workers/runner.ts';
import { createAppContext } from './composition.ts';

/** Whether the database is migrated and the service may serve requests that need it. */
export class StartupGate {
  private open = false;
  get isOpen(): boolean {
    return this.open;
  }
  markOpen(): void {
    this.open = true;
  }
}

export interface RunningService {
  config: Config;
  db: Database;
  /** The HTTP app, listening: the whole API, or with ROLE=worker only /healthz, /readyz and /metrics. */
  app: App;
  /**
   * Resolves once the database is migrated, the first-run sandbox accounts exist and the workers run:
   * with the sandbox credentials when this start created them, else null. Rejects only on an error that
   * waiting cannot cure (a migration that fails on a reachable database, a database of the other MODE:
   * DatabaseModeMismatch).
   */
  ready: Promise<SandboxCredentials | null>;
  /** Stops accepting, finishes in-flight requests and worker batches, closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  log: FastifyBaseLogger;
  clock?: Clock;
  /** Longest pause between two attempts to reach the database at start. */
  maxRetryDelayMs?: number;
}

/** Opens the database, listens, and brings the service up as soon as the database answers. */
export async function startService(config: Config, options: StartOptions): Promise<RunningService> {
  const { log } = options;
  const onBackgroundError = (error: unknown, context: string) => logBackgroundError(log, error, context);
  // Opening connects nothing for PostgreSQL (the pool connects on first use); PGlite opens its files.
  const db = await openDatabase(config.database, { purpose: 'service', onBackgroundError, queryTimeoutMs: config.databaseQueryTimeoutMs });
  // Only the API reads lists; a worker never opens the replica.
  const replicaDb = config.databaseReplica && config.role !== 'worker'
    ? await openDatabase(config.databaseReplica, { purpose: 'replica', onBackgroundError, queryTimeoutMs: config.databaseQueryTimeoutMs, readOnly: true })
    : null;
  const replica = replicaDb ? replicaWithFallback(replicaDb, db, { onFallback: fallbackLogger(log) }) : undefined;
  const context = createAppContext({ config, db, clock: options.clock ?? systemClock, replica }, { log });
  const gate = new StartupGate();
  // One registry for the HTTP metrics and the workers' (webhook delivery attempts, dispatch lag), served on /metrics.
  const metrics: Registry = createMetricsRegistry();

  const app = await buildApp(context, { logger: log, metrics, startupGate: gate, operationsOnly: config.role === 'worker' });
  // The context's render threads, QR read model and key cache serve the API: a ROLE=worker process serves
  // only /healthz, /readyz and /metrics, so it starts none of them (no thread, no LISTEN of theirs).
  if (config.role !== 'worker') await context.lifecycle.start();
  await app.listen({ port: config.port, host: config.host });

  const stopping = new AbortController();
  const running: { workers: WorkerRunner | null } = { workers: null };
  const ready = (async () => {
    const sandbox = await untilDatabaseAnswers(async () => {
      await migrateWithoutTimeout(config, db, log);
      // A database belongs to the mode it was first started in: the other mode stops here (DatabaseModeMismatch).
      const { recorded } = await claimDatabaseMode(db, config.mode);
      if (recorded) log.info({ mode: config.mode }, 'database mode recorded: this database now refuses processes of the other MODE');
      return createSandboxAccountsIfEmpty(context);
    }, { log, signal: stopping.signal, maxDelayMs: options.maxRetryDelayMs ?? 5_000 });
    gate.markOpen();
    if (replicaDb) void warnUnlessStandby(replicaDb, log);
    if (config.role !== 'api' && !stopping.signal.aborted) {
      running.workers = new WorkerRunner(db, log, backgroundJobs(context, { metrics, onError: onBackgroundError, log }));
      await running.workers.start();
    }
    return sandbox;
  })();
  ready.catch(() => {}); // the caller decides what a failed start means; an unobserved rejection must not end the process

  return {
    config,
    db,
    app,
    ready,
    async close() {
      stopping.abort();
      await ready.catch(() => {});
      // Answers the held long polls, stops accepting and finishes in-flight requests, then stops the render
      // threads and the key cache.
      await context.lifecycle.stop(() => app.close());
      await running.workers?.stop(); // finishes the current batch of each job
      try {
        await replicaDb?.close();
      } finally {
        await db.close();
      }
    },
  };
}

/** A DATABASE_REPLICA_URL that names a primary (the primary itself, by another name) offloads nothing: say so. */
async function warnUnlessStandby(replica: Database, log: FastifyBaseLogger): Promise<void> {
  try {
    const { rows } = await replica.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
    if (!rows[0]?.standby) log.warn('DATABASE_REPLICA_URL is not a standby (pg_is_in_recovery() is false): lists read a primary');
  } catch {
    // unreachable now: its reads go to the primary, and the fallback logs that
  }
}

/** Logs a read sent to the primary because the replica could not serve it: at the first, then at most every 30 s. */
function fallbackLogger(log: FastifyBaseLogger): (error: unknown) => void {
  let lastLoggedMs = -Infinity;
  let since = 0;
  return (error) => {
    since += 1;
    if (performance.now() - lastLoggedMs < 30_000) return;
    lastLoggedMs = performance.now();
    log.warn({ error: describeError(error), reads: since }, 'the read replica could not serve a read: sent to the primary');
    since = 0;
  };
}

/**
 * Applies pending migrations. On PostgreSQL through a pool of its own without the request pool's statement
 * time limit: a migration on a large table may rightly take minutes. (PGlite is one connection: its own.)
 */
async function migrateWithoutTimeout(config: Config, db: Database, log: FastifyBaseLogger): Promise<void> {
  const migrator = config.database.kind === 'postgres'
    ? await openDatabase(config.database, { purpose: 'migrations', maxConnections: 1, queryTimeoutMs: 0 })
    : db;
  try {
    const applied = await migrate(migrator);
    if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');
  } finally {
    if (migrator !== db) await migrator.close();
  }
}

/** The service was stopped while it still waited for its database: not a failure of the start. */
export class StartAborted extends Error {}

/**
 * Runs `work` until it succeeds, waiting between attempts while the database is unreachable (back-off from
 * 250 ms to `maxDelayMs`, logged at the first failure and then every 30 s). Any other error is final.
 */
async function untilDatabaseAnswers<T>(
  work: () => Promise<T>,
  options: { log: FastifyBaseLogger; signal: AbortSignal; maxDelayMs: number },
): Promise<T> {
  let delayMs = 250;
  let lastLoggedMs = -Infinity;
  for (;;) {
    if (options.signal.aborted) throw new StartAborted('stopped before the database answered');
    try {
      return await work();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      if (performance.now() - lastLoggedMs >= 30_000) {
        lastLoggedMs = performance.now();
        options.log.warn({ error: describeError(error) }, 'waiting for the database; /readyz answers 503 until it is migrated');
      }
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      options.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
    delayMs = Math.min(options.maxDelayMs, delayMs * 2);
  }
}
