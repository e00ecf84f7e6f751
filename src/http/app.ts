// The HTTP service (docs/architecture.md, habit 1): main.ts and the tests build the very same app through
// buildApp. It settles once, for every route, what docs/api-reference.md#basics asks of the HTTP layer —
// request ids, JSON parsing, the checks each route declares (route-guards.ts), the error model, metrics and
// the access log — and registers each capability's routes, a typed plugin given the AppContext. The
// long-lived parts it serves with (the key cache, the QR render threads and read model, the transfer queue)
// come built in that context (src/composition.ts); whoever listens starts and stops them (context.lifecycle).
// Capabilities never import this file.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { AppContext, CapabilityRoutes } from '../context.ts';
import { accessLogger, createLogger, lazyChildLogger, logResponse } from '../kernel/logging.ts';
import type { App } from '../kernel/routes.ts';
import { ErrorSchema } from '../kernel/schemas.ts';
import { parseJsonBody, validatorCompiler } from '../kernel/validation.ts';
import { railAdminRoutes } from '../bank/admin-routes.ts';
import { registerReconciliationMetrics } from '../bank/metrics.ts';
import { bankRoutes } from '../bank/routes.ts';
import { ledgerAdminRoutes } from '../ledger/admin-routes.ts';
import { ledgerRoutes } from '../ledger/routes.ts';
import { refundAdminRoutes } from '../refunds/admin-routes.ts';
import { refundRoutes } from '../refunds/routes.ts';
import { consoleRoutes } from '../console/routes.ts';
import { adminRoutes } from '../merchants/admin-routes.ts';
import { onboardingRoutes } from '../onboarding/routes.ts';
import { payoutAdminRoutes } from '../payouts/admin-routes.ts';
import { qrRoutes } from '../qr/routes.ts';
import { transferRoutes } from '../transfers/routes.ts';
import { userAdminRoutes } from '../users/admin-routes.ts';
import { eventRoutes } from '../webhooks/events-routes.ts';
import { webhookEndpointRoutes } from '../webhooks/routes.ts';
import { handleError, handleFrameworkError, handleNotFound } from './error-handler.ts';
import { completeDocument, readingView, type DocumentedRoute } from './openapi.ts';
import { createMetricsRegistry, httpMetrics } from './metrics.ts';
import { operationsRoutes } from './operations-routes.ts';
import { RateLimiter } from './rate-limit.ts';
import { answerClientError, limitConnectionsPerAddress, serverTimeouts } from './connections.ts';
import { attachRouteGuards } from './route-guards.ts';
import { TokenLockout } from './token-lockout.ts';

export type { App } from '../kernel/routes.ts';

/**
 * The Content-Security-Policy of /docs: @fastify/swagger-ui's own (`staticCSP: true`) plus the hash of the one
 * inline stylesheet swagger-ui renders, the `<style>` inside the Swagger logo of its top bar
 * (`.logo_small_svg__cls-2{fill:#fff}…`, drawn before the plugin swaps in its own logo), which that policy
 * refused with an error in the console on every load. Nothing else inline is allowed. A swagger-ui upgrade
 * that changes the stylesheet fails test/http/docs.browser.test.ts, which names the new hash.
 */
const DOCS_CSP = "default-src 'self'; base-uri 'self'; font-src 'self' https: data:; frame-ancestors 'self'; "
  + "img-src 'self' data: validator.swagger.io; object-src 'none'; script-src 'self'; script-src-attr 'none'; "
  + "style-src 'self' https: 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; upgrade-insecure-requests;";

/** Largest request body (docs/api-reference.md#request-rules: 64 KiB → 413). */
export const BODY_LIMIT_BYTES = 64 * 1024;

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The operator API's routes (/admin/v1, only while ADMIN_TOKEN is set), each capability's own. */
const OPERATOR_ROUTES: CapabilityRoutes[] = [adminRoutes, userAdminRoutes, ledgerAdminRoutes, payoutAdminRoutes, refundAdminRoutes, railAdminRoutes];

/** The public API's capabilities, each a plugin of its own routes. */
const CAPABILITY_ROUTES: CapabilityRoutes[] = [ledgerRoutes, qrRoutes, transferRoutes, refundRoutes, onboardingRoutes, webhookEndpointRoutes, eventRoutes, bankRoutes, consoleRoutes];

