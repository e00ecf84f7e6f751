// The routes to fuzz, read from the service's own OpenAPI document (GET /openapi.json), which is generated
// from the TypeBox schemas that validate the requests: every operation with a body, query parameters or
// path parameters, with its schemas and who may call it.
import type { HttpRequest } from './http.ts';
import { percentEncode } from './http.ts';
import type { JsonSchema } from './json-schema-arbitrary.ts';

export type Caller = 'merchant' | 'partner' | 'admin' | 'public';

export interface Parameter {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

export interface Route {
  method: string;
  /** The OpenAPI path, e.g. `/api/v2/transfers/{id}/cancel`. */
  template: string;
  pathParameters: Parameter[];
  queryParameters: Parameter[];
  /** The JSON body's schema; null when the operation takes no body. */
  body: JsonSchema | null;
  caller: Caller;
}

interface OpenApiOperation {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: JsonSchema }>;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  security?: Array<Record<string, unknown>>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

/** Every operation of the document that takes a body, query parameters or path parameters. */
export function fuzzableRoutes(document: OpenApiDocument): Route[] {
  const routes: Route[] = [];
  for (const [template, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const parameters = operation.parameters ?? [];
      const parametersIn = (where: string) => parameters.filter((p) => p.in === where)
        .map((p) => ({ name: p.name, required: p.required ?? where === 'path', schema: p.schema }));
      const bodyContent = operation.requestBody?.content;
      if (bodyContent && !bodyContent['application/json']) throw new Error(`${method} ${template} takes a body other than JSON`);
      const route: Route = {
        method: method.toUpperCase(),
        template,
        pathParameters: parametersIn('path'),
        queryParameters: parametersIn('query'),
        body: bodyContent?.['application/json']?.schema ?? null,
        caller: callerOf(template, operation),
      };
      if (route.body || route.pathParameters.length > 0 || route.queryParameters.length > 0) routes.push(route);
    }
  }
  return routes;
}

/**
 * The document says which security scheme a route takes, not whether an API key must be a merchant's or a
 * partner's: the partner API is the onboarding intents (docs/api-reference.md, Onboarding); every other keyed route takes a
 * merchant key (the webhook and event routes take either, and are driven with the merchant's).
 */
function callerOf(template: string, operation: OpenApiOperation): Caller {
  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (schemes.includes('adminToken')) return 'admin';
  if (!schemes.includes('apiKey')) return 'public';
  return template.startsWith('/api/v2/onboarding/') ? 'partner' : 'merchant';
}

export const routeName = (route: Route) => `${route.method} ${route.template}`;

/**
 * One request to a route, in parts that mutations change one at a time. Path values are already
 * percent-encoded (a mutation may need a raw `%`); query pairs are plain text, encoded when sent.
 */
export interface RequestParts {
  path: Record<string, string>;
  query: Array<[string, string]>;
  /** A JSON value sent as application/json, or exact text with its own Content-Type (none when absent). */
  body?: { json: unknown } | { text: string | Buffer; contentType?: string };
  headers?: Record<string, string>;
}

/** Marks, inside a JSON string, JSON text the serializer cannot write (99999999999999999999, 40 000 levels of `[`). */
const RAW_TOKEN = /"\u{F0000}([A-Za-z0-9+/=]*)\u{F0000}"/gu;

/** A value that `toJsonText` writes as `json`, verbatim. */
export function rawToken(json: string): string {
  return `\u{F0000}${Buffer.from(json).toString('base64')}\u{F0000}`;
}

export function toJsonText(value: unknown): string {
  return JSON.stringify(value).replace(RAW_TOKEN, (_match, base64: string) => Buffer.from(base64, 'base64').toString());
}

export function renderRequest(route: Route, parts: RequestParts, credentials: Record<string, string>): HttpRequest {
  const path = route.template.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = parts.path[name];
    if (value === undefined) throw new Error(`no value for the path parameter ${name} of ${routeName(route)}`);
    return value;
  });
  const query = parts.query.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join('&');
  const headers: Record<string, string> = { accept: 'application/json', ...credentials, ...parts.headers };
  let body: string | Buffer | undefined;
  if (parts.body && 'json' in parts.body) {
    body = toJsonText(parts.body.json);
    headers['content-type'] = 'application/json';
  } else if (parts.body) {
    body = parts.body.text;
    if (parts.body.contentType !== undefined) headers['content-type'] = parts.body.contentType;
  }
  return { method: route.method, target: query === '' ? path : `${path}?${query}`, headers, body };
}
