// Operations endpoints of docs/api-reference.md#operations through the real app on both databases: liveness, readiness,
// Prometheus metrics labelled by route pattern, the OpenAPI 3.1 document (validated against the official
// schema by @seriousme/openapi-schema-validator) and the rendered reference at /docs.
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/kernel/errors.ts';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Resolves a local JSON pointer (`#/components/schemas/Error`) in `document`, or undefined. */
function resolvePointer(document: Json, ref: string): Json | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: Json | undefined = document;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(segment in node)) return undefined;
    node = (node as JsonObject)[segment];
  }
  return node;
}

/** Every `$ref` value anywhere in `node`. */
function collectRefs(node: Json, found: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, found);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else collectRefs(value, found);
    }
  }
  return found;
}

describe.each(databaseKinds())('operations endpoints on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t.close());

  it('GET /healthz answers 200 while the process is up, with the version of package.json', async () => {
    const response = await t.request('GET', '/healthz');
    expect(response.status).toBe(200);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/); // semantic
    expect(response.body).toEqual({ status: 'ok', version });
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it('GET /readyz answers 200 when the database answers', async () => {
    const response = await t.request('GET', '/readyz');
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ status: 'ready' });
  });

  describe('GET /metrics', () => {
    /** Metrics are recorded when a response has been sent; read them until `wanted` shows up (or give up). */
    async function metricsShowing(wanted: RegExp): Promise<TestResponse<string>> {
      let response = await t.request<string>('GET', '/metrics');
      for (let attempt = 0; attempt < 20 && !wanted.test(response.text); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        response = await t.request<string>('GET', '/metrics');
      }
      return response;
    }

    it('is Prometheus text with a request counter labelled by route pattern, never by raw path', async () => {
      const merchant = await t.createMerchant({ name: 'Métricas' });
      const listed = await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      expect(listed.status, listed.text).toBe(200);
      const unknown = await t.request('GET', '/api/v2/nothing-here/987654321');
      expect(unknown.status).toBe(404);

      const pattern = /^http_requests_total\{[^}]*route="\/admin\/v1\/merchants\/:business_code\/api-keys"[^}]*\} \d+/m;
      const response = await metricsShowing(pattern);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type') ?? '').toMatch(/^text\/plain; version=0\.0\.4/);
      const text = response.text;
      expect(text).toMatch(/^# TYPE http_requests_total counter$/m);
      expect(text).toMatch(pattern);
      const line = text.split('\n').find((candidate) => pattern.test(candidate))!;
      expect(line).toContain('method="GET"');
      expect(line).toContain('status_code="200"');
      // Ids never become label values (an unbounded label set would swamp Prometheus).
      expect(text).not.toContain(`/admin/v1/merchants/${merchant.businessCode}/api-keys`);
      expect(text).not.toContain('987654321');
    });

    it('has an http_request_duration_seconds histogram with buckets, sum and count', async () => {
      await t.request('GET', '/healthz');
      const response = await metricsShowing(/^http_request_duration_seconds_count\{[^}]*route="\/healthz"/m);
      const text = response.text;
      expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
      expect(text).toMatch(/^http_request_duration_seconds_bucket\{[^}]*le="\+Inf"[^}]*route="\/healthz"[^}]*\} [1-9]\d*$/m);
      expect(text).toMatch(/^http_request_duration_seconds_sum\{[^}]*route="\/healthz"[^}]*\} \d/m);
      expect(text).toMatch(/^http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} [1-9]\d*$/m);
    });

    it('writes only well-formed exposition lines', async () => {
      const response = await t.request<string>('GET', '/metrics');
      // Prometheus reads values with Go's ParseFloat, which takes NaN in any case (prom-client writes `Nan`
      // for the event-loop lag before its first sample).
      const sample = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (-?[0-9.]+(e[-+]?\d+)?|[Nn][Aa][Nn]|[+-]Inf)( -?\d+)?$/;
      const comment = /^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/;
      const bad = response.text.split('\n').filter((line) => line !== '' && !sample.test(line) && !comment.test(line));
      expect(bad).toEqual([]);
    });
  });

  describe('GET /openapi.json', () => {
    let document: JsonObject;
    beforeAll(async () => {
      const response = await t.request<JsonObject>('GET', '/openapi.json');
      expect(response.status, response.text).toBe(200);
      expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json/);
      document = response.body;
    });

    it('is OpenAPI 3.1.0', () => {
      expect(document.openapi).toBe('3.1.0');
      expect((document.info as JsonObject).title).toBeTruthy();
      expect((document.info as JsonObject).version).toBeTruthy();
    });

    it('validates against the OpenAPI 3.1 schema', async () => {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(document) as Record<string, unknown>);
      expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).toEqual([]);
      expect(result.valid).toBe(true);
      expect(validator.version).toBe('3.1');
    });

    it('gives every path at least one operation, and every operation its responses', () => {
      const paths = document.paths as JsonObject;
      expect(Object.keys(paths).length).toBeGreaterThan(0);
      for (const [path, item] of Object.entries(paths)) {
        const operations = HTTP_METHODS.filter((method) => (item as JsonObject)[method] !== undefined);
        expect(operations.length, `${path} has no operation`).toBeGreaterThan(0);
        for (const method of operations) {
          const operation = (item as JsonObject)[method] as JsonObject;
          const responses = operation.responses as JsonObject | undefined;
          expect(responses, `${method.toUpperCase()} ${path} has no responses`).toBeDefined();
          expect(Object.keys(responses!).length, `${method.toUpperCase()} ${path} has no responses`).toBeGreaterThan(0);
          for (const [status, response] of Object.entries(responses!)) {
            expect(status, `${method.toUpperCase()} ${path}`).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
            // An error response is shared in components.responses and referenced (src/http/openapi.ts).
            const ref = (response as JsonObject).$ref;
            const resolved = (typeof ref === 'string' ? resolvePointer(document, ref) : response) as JsonObject | undefined;
            expect(typeof resolved?.description, `${method.toUpperCase()} ${path} ${status} needs a description`).toBe('string');
          }
        }
      }
    });

    it('declares every path template parameter on every operation of its path', () => {
      for (const [path, item] of Object.entries(document.paths as JsonObject)) {
        const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
        for (const method of HTTP_METHODS) {
          const operation = (item as JsonObject)[method] as JsonObject | undefined;
          if (!operation) continue;
          const declared = [...((operation.parameters as JsonObject[] | undefined) ?? []), ...(((item as JsonObject).parameters as JsonObject[] | undefined) ?? [])]
            .filter((parameter) => parameter.in === 'path');
          for (const name of names) {
            const parameter = declared.find((candidate) => candidate.name === name);
            expect(parameter, `${method.toUpperCase()} ${path} does not declare path parameter ${name}`).toBeDefined();
            expect(parameter!.required).toBe(true);
          }
        }
      }
    });

    it('resolves every $ref inside the document', () => {
      const refs = collectRefs(document);
      expect(refs.length).toBeGreaterThan(0);
      const unresolved = [...new Set(refs)].filter((ref) => resolvePointer(document, ref) === undefined);
      expect(unresolved).toEqual([]);
    });

    it('describes the error body with every code of the catalogue', () => {
      const errorSchema = resolvePointer(document, '#/components/schemas/Error') as JsonObject | undefined;
      expect(errorSchema).toBeDefined();
      const properties = errorSchema!.properties as JsonObject;
      expect(Object.keys(properties).sort()).toEqual(['code', 'errors', 'message', 'type']);
      expect([...((properties.code as JsonObject).enum as string[])].sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
      expect([...(errorSchema!.required as string[])].sort()).toEqual(['code', 'message', 'type']);
    });

    it('documents the API routes with their security scheme and error responses', () => {
      const balance = (document.paths as JsonObject)['/api/v2/balance'] as JsonObject | undefined;
      expect(balance?.get, '/api/v2/balance is documented').toBeDefined();
      const operation = balance!.get as JsonObject;
      expect(operation.security).toEqual([{ apiKey: [] }]);
      const schemes = (document.components as JsonObject).securitySchemes as JsonObject;
      expect(schemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-KEY' });
      const unauthorized = resolvePointer(document, ((operation.responses as JsonObject)['401'] as JsonObject).$ref as string) as JsonObject;
      expect(collectRefs(unauthorized)).toContain('#/components/schemas/Error');
    });

    it('documents request bodies that reject unknown fields, as validation does', () => {
      const loose: string[] = [];
      for (const [path, item] of Object.entries(document.paths as JsonObject)) {
        for (const method of HTTP_METHODS) {
          const operation = (item as JsonObject)[method] as JsonObject | undefined;
          const schema = (((operation?.requestBody as JsonObject | undefined)?.content as JsonObject | undefined)?.['application/json'] as JsonObject | undefined)?.schema as JsonObject | undefined;
          if (schema && schema.type === 'object' && schema.additionalProperties !== false) loose.push(`${method.toUpperCase()} ${path}`);
        }
      }
      expect(loose).toEqual([]);
    });
  });

  it('GET /docs answers 200 with the rendered HTML reference', async () => {
    const response = await fetch(`${t.baseUrl}/docs`, { redirect: 'follow' });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type') ?? '').toMatch(/^text\/html/);
    expect(text).toMatch(/<html/i);
    expect(text.toLowerCase()).toContain('swagger');
  });
});