export interface BuildAppOptions {
  /** Extra plugins registered after the service's own routes (tests use it for fixture routes). */
  plugins?: FastifyPluginAsync<AppContext>[];
  /** Logger destination override (tests silence it). */
  logger?: import('fastify').FastifyBaseLogger;
  /** Registry served on /metrics; main.ts shares it with the background jobs so their metrics appear too. */
  metrics?: Registry;
  /**
   * Closed while the service waits for its database at start (src/startup.ts): every route but the
   * operational ones answers 503 with Retry-After. Without one the database is taken as ready (tests).
   */
  startupGate?: { readonly isOpen: boolean };
  /**
   * Only the operational routes — /healthz, /readyz, /metrics (ROLE=worker: a supervisor and Prometheus
   * reach a worker process as they reach an API process, and its jobs' metrics are served).
   */
  operationsOnly?: boolean;
}

export async function buildApp(context: AppContext, options: BuildAppOptions = {}): Promise<App> {
  const { config, db } = context;
  const logger = options.logger ?? createLogger(config.logLevel);
  const app = Fastify({
    loggerInstance: logger,
    // One line per request, written by logResponse when the response is sent, instead of
    // Fastify's two (incoming + completed) with the raw URL, which would put pay and onboarding tokens
    // into the logs and double the logging cost of every POS poll.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request) => {
      const header = request.headers['x-request-id'];
      return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : crypto.randomUUID();
    },
    frameworkErrors: handleFrameworkError,
    // Fastify's closing 503 has its own body shape; requests that arrive while draining are served normally.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    // request.ip reads X-Forwarded-For only when the connection comes from a proxy TRUST_PROXY names.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    // Slow clients (connections.ts): the headers in 15 s, the whole request in 30 s, by default.
    ...serverTimeouts(config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs),
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (config.connectionsPerAddress !== null) limitConnectionsPerAddress(app.server, config.connectionsPerAddress, config.trustProxy);

  app.setValidatorCompiler(validatorCompiler);
  app.decorateRequest('principal', null);
  app.decorateRequest('idempotencyKey', null);
  app.decorateRequest('forbiddenFields', null);
  app.addSchema(ErrorSchema);

  // Only JSON bodies are read (415 for anything else); hosted pages add their own form parser in their scope.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (request.is404) return done(null, undefined); // an unknown route is a 404 whatever its body
    try {
      const { body, forbiddenFields } = parseJsonBody(text as string);
      if (forbiddenFields.length > 0) request.forbiddenFields = forbiddenFields;
      done(null, body);
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // Every answer names its request (docs/api-reference.md#request-ids). Set before anything can fail, so errors carry it too.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  const tokenLockout = new TokenLockout(context.clock);
  attachRouteGuards(app, {
    verifier: context.keys,
    tokenLockout,
    metricsToken: config.metricsToken,
    rateLimiter: config.rateLimit ? new RateLimiter(config.rateLimit, context.clock) : null,
    adminToken: config.adminToken,
    publicLimiter: context.publicLimiter,
    startupGate: options.startupGate,
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  const metrics = options.metrics ?? createMetricsRegistry();
  const countResponse = httpMetrics(metrics);
  registerReconciliationMetrics(metrics, db, config.serviceTimeZone);
  const accessLog = accessLogger(app.log);
  // One synchronous hook for what every answered request leaves behind: its metrics and its log line.
  app.addHook('onResponse', (request, reply, done) => {
    countResponse(request, reply);
    logResponse(accessLog, request, reply);
    done();
  });

  // The routes' options, read when /openapi.json is first built (src/http/openapi.ts).
  const documentedRoutes: DocumentedRoute[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) documentedRoutes.push({ method, url: route.url, config: route.config ?? {} });
  });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Merchant Payments Service',
        version: '2.0.0',
        description: 'QR pay-in, ACH pay-out, partner onboarding and balance movements in BOB. See README.md and docs/.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY', description: 'Merchant API key (mk_…), terminal key (tk_…: QRs and their payments only) or partner master key (pk_master_…); _test_ keys in sandbox, _live_ keys in live mode' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN of the operator API' },
        },
      },
    },
    transformObject: completeDocument(documentedRoutes) as never,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  if (!options.operationsOnly) await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP, transformSpecification: readingView });

  await app.register(operationsRoutes, { ...context, metrics, startupGate: options.startupGate });
  if (options.operationsOnly) return app;
  if (config.adminToken) {
    for (const routes of OPERATOR_ROUTES) await app.register(routes, { ...context, prefix: '/admin/v1' });
  }
  for (const routes of CAPABILITY_ROUTES) await app.register(routes, context);
  for (const plugin of options.plugins ?? []) await app.register(plugin, context);
  return app;
}
