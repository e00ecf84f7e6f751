// JSON-line logs (pino) that never carry API keys, secrets, full account numbers, stack traces or SQL.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
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
  }) as unknown as FastifyBaseLogger;
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
 * Logs each answered request once: method, route pattern (never the raw URL, whose path may carry a pay
 * or onboarding token), status and time, with the request id that pino's child logger adds.
 */
export function registerRequestLogging(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
    }, 'request completed');
  });
}
