// The app factory (docs/architecture.md, habit 1): main.ts and the tests build the very same app through buildApp.
// It settles once, for every route, what docs/api-reference.md#basics and docs/api-reference.md#errors ask of the HTTP layer: request ids, the
// order of checks (401 → 429 → 403 → body → idempotency header → 422), the error model and JSON parsing.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController, type FastifyContextConfig, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest,
} from 'fastify';
import type { Registry } from 'prom-client';
import type { AppContext } from '../context.ts';
import { registerLedgerRoutes } from '../ledger/routes.ts';
import { registerAdminRoutes } from '../merchants/admin-routes.ts';
import { registerOnboardingRoutes } from '../onboarding/routes.ts';
import { registerQrRoutes } from '../qr/routes.ts';
import { registerTransferRoutes } from '../transfers/routes.ts';
import { registerEventRoutes } from '../webhooks/events-routes.ts';
import { registerWebhookEndpointRoutes } from '../webhooks/routes.ts';
import { isUuidV4 } from '../idempotency/service.ts';
import { KeyVerifier, isBearerAuthorization, type AuthRequirement, type Principal } from './auth.ts';
import { ApiError, validationError } from './errors.ts';
import { handleError, handleFrameworkError, handleNotFound, UNAVAILABLE_RETRY_AFTER_SECONDS } from './error-handler.ts';
import { createMetricsRegistry, httpMetrics } from './metrics.ts';
import { registerOperationsRoutes } from './operations-routes.ts';
import { RateLimiter, takeOrRefuse } from './rate-limit.ts';
import { ErrorSchema, StrictObject } from './schemas.ts';
import { parseJsonBody, unknownFieldErrors, validatorCompiler } from './validation.ts';
import { accessLogger, createLogger, lazyChildLogger, logBackgroundError, logResponse } from './logging.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (default: anyone). */
    auth?: AuthRequirement;
    /** Idempotency-Key header: required (400 when absent) or optional. */
    idempotency?: 'required' | 'optional';
    /** A module the merchant must have enabled (403 MODULE_NOT_ENABLED). */
    module?: 'ach';
    /** Terminal keys may call the route (QRs and their payments); elsewhere they get 403 KEY_SCOPE_INSUFFICIENT. */
    terminal?: true;
    /** The answer shows a secret (a new key, a signing secret): no cache may keep it (Cache-Control: no-store). */
    showsSecret?: true;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The Idempotency-Key header, validated and lower-cased. */
    idempotencyKey: string | null;
    /** Prototype-poisoning keys removed from the body, answered as 422 unknown_field. */
    forbiddenFields: string[] | null;
  }
}

export type App = FastifyInstance<
  import('node:http').Server, import('node:http').IncomingMessage, import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger, TypeBoxTypeProvider
>;

/** Largest request body (docs/api-reference.md#request-rules: 64 KiB → 413). */
export const BODY_LIMIT_BYTES = 64 * 1024;

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

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
}

/** The JSON API and the operator API (not the hosted pages, nor the operational routes). */
const API_PATH = /^\/(api\/v2|admin\/v1)\//;
const NO_QUERY = StrictObject({});

/**
 * Operational routes: liveness, readiness, metrics and the API description. They answer before the database
 * is ready, and are not rate limited by address (probes and scrapers call them from one address).
 */
const OPERATIONAL_PATH = /^\/(healthz|readyz|metrics|openapi\.json|docs)(\/|$)/;

