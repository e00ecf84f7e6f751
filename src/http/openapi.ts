// What /openapi.json says beyond the routes' TypeBox schemas, so that it tells the truth about the
// service (docs/api-reference.md): the headers the HTTP layer reads and sets (Idempotency-Key,
// If-None-Match / ETag, Idempotent-Replayed, X-Request-Id, Retry-After, RateLimit-*), the statuses
// every body-taking route can answer before its handler runs (400, 413, 415), bodies that may be left
// out, and an example of each error code under the status that answers it. The route options the
// guards enforce (config.idempotency, config.auth, config.etag) are the single source: the document is
// derived from them, never written beside them.
import type { FastifyContextConfig } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode } from '../kernel/errors.ts';
import { API_PATH } from './route-guards.ts';

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
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The error codes answered with `status`, each as a named example of the Error object. */
function errorExamples(status: number): Json | null {
  const codes = (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => ERROR_CATALOGUE[code].status === status);
  if (codes.length === 0) return null;
  return Object.fromEntries(codes.map((code) => {
    const entry = ERROR_CATALOGUE[code];
    const value: Json = { type: entry.type, code, message: entry.message };
    if (code === 'VALIDATION_FAILED') value.errors = [{ field: 'amount', code: 'too_small', message: 'must be at least 0.10' }];
    return [code, { summary: code, value }];
  }));
}

const ERROR_RESPONSE = (): Json => ({
  description: 'Every error: type, code and message; a 422 also lists each failing field.',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

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
    const document = structuredClone(openapiObject);
    // Relative: "Try it out" in /docs calls the origin the page was opened from, whatever the host name.
    document.servers = [{ url: '/', description: 'This service' }];
    document.components ??= {};
    document.components.headers = HEADERS;
    for (const [path, operations] of Object.entries<Json>(document.paths ?? {})) {
      for (const [method, operation] of Object.entries<Json>(operations)) {
        const config = configs.get(`${method} ${path}`) ?? {};
        completeOperation(path, method, operation, config);
      }
    }
    return document;
  };
}

function completeOperation(path: string, method: string, operation: Json, config: FastifyContextConfig): void {
  const responses: Json = (operation.responses ??= {});
  const parameters: Json[] = (operation.parameters ??= []);

  // A body whose every field is optional may be left out altogether (the service reads none as {}).
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  if (operation.requestBody && isEmptyObjectSchema(bodySchema)) operation.requestBody.required = false;

  // Refusals of the body, before any handler: malformed JSON, too large, not JSON.
  if (BODY_METHODS.has(method)) {
    for (const status of [400, 413, 415]) responses[status] ??= ERROR_RESPONSE();
  }

  if (config.idempotency) {
    parameters.push({
      in: 'header', name: 'Idempotency-Key', required: config.idempotency === 'required',
      description: 'A UUID v4 naming this operation: a retry with the same key and body gets the stored answer, never a second effect.',
      schema: { type: 'string', format: 'uuid' },
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

  const limited = config.auth !== undefined || operation.tags?.includes('hosted pages');
  if (limited) responses[429] ??= ERROR_RESPONSE();
  // The API refuses a query parameter it does not declare (422 unknown_field), on every operation.
  if (API_PATH.test(path)) responses[422] ??= ERROR_RESPONSE();

  for (const [statusText, response] of Object.entries<Json>(responses)) {
    const status = Number(statusText);
    const headers: Json = (response.headers ??= {});
    headers['X-Request-Id'] = headerRef('X-Request-Id');
    if (status === 429 || status === 503) headers['Retry-After'] = headerRef('Retry-After');
    if (limited) {
      for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) headers[name] = headerRef(name);
    }
    if (config.etag && status === 200) headers.ETag = headerRef('ETag');
    if (config.idempotency && status >= 200 && status < 500) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
    const media = response.content?.['application/json'];
    if (media?.schema?.$ref === '#/components/schemas/Error') {
      const examples = errorExamples(status);
      if (examples) media.examples = examples;
    }
  }
}
