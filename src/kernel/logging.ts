// JSON-line logs (pino) that never carry API keys, secrets, full account numbers, stack traces or SQL.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { pino, type Bindings, type ChildLoggerOptions, type Logger } from 'pino';
import { databaseErrorOf } from '../db/database.ts';

/** Paths redacted wherever they appear in a log line. */
const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.api_key',
  '*.master_key',
  '*.secret',
  '*.account_number',
  '*.apiKey',
  '*.masterKey',
];

export function createLogger(level: string): FastifyBaseLogger {
  return pino({
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'merchant-payments' },
    timestamp: pino.stdTimeFunctions.isoTime,
  },
  // Buffered, not one write(2) per line: under load the lines of many requests leave in one write, and
  // pino flushes what is left when the process exits.
  pino.destination({ dest: 1, sync: false })) as unknown as FastifyBaseLogger;
}

/**
 * What may be logged of an unexpected error: its name, message and database code/constraint. Never the
 * stack, the SQL text or its parameters (PGlite errors carry both), nor a driver's `detail` with row values.
 */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { kind: typeof error };
  const database = databaseErrorOf(error);
  return {
    name: error.name,
    message: error.message.slice(0, 500),
    ...(database ? { sqlstate: database.code, constraint: database.constraint } : {}),
    ...(!database && typeof (error as Error & { code?: unknown }).code === 'string' ? { code: (error as Error & { code: string }).code } : {}),
  };
}

export function logBackgroundError(log: FastifyBaseLogger, error: unknown, context: string): void {
  log.error({ error: describeError(error), context }, `background task failed: ${context}`);
}

/**
 * The logger of the access line: the app's logger without redaction, because that line is built here from
 * the method, route pattern (never the raw URL, whose path may carry a pay or onboarding token), status,
 * time and request id — nothing to redact — and pino's wildcard redaction of every line was a tenth of
 * the CPU of a POS poll.
 */
export function accessLogger(logger: FastifyBaseLogger): Logger {
  return (logger as unknown as Logger).child({}, { redact: [] });
}

/**
 * Logs each answered request once, through `accessLogger`: at `info`, except a read that succeeded (GET
 * or HEAD answered below 400), which is logged at `debug` — a POS terminal polling its QR every 2 s would
 * otherwise be most of the log and a good part of the CPU, while what an operator looks for (every
 * write, every refusal and failure) stays at `info`.
 */
export function logResponse(log: Logger, request: FastifyRequest, reply: FastifyReply): void {
  const quietRead = (request.method === 'GET' || request.method === 'HEAD') && reply.statusCode < 400;
  const level = quietRead ? 'debug' : 'info';
  if (!log.isLevelEnabled(level)) return; // the line is not built when it would not be written
  log[level]({
    reqId: request.id,
    method: request.method,
    route: request.routeOptions.url ?? 'unmatched',
    statusCode: reply.statusCode,
    responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
  }, 'request completed');
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = unknown[];

/**
 * Fastify gives each request a child logger that stamps its id on each line; pino builds a child eagerly
 * (serializing its bindings) although most requests never log through it. This one is built on the
 * first line actually written. A class, so a request costs one small object and no closures.
 */
class LazyChildLogger {
  private built: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly childBindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.built?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    // A route's own logLevel (Fastify passes it as the child's level) decides, else the app's.
    return this.built || this.options.level !== undefined
      ? (this.real() as unknown as Logger).isLevelEnabled(level)
      : (this.parent as unknown as Logger).isLevelEnabled(level);
  }

  bindings(): Bindings {
    return (this.real() as unknown as Logger).bindings();
  }

  flush(callback?: (error?: Error) => void): void {
    (this.parent as unknown as Logger).flush(callback);
  }

  // Prototype methods, not arrow fields: no closures per request.
  fatal(...args: LogArgs): void { this.write('fatal', args); }
  error(...args: LogArgs): void { this.write('error', args); }
  warn(...args: LogArgs): void { this.write('warn', args); }
  info(...args: LogArgs): void { this.write('info', args); }
  debug(...args: LogArgs): void { this.write('debug', args); }
  trace(...args: LogArgs): void { this.write('trace', args); }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private write(level: Level, args: LogArgs): void {
    if (this.isLevelEnabled(level)) (this.real()[level] as (...a: LogArgs) => void)(...args);
  }

  private real(): FastifyBaseLogger {
    return (this.built ??= this.parent.child(this.childBindings, this.options));
  }
}

export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // Its log methods take pino's arguments as they come; it forwards them untouched.
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