export async function buildApp(context: AppContext, options: BuildAppOptions = {}): Promise<App> {
  const { config, db, clock } = context;
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
  }).withTypeProvider<TypeBoxTypeProvider>();

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

  const verifier = new KeyVerifier(db, clock, config.mode, (error, what) => logBackgroundError(app.log, error, what));
  const rateLimiter = config.rateLimit ? new RateLimiter(config.rateLimit) : null;
  const publicLimiter = config.publicRateLimit ? new RateLimiter(config.publicRateLimit) : null;
  /** The bucket of a client address (request.ip: X-Forwarded-For only from the proxies TRUST_PROXY names). */
  const addressKey = (request: FastifyRequest) => `address:${request.ip}`;
  const limitByAddress = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    done(takeOrRefuse(publicLimiter!, addressKey(request), reply));
  };
  app.addHook('onReady', () => verifier.start());
  app.addHook('onClose', () => verifier.stop());

  // Every answer names its request (docs/api-reference.md#request-ids). Set before anything can fail, so errors carry it too.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });

  // 401 → 429 → 403, before the body is read (docs/api-reference.md#order-of-checks). One hook per route, built when
  // the route is added, so a request does not look its route's options up (Fastify builds that object anew
  // on each access).
  const authenticatorFor = (requirement: Exclude<AuthRequirement, 'none'>, routeConfig: FastifyContextConfig | undefined) => {
    const module = routeConfig?.module;
    const terminalAllowed = routeConfig?.terminal === true;
    if (requirement === 'admin') {
      return async (request: FastifyRequest) => {
        if (!config.adminToken || !isBearerAuthorization(request.headers.authorization, config.adminToken)) {
          throw new ApiError('ADMIN_TOKEN_INVALID');
        }
      };
    }
    /** The checks after the key is known (429 → 403); the refusal, or undefined once the caller is admitted. */
    const admit = (request: FastifyRequest, reply: FastifyReply, principal: Principal | ApiError): ApiError | undefined => {
      if (principal instanceof ApiError) return principal;
      if (rateLimiter) {
        const refusal = takeOrRefuse(rateLimiter, principal.keyPrefix, reply);
        if (refusal) return refusal;
      }
      if (principal.kind === 'merchant' && principal.terminal && !terminalAllowed) return new ApiError('KEY_SCOPE_INSUFFICIENT');
      if (requirement === 'merchant' && principal.kind !== 'merchant') return new ApiError('MERCHANT_KEY_REQUIRED');
      if (requirement === 'partner' && principal.kind !== 'partner') return new ApiError('MASTER_KEY_REQUIRED');
      if (principal.kind === 'merchant') {
        if (principal.suspended) return new ApiError('MERCHANT_SUSPENDED');
        if (module === 'ach' && !principal.achEnabled) return new ApiError('MODULE_NOT_ENABLED');
      }
      request.principal = principal;
      return undefined;
    };
    // Callback style rather than async: a key verified in the last few seconds is admitted without a promise.
    return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      const header = request.headers['x-api-key'];
      if (typeof header !== 'string' || header === '') return done(new ApiError('API_KEY_MISSING'));
      // A key not verified lately costs a database lookup, paid for from the caller's address bucket: a flood
      // of made-up keys is limited like any request without a key.
      const verified = verifier.verify(header, publicLimiter ? () => takeOrRefuse(publicLimiter, addressKey(request), reply) : undefined);
      if (verified instanceof Promise) verified.then((principal) => done(admit(request, reply, principal)), done);
      else done(admit(request, reply, verified));
    };
  };

  // After the body is read, before validation: an empty POST is `{}`, then the Idempotency-Key header (400).
  const readIdempotencyKey = async (request: FastifyRequest) => {
    if (request.body === undefined && request.method === 'POST') request.body = {};
    const rule = request.routeOptions.config.idempotency;
    if (!rule) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined || header === '') {
      if (rule === 'required') throw new ApiError('IDEMPOTENCY_KEY_MISSING');
      return;
    }
    if (typeof header !== 'string' || !isUuidV4(header)) throw new ApiError('IDEMPOTENCY_KEY_INVALID');
    request.idempotencyKey = header.toLowerCase();
  };

  // Validation passed but prototype-poisoning keys were removed: they are unknown fields all the same.
  const refuseForbiddenFields = async (request: FastifyRequest) => {
    if (request.forbiddenFields?.length) throw validationError(unknownFieldErrors(request.forbiddenFields));
  };

  const forbidCaching = (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('Cache-Control', 'no-store');
    done();
  };

  // Until the database is migrated, a request that would need it is answered 503 before anything else
  // runs; the gate's check is one property read, and it stays open once opened.
  const gate = options.startupGate;
  const untilReady = (_request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    if (gate!.isOpen) return done();
    done(new ApiError('SERVICE_UNAVAILABLE', { message: 'The service is starting: its database is not ready yet.', headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } }));
  };

  // Each route gets only the hooks it needs, so a POS poll does not pay for body and idempotency checks
  // and a public page does not pay for authentication: the check order is the same on every route.
  app.addHook('onRoute', (route) => {
    const routeConfig = route.config as FastifyContextConfig | undefined;
    const requirement = routeConfig?.auth ?? 'none';
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const readsBody = methods.some((method) => method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS');
    if (requirement !== 'none') route.onRequest = [authenticatorFor(requirement, routeConfig), ...hooksOf(route.onRequest)];
    if (routeConfig?.showsSecret) route.onRequest = [...hooksOf(route.onRequest), forbidCaching];
    const operational = OPERATIONAL_PATH.test(route.url);
    // Without a key (hosted pages, their status and form posts), each client address has its own bucket.
    if (requirement === 'none' && publicLimiter && !operational) route.onRequest = [limitByAddress, ...hooksOf(route.onRequest)];
    if (gate && !operational) route.onRequest = [untilReady, ...hooksOf(route.onRequest)];
    // A query parameter no route declares is refused like an unknown body field (422 unknown_field), on
    // every API route: `GET /balance?business_code=…` must not pass silently where the lists refuse it.
    if (API_PATH.test(route.url) && route.schema && !route.schema.querystring) route.schema.querystring = NO_QUERY;
    if (readsBody) {
      route.preValidation = [readIdempotencyKey, ...hooksOf(route.preValidation)];
      route.preHandler = [refuseForbiddenFields, ...hooksOf(route.preHandler)];
    }
  });

  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  const metrics = options.metrics ?? createMetricsRegistry();
  const countResponse = httpMetrics(metrics);
  const accessLog = accessLogger(app.log);
  // One synchronous hook for what every answered request leaves behind: its metrics and its log line.
  app.addHook('onResponse', (request, reply, done) => {
    countResponse(request, reply);
    logResponse(accessLog, request, reply);
    done();
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Merchant Payments Service',
        version: '2.0.0',
        description: 'QR pay-in, ACH pay-out, partner onboarding and balance movements in BOB. See README.md and docs/.',
      },
      servers: [{ url: config.publicBaseUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-KEY', description: 'Merchant API key (mk_…), terminal key (tk_…: QRs and their payments only) or partner master key (pk_master_…); _test_ keys in sandbox, _live_ keys in live mode' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN of the operator API' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });

  await app.register(async (scope) => registerOperationsRoutes(scope as unknown as App, context, metrics, gate));
  if (config.adminToken) {
    await app.register(async (scope) => registerAdminRoutes(scope as unknown as App, context), { prefix: '/admin/v1' });
  }
  await app.register(async (scope) => registerLedgerRoutes(scope as unknown as App, context));
  await app.register(async (scope) => registerQrRoutes(scope as unknown as App, context));
  await app.register(async (scope) => registerTransferRoutes(scope as unknown as App, context));
  await app.register(async (scope) => registerOnboardingRoutes(scope as unknown as App, context));
  await app.register(async (scope) => registerWebhookEndpointRoutes(scope as unknown as App, context));
  await app.register(async (scope) => registerEventRoutes(scope as unknown as App, context));
  for (const plugin of options.plugins ?? []) await app.register(plugin, context);
  return app as unknown as App;
}

/** A route option's hooks as a list (Fastify accepts one function or an array). */
function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}
