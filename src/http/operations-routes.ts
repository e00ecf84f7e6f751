// Routes for operators and tooling (docs/api-reference.md#operations): liveness, readiness, Prometheus metrics, the OpenAPI document.
import { Type } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import type { AppContext, CapabilityRoutes } from '../context.ts';
import { ApiError, serviceUnavailable } from '../kernel/errors.ts';
import { errorResponses } from '../kernel/schemas.ts';
import type { TokenLockout } from './token-lockout.ts';

const wrongMetricsToken = () => new ApiError('ADMIN_TOKEN_INVALID', { message: 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.' });

export interface OperationsOptions extends AppContext {
  /** The registry /metrics serves (shared with the background jobs in one process). */
  metrics: Registry;
  /** Closed until the database is migrated: /readyz answers 503 meanwhile. */
  startupGate?: { readonly isOpen: boolean };
  /** Shared with the operator API: wrong tokens of either lock a client network out of both. */
  tokenLockout: TokenLockout;
}

export const operationsRoutes: CapabilityRoutes<OperationsOptions> = async (app, { config, db, metrics, startupGate, tokenLockout }) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'],
      summary: 'The process is up',
      response: { 200: Type.Object({ status: Type.Literal('ok') }) },
    },
  }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      summary: 'The database answers',
      response: { 200: Type.Object({ status: Type.Literal('ready') }), ...errorResponses(503) },
    },
  }, async () => {
    // Ready means migrated (startup.ts) and answering now.
    if (startupGate && !startupGate.isOpen) throw serviceUnavailable();
    try {
      await db.query('select 1');
    } catch {
      throw serviceUnavailable();
    }
    return { status: 'ready' as const };
  });

  app.get('/metrics', {
    schema: { tags: ['operations'], summary: 'Prometheus metrics', hide: true },
  }, async (request, reply) => {
    // With METRICS_TOKEN set, only a scraper holding it reads the service's internals (the operator's 401).
    const refusal = config.metricsToken ? tokenLockout.check(request, config.metricsToken, wrongMetricsToken) : undefined;
    if (refusal) throw refusal;
    reply.type(metrics.contentType);
    return metrics.metrics();
  });

  app.get('/openapi.json', {
    schema: { tags: ['operations'], summary: 'This OpenAPI 3.1 document', hide: true },
  }, async () => app.swagger());
};
