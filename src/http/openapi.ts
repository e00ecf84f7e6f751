// What /openapi.json says beyond the routes' TypeBox schemas, so that it tells the truth about the
// service (docs/api-reference.md): the headers the HTTP layer reads and sets (Idempotency-Key,
// If-None-Match / ETag, Idempotent-Replayed, X-Request-Id, Retry-After, RateLimit-*), the statuses
// every body-taking route can answer before its handler runs (400, 413, 415), bodies that may be left
// out, and an example of each error code under the status that answers it. The route options the
// guards enforce (config.idempotency, config.auth, config.etag) are the single source: the document is
// derived from them, never written beside them.
import type { FastifyContextConfig } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode } from '../kernel/errors.ts';
import { UUID_V4_PATTERN } from '../idempotency/service.ts';
import { API_PATH, BODY_MAY_BE_LEFT_OUT } from './route-guards.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A route as the document needs it: its method, URL (Fastify's `:param` form) and options. */
export interface DocumentedRoute {
  method: string;
  url: string;
  config: FastifyContextConfig;
}

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

const HEADERS: Json = {
  'X-Request-Id': { description: 'Names the request in the service\'s logs; sent on every answer (the caller\'s own value when it sent a well-formed one).', schema: { type: 'string' } },
  ETag: { description: 'Strong tag of the representation; send it back in If-None-Match for a 304.', schema: { type: 'string' } },
  'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
  'Retry-After': { description: 'Whole seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Limit': { description: 'The burst of the caller\'s token bucket.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the bucket now.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the bucket is full again.', schema: { type: 'integer' } },
};
/**
 * The document's tags in the order /docs lists them: the merchant API first (money in, money out, what
 * happened), then what a partner and the sandbox add, the hosted pages' status, and last the service's own
 * probes and the operator API. A tag the routes use and this list lacks is appended, never lost.
 */
export const TAGS: readonly { name: string; description: string }[] = [
  { name: 'balance', description: 'The merchant\'s balance, its movements and statements' },
  { name: 'simple-qrs', description: 'QR pay-in: create, read and cancel QRs, and their payments' },
  { name: 'transfers', description: 'ACH pay-out to a bank account, and the banks it reaches' },
  { name: 'refunds', description: 'Giving back a QR payment' },
  { name: 'webhooks', description: 'The endpoints events are delivered to' },
  { name: 'events', description: 'What happened, as delivered to webhooks; read and redeliver' },
  { name: 'onboarding', description: 'Partners registering merchants through a hosted form' },
  { name: 'sandbox', description: 'Sandbox mode only: simulate payers and the bank' },
  { name: 'hosted pages', description: 'The status the hosted payment page polls' },
  { name: 'operations', description: 'Liveness and readiness probes' },
  { name: 'operator', description: 'Operator API (/admin/v1, ADMIN_TOKEN): partners, merchants, keys, the rails and the ledger' },
];

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** One example of the Error object per code, referenced from each response that can answer it. */
function errorExamples(): Json {
  return Object.fromEntries((Object.keys(ERROR_CATALOGUE) as ErrorCode[]).map((code) => {
    const entry = ERROR_CATALOGUE[code];
    const value: Json = { type: entry.type, code, message: entry.message };
    if (code === 'VALIDATION_FAILED') value.errors = [{ field: 'amount', code: 'too_small', message: 'must be at least 0.10' }];
    return [code, { summary: code, value }];
  }));
}

/** Codes tied to a feature of the route, shown only where the route has it. */
const IDEMPOTENCY_CODES: readonly ErrorCode[] = ['IDEMPOTENCY_KEY_MISSING', 'IDEMPOTENCY_KEY_INVALID', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED'];

/** The codes of the catalogue answered with `status` that this route can answer. */
function codesAnswering(status: number, path: string, config: FastifyContextConfig): ErrorCode[] {
  return (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => ERROR_CATALOGUE[code].status === status
    && (config.idempotency !== undefined || !IDEMPOTENCY_CODES.includes(code))
    && (path.startsWith('/admin/') === (code === 'ADMIN_TOKEN_INVALID') || ERROR_CATALOGUE[code].status !== 401));
}

const ERROR_RESPONSE = (): Json => ({
  description: 'Every error: type, code and message; a 422 also lists each failing field.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/**
 * What a success answers, for the responses whose schema has no description of its own (@fastify/swagger
 * titles them "Default Response").
 */
function successDescription(status: number, method: string, operation: Json, response: Json): string {
  const schema = response.content?.['application/json']?.schema;
  if (status === 201) return 'Created: the body is what was created';
  if (status === 202) return 'Accepted: the body names what was queued';
  if (status === 204) return 'Done: no body';
  if (schema?.properties?.data?.type === 'array') return schema.properties.meta ? 'One page: the items in data, which page in meta' : 'Every item, in data';
  // A read's summary says what it answers; a change answers the resource as it is now.
  return method === 'get' && typeof operation.summary === 'string' ? operation.summary : 'Done: the body is the resource as it is now';
}

/** `/api/v2/transfers/:id/cancel` → `/api/v2/transfers/{id}/cancel`, the document's form. */
function documentPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}

function isEmptyObjectSchema(schema: Json | undefined): boolean {
  return schema?.type === 'object' && (schema.required === undefined || schema.required.length === 0);
}

/** The `transformObject` of @fastify/swagger: the generated document, completed from the routes' options. */
export function completeDocument(routes: readonly DocumentedRoute[]) {
  return ({ openapiObject }: { openapiObject: Json }): Json => {
    // Read now, not when the plugin was registered: `routes` fills as the capabilities register.
    const configs = new Map(routes.map((route) => [`${route.method.toLowerCase()} ${documentPath(route.url)}`, route.config]));
    const document = openapiObject; // built afresh for each call; the plugin caches what this returns
    // Relative: "Try it out" in /docs calls the origin the page was opened from, whatever the host name.
    document.servers = [{ url: '/', description: 'This service' }];
    const used = new Set(Object.values<Json>(document.paths ?? {}).flatMap((operations) => Object.values<Json>(operations).flatMap((operation) => operation.tags ?? [])));
    document.tags = [...TAGS.filter((tag) => used.has(tag.name)), ...[...used].filter((name) => !TAGS.some((tag) => tag.name === name)).map((name) => ({ name }))];
    document.components ??= {};
    document.components.headers = HEADERS;
    document.components.examples = errorExamples();
    for (const [path, operations] of Object.entries<Json>(document.paths ?? {})) {
      for (const [method, operation] of Object.entries<Json>(operations)) {
        const config = configs.get(`${method} ${path}`) ?? {};
        completeOperation(path, method, operation, config);
      }
    }
    shareErrorResponses(document);
    return document;
  };
}

function completeOperation(path: string, method: string, operation: Json, config: FastifyContextConfig): void {
  const responses: Json = (operation.responses ??= {});
  const parameters: Json[] = (operation.parameters ??= []);

  // A POST body whose every field is optional may be left out altogether (the guards read none as {}).
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  if (operation.requestBody && BODY_MAY_BE_LEFT_OUT.has(method.toUpperCase()) && isEmptyObjectSchema(bodySchema)) {
    operation.requestBody.required = false;
  }

  // Refusals of the body, before any handler: malformed JSON, too large, not JSON.
  if (BODY_METHODS.has(method)) {
    for (const status of [400, 413, 415]) responses[status] ??= ERROR_RESPONSE();
  }

  if (config.idempotency) {
    parameters.push({
      in: 'header', name: 'Idempotency-Key', required: config.idempotency === 'required',
      description: 'A UUID v4 naming this operation: a retry with the same key and body gets the stored answer, never a second effect.',
      schema: { type: 'string', pattern: UUID_V4_PATTERN },
    });
  }
  if (config.etag) {
    parameters.push({
      in: 'header', name: 'If-None-Match', required: false,
      description: 'The ETag of the representation the caller holds: 304 without a body while it is unchanged (with ?wait=N, held until it changes).',
      schema: { type: 'string' },
    });
    // Without a body: not the `null` the route's schema types its reply with.
    responses[304] = { description: 'Not modified: the representation is the one named by If-None-Match.', headers: { ETag: headerRef('ETag') } };
  }
  if (parameters.length === 0) delete operation.parameters;

  // Keys spend from the key's bucket, keyless routes from the address's; the operator token from none.
  const limited = (config.auth !== undefined && config.auth !== 'admin') || operation.tags?.includes('hosted pages');
  if (limited) responses[429] ??= ERROR_RESPONSE();
  // The API refuses a query parameter it does not declare (422 unknown_field), on every operation.
  if (API_PATH.test(path)) responses[422] ??= ERROR_RESPONSE();

  for (const [statusText, response] of Object.entries<Json>(responses)) {
    const status = Number(statusText);
    if (response.description === 'Default Response') response.description = successDescription(status, method, operation, response);
    const headers: Json = (response.headers ??= {});
    headers['X-Request-Id'] = headerRef('X-Request-Id');
    if (status === 429 || status === 503) headers['Retry-After'] = headerRef('Retry-After');
    if (limited) {
      for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) headers[name] = headerRef(name);
    }
    if (config.etag && status === 200) headers.ETag = headerRef('ETag');
    // What is stored and replayed: the success, and a 400 such as INSUFFICIENT_FUNDS.
    if (config.idempotency && ((status >= 200 && status < 300) || status === 400)) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
    const media = response.content?.['application/json'];
    if (media?.schema?.$ref === '#/components/schemas/Error') {
      const codes = codesAnswering(status, path, config);
      if (codes.length > 0) media.examples = Object.fromEntries(codes.map((code) => [code, { $ref: `#/components/examples/${code}` }]));
    }
  }
}

const ERROR_NAMES: Record<string, string> = {
  400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 410: 'Gone',
  413: 'PayloadTooLarge', 415: 'UnsupportedMediaType', 422: 'UnprocessableContent', 429: 'TooManyRequests',
  500: 'InternalError', 502: 'BadGateway', 503: 'Unavailable',
};

/**
 * Every error response is declared once in `components.responses` and referenced from the operations that
 * answer it: the same status, headers (X-Request-Id, Retry-After, RateLimit-*, Idempotent-Replayed) and
 * examples were written out under each operation's every error (400 of them, 27 distinct). Named by status
 * and what sets them apart: Operator (the /admin/v1 token codes), RateLimited (RateLimit-* headers),
 * Idempotent (the Idempotency-Key codes or Idempotent-Replayed); a number tells apart any other difference.
 */
function shareErrorResponses(document: Json): void {
  const shared: Json = (document.components.responses ??= {});
  const nameOf = new Map<string, string>();
  for (const [path, operations] of Object.entries<Json>(document.paths ?? {})) {
    for (const operation of Object.values<Json>(operations)) {
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        if (response.content?.['application/json']?.schema?.$ref !== '#/components/schemas/Error') continue;
        const examples = Object.keys(response.content['application/json'].examples ?? {});
        const base = [
          path.startsWith('/admin/') ? 'Operator' : '',
          ERROR_NAMES[status] ?? `Error${status}`,
          response.headers?.['RateLimit-Limit'] ? 'RateLimited' : '',
          response.headers?.['Idempotent-Replayed'] || examples.some((code) => IDEMPOTENCY_CODES.includes(code as ErrorCode)) ? 'Idempotent' : '',
        ].join('');
        // Shared only under the same name: the API never refers to an Operator response, whatever its content.
        const key = `${base} ${JSON.stringify(response)}`;
        let name = nameOf.get(key);
        if (name === undefined) {
          name = base;
          for (let n = 2; shared[name] !== undefined; n++) name = `${base}${n}`;
          shared[name] = response;
          nameOf.set(key, name);
        }
        operation.responses[status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
}

/** The headers every answer (X-Request-Id) or every rate-limited answer (RateLimit-*) carries. */
const UBIQUITOUS_HEADERS = ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

/**
 * The document as /docs shows it to a reader: the same operations, without the headers that every answer
 * carries listed under each of its responses — swagger-ui draws a table of them under every status, some
 * 6,000 px per operation — but once, in the introduction. /openapi.json, which tools and the contract
 * tests read, keeps them on every response. Changes `document` (swagger-ui's routes hand over a copy).
 */
export function readingView(document: Json): Json {
  const responses = [
    ...Object.values<Json>(document.components?.responses ?? {}),
    ...Object.values<Json>(document.paths ?? {}).flatMap((operations) => Object.values<Json>(operations)
      .flatMap((operation) => Object.values<Json>(operation.responses ?? {}))),
  ];
  for (const response of responses) {
    if (!response.headers) continue;
    for (const name of UBIQUITOUS_HEADERS) delete response.headers[name];
    if (Object.keys(response.headers).length === 0) delete response.headers;
  }
  document.info.description = `${document.info.description ?? ''}\n\n`
    + '**Headers on every answer**, not repeated under each response here (the document at /openapi.json lists them on every one): '
    + '`X-Request-Id` names the request in the service\'s logs; on every route a key or a client address is counted on (all but `/admin/v1`), '
    + '`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` describe the caller\'s token bucket (docs/api-reference.md).';
  return document;
}
