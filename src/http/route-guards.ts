// The checks every route gets according to what it declares (src/kernel/routes.ts), attached when the route
// is added: a POS poll pays for no body or idempotency check, a public page for no authentication, and the
// order of checks is the same on every route (docs/api-reference.md#order-of-checks).
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUuidV4 } from '../idempotency/service.ts';
import { clientNetworkOf } from '../ip.ts';
import { ApiError, serviceUnavailable, validationError } from '../kernel/errors.ts';
import { BEARER_TOKEN_REQUIREMENTS, type AuthRequirement } from '../kernel/principal.ts';
import { StrictObject } from '../kernel/schemas.ts';
import { unknownFieldErrors } from '../kernel/validation.ts';
import { authenticationHook, type AuthenticationDeps } from './auth.ts';
import { takeOrRefuse, type RateLimiter } from './rate-limit.ts';

export interface RouteGuardDeps extends AuthenticationDeps {
  /** Per client network, for what comes without a known key (PUBLIC_RATE_LIMIT); null: off. */
  publicLimiter: RateLimiter | null;
  /** Closed while the database is not migrated yet (src/startup.ts); absent: always open. */
  startupGate?: { readonly isOpen: boolean };
}

/** The JSON API and the operator API (not the hosted pages, nor the operational routes). */
export const API_PATH = /^\/(api\/v2|admin\/v1)\//;
const NO_QUERY = StrictObject({});

/**
 * Operational routes: liveness, readiness, metrics and the API description. They answer before the database
 * is ready, and are not rate limited by address (probes and scrapers call them from one address).
 */
const OPERATIONAL_PATH = /^\/(healthz|readyz|metrics|openapi\.json|docs)(\/|$)/;

/** Methods whose missing body is read as `{}`: a POST whose fields are all optional may be sent bare. */
export const BODY_MAY_BE_LEFT_OUT = new Set(['POST']);

/** After the body is read, before validation: an empty POST is `{}`, then the Idempotency-Key header (400). */
async function readIdempotencyKey(request: FastifyRequest) {
  if (request.body === undefined && BODY_MAY_BE_LEFT_OUT.has(request.method)) request.body = {};
  const rule = request.routeOptions.config.idempotency;
  if (!rule) return;
  const header = request.headers['idempotency-key'];
  if (header === undefined || header === '') {
    if (rule === 'required') throw new ApiError('IDEMPOTENCY_KEY_MISSING');
    return;
  }
  if (typeof header !== 'string' || !isUuidV4(header)) throw new ApiError('IDEMPOTENCY_KEY_INVALID');
  request.idempotencyKey = header.toLowerCase();
}

/** Validation passed but prototype-poisoning keys were removed: they are unknown fields all the same. */
async function refuseForbiddenFields(request: FastifyRequest) {
  if (request.forbiddenFields?.length) throw validationError(unknownFieldErrors(request.forbiddenFields));
}

function forbidCaching(_request: FastifyRequest, reply: FastifyReply, done: () => void) {
  reply.header('Cache-Control', 'no-store');
  done();
}

/**
 * An answer that depends on who asked is the asker's alone: no shared cache keeps it (a proxy that cached
 * one merchant's balance could serve it to the next), and any cache keys it by the credential. Where an
 * ETag lets the client revalidate (a QR's long poll), its own cache may keep it but must ask each time.
 * Set before authentication, so the 401s and 429s carry it too.
 */
function privateAnswers(requirement: AuthRequirement, routeConfig: FastifyContextConfig | undefined) {
  const cacheControl = routeConfig?.etag ? 'private, no-cache' : 'no-store';
  const vary = BEARER_TOKEN_REQUIREMENTS.has(requirement) ? 'Authorization' : 'X-API-KEY';
  return (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('Cache-Control', cacheControl);
    reply.header('Vary', vary);
    done();
  };
}

export function attachRouteGuards(app: FastifyInstance, deps: RouteGuardDeps): void {
  const { publicLimiter, startupGate: gate } = deps;
  const limitByAddress = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    done(takeOrRefuse(publicLimiter!, clientNetworkOf(request.ip), reply));
  };
  // Until the database is migrated, a request that would need it is answered 503 before anything else
  // runs; the gate's check is one property read, and it stays open once opened.
  const untilReady = (_request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    if (gate!.isOpen) return done();
    done(serviceUnavailable('The service is starting: its database is not ready yet.'));
  };

  app.addHook('onRoute', (route) => {
    const routeConfig = route.config as FastifyContextConfig | undefined;
    const requirement = routeConfig?.auth ?? 'none';
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const readsBody = methods.some((method) => method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS');
    const operational = OPERATIONAL_PATH.test(route.url);
    // Hooks are prepended: the last added runs first (gate → address limit → private → authentication → no-store).
    if (requirement !== 'none') route.onRequest = [authenticationHook(requirement, routeConfig, deps), ...hooksOf(route.onRequest)];
    if (requirement !== 'none') route.onRequest = [privateAnswers(requirement, routeConfig), ...hooksOf(route.onRequest)];
    if (routeConfig?.showsSecret) route.onRequest = [...hooksOf(route.onRequest), forbidCaching];
    // Without a key (hosted pages, their status and form posts), each client network has its own bucket.
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
}

/** A route option's hooks as a list (Fastify accepts one function or an array). */
function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}
