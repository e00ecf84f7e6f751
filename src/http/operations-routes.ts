// Routes for operators and tooling (docs/api-reference.md#operations): liveness, readiness, Prometheus metrics, the OpenAPI document.
import { Type } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import type { AppContext, CapabilityRoutes } from '../context.ts';
import { serviceUnavailable } from '../kernel/errors.ts';
import { errorResponses } from '../kernel/schemas.ts';
import { SERVICE_VERSION } from '../version.ts';

export interface OperationsOptions extends AppContext {
  /** The registry /metrics serves (shared with the background jobs in one process). */
  metrics: Registry;
  /** Closed until the database is migrated: /readyz answers 503 meanwhile. */
  startupGate?: { readonly isOpen: boolean };
}

export const operationsRoutes: CapabilityRoutes<OperationsOptions> = async (app, { db, metrics, startupGate }) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'],
      summary: 'The process is up, and its version',
      response: {
        200: Type.Object({
          status: Type.Literal('ok'),
          version: Type.String({ description: "The service's semantic version (package.json; CHANGELOG.md)" }),
        }),
      },
    },
  }, async () => ({ status: 'ok' as const, version: SERVICE_VERSION }));

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
    config: { auth: 'metrics' }, // METRICS_TOKEN, when set (src/http/auth.ts)
  }, async (_request, reply) => {
    reply.type(metrics.contentType);
    return metrics.metrics();
  });

  app.get('/openapi.json', {
    schema: { tags: ['operations'], summary: 'This OpenAPI 3.1 document', hide: true },
  }, async () => app.swagger());
};
