// What /openapi.json says beyond the routes' schemas (src/http/openapi.ts), and the checker that holds
// every test request to it (helpers/contract-check.ts) — shown here to catch what it must catch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { ContractChecker } from '../helpers/contract-check.ts';

describe('the OpenAPI document', () => {
  let t: TestApp;
  let document: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    document = (await t.request('GET', '/openapi.json')).body;
  });
  afterAll(() => t.close());
  /** A response, or the shared one its `$ref` names. */
  const response = (documented: any): any => { // eslint-disable-line @typescript-eslint/no-explicit-any
    if (typeof documented?.$ref !== 'string') return documented;
    const name = documented.$ref.replace('#/components/responses/', '');
    expect(document.components.responses[name], documented.$ref).toBeDefined();
    return document.components.responses[name];
  };

  it('has a relative server, so "Try it out" works from whatever host /docs was opened at', () => {
    expect(document.servers).toEqual([{ url: '/', description: 'This service' }]);
  });

  it('lists its tags merchant API first, the probes and the operator API last, and every tag an operation uses', () => {
    const names = document.tags.map((tag: { name: string }) => tag.name);
    expect(names.slice(0, 3)).toEqual(['balance', 'simple-qrs', 'transfers']);
    expect(names.slice(-2)).toEqual(['operations', 'operator']);
    const used = new Set(Object.values<any>(document.paths).flatMap((operations) => Object.values<any>(operations).flatMap((operation) => operation.tags ?? []))); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(new Set(names)).toEqual(used);
    for (const tag of document.tags) expect(tag.description, tag.name).toBeTruthy();
  });

  it('describes every response (none is the plugin\'s "Default Response") and shows a business_code that is not 0', () => {
    for (const [path, methods] of Object.entries<any>(document.paths)) { // eslint-disable-line @typescript-eslint/no-explicit-any
      for (const [method, operation] of Object.entries<any>(methods)) { // eslint-disable-line @typescript-eslint/no-explicit-any
        for (const [status, documented] of Object.entries<any>(operation.responses)) { // eslint-disable-line @typescript-eslint/no-explicit-any
          expect(response(documented).description, `${method} ${path} ${status}`).not.toBe('Default Response');
          expect(response(documented).description, `${method} ${path} ${status}`).toBeTruthy();
        }
      }
    }
    expect(document.paths['/api/v2/simple-qrs'].post.responses['201'].description).toBe('Created: the body is what was created');
    // Every business_code of a schema carries an example, so /docs does not make up a 0.
    const missing: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}/${i}`));
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (key === 'business_code' && where.endsWith('/properties') && (value as { type?: string }).type === 'integer') {
          if ((value as { example?: number }).example !== 1001) missing.push(where);
        }
        walk(value, `${where}/${key}`);
      }
    };
    walk(document.paths, '#/paths');
    walk(document.components.schemas, '#/components/schemas');
    expect(missing).toEqual([]);
  });

  it('declares each error response once in components.responses, with its headers by $ref, and refers to it', () => {
    const shared = document.components.responses;
    const refs = new Set<string>();
    let errors = 0;
    for (const [path, methods] of Object.entries<any>(document.paths)) { // eslint-disable-line @typescript-eslint/no-explicit-any
      for (const [method, operation] of Object.entries<any>(methods)) { // eslint-disable-line @typescript-eslint/no-explicit-any
        for (const [status, documented] of Object.entries<any>(operation.responses)) { // eslint-disable-line @typescript-eslint/no-explicit-any
          if (Number(status) < 400) {
            expect(documented.$ref, `${method} ${path} ${status}`).toBeUndefined();
            continue;
          }
          // No error written out in an operation: each is a reference to the shared one.
          expect(Object.keys(documented), `${method} ${path} ${status}`).toEqual(['$ref']);
          expect(documented.$ref).toMatch(/^#\/components\/responses\/\w+$/);
          refs.add(documented.$ref);
          errors += 1;
        }
      }
    }
    // Every shared response is used, far fewer than the errors that use them, and none written out twice.
    expect(new Set(Object.keys(shared).map((name) => `#/components/responses/${name}`))).toEqual(refs);
    expect(Object.keys(shared).length).toBeLessThan(errors / 5);
    expect(new Set(Object.entries(shared).map(([name, r]) => `${name.startsWith('Operator')} ${JSON.stringify(r)}`)).size).toBe(Object.keys(shared).length);
    for (const [name, shared_] of Object.entries<any>(shared)) { // eslint-disable-line @typescript-eslint/no-explicit-any
      expect(shared_.description, name).toBeTruthy();
      for (const [header, value] of Object.entries<any>(shared_.headers)) expect(value, `${name} ${header}`).toEqual({ $ref: `#/components/headers/${header}` }); // eslint-disable-line @typescript-eslint/no-explicit-any
    }
    // The API's key-limited 401 carries RateLimit-* and X-Request-Id; the operator's carries no RateLimit-*.
    expect(document.paths['/api/v2/balance'].get.responses['401']).toEqual({ $ref: '#/components/responses/UnauthorizedRateLimited' });
    expect(Object.keys(shared.UnauthorizedRateLimited.headers).sort()).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id']);
    expect(document.paths['/admin/v1/merchants'].get.responses['401']).toEqual({ $ref: '#/components/responses/OperatorUnauthorized' });
    expect(Object.keys(shared.OperatorUnauthorized.headers)).toEqual(['X-Request-Id']);
  });

  it('marks the bodies that may be left out as optional, and the service takes them without one', async () => {
    const optional = [
      ['/api/v2/simple-qrs/{id}/cancel', 'post'], ['/api/v2/transfers/{id}/cancel', 'post'],
      ['/api/v2/webhook-endpoints/{id}/rotate-secret', 'post'], ['/api/v2/events/{id}/redeliver', 'post'],
      ['/api/v2/sandbox/simple-qrs/{id}/payments', 'post'],
    ] as const;
    for (const [path, method] of optional) expect(document.paths[path][method].requestBody.required, path).toBe(false);
    expect(document.paths['/api/v2/transfers'].post.requestBody.required).toBe(true);
    // A PATCH is read with its body: without one it is a 422, so its body stays required.
    expect(document.paths['/api/v2/webhook-endpoints/{id}'].patch.requestBody.required).toBe(true);
    const merchant = await t.createMerchant();
    const qr = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 5 } });
    expect((await t.request('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, { apiKey: merchant.apiKey })).status).toBe(201);
  });

  it('documents the headers: Idempotency-Key where taken, If-None-Match / ETag / 304, Retry-After, RateLimit-*, X-Request-Id', () => {
    const transfer = document.paths['/api/v2/transfers'].post;
    expect(transfer.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'Idempotency-Key', required: true }));
    const keyPattern = new RegExp(transfer.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key').schema.pattern);
    expect(keyPattern.test('8b0d1f1e-54a5-4c5e-9a3f-0d2b6f4e9c71')).toBe(true);
    expect(keyPattern.test('8b0d1f1e-54a5-1c5e-9a3f-0d2b6f4e9c71')).toBe(false); // a v1 UUID is refused, and so documented
    expect(Object.keys(transfer.responses['201'].headers)).toEqual(expect.arrayContaining(['Idempotent-Replayed', 'X-Request-Id', 'RateLimit-Limit']));
    expect(document.paths['/api/v2/simple-qrs'].post.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', required: false }));
    const read = document.paths['/api/v2/simple-qrs/{id}'].get;
    expect(read.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'If-None-Match' }));
    expect(read.responses['200'].headers.ETag).toBeDefined();
    expect(read.responses['304'].content).toBeUndefined();
    expect(Object.keys(response(read.responses['429']).headers)).toContain('Retry-After');
    // The operator token spends from no rate limit (no RateLimit-* on /admin/v1); its 429 is the lockout of
    // a network that sent too many wrong tokens, with Retry-After alone.
    const admin = document.paths['/admin/v1/merchants'].post;
    expect(Object.keys(response(admin.responses['429']).headers).sort()).toEqual(['Retry-After', 'X-Request-Id']);
    expect(Object.keys(admin.responses['201'].headers)).not.toContain('RateLimit-Limit');
    const status = document.paths['/pay/{token}/status'].get;
    expect(status.responses['200'].content['application/json'].schema.properties.status.enum).toEqual(['ACTIVE', 'PAID', 'CANCELED']);
    expect(status.responses['304']).toBeDefined();
  });

  it('lists no HEAD, and every GET answers HEAD as itself without the body (docs/api-reference.md#openapi-and-docs)', async () => {
    const methods = Object.values<Record<string, unknown>>(document.paths).flatMap((operations) => Object.keys(operations));
    expect(methods).not.toContain('head');
    const merchant = await t.createMerchant();
    const get = await fetch(`${t.baseUrl}/api/v2/balance`, { headers: { 'x-api-key': merchant.apiKey } });
    const head = await fetch(`${t.baseUrl}/api/v2/balance`, { method: 'HEAD', headers: { 'x-api-key': merchant.apiKey } });
    expect(head.status).toBe(get.status);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(await head.text()).toBe('');
    expect((await fetch(`${t.baseUrl}/api/v2/balance`, { method: 'HEAD' })).status).toBe(401);
  });

  it('answers 400, 413 and 415 on every operation that reads a body, and shows each error code as its own example', () => {
    for (const [path, methods] of Object.entries<any>(document.paths)) { // eslint-disable-line @typescript-eslint/no-explicit-any
      for (const method of ['post', 'put', 'patch', 'delete']) {
        if (!methods[method]) continue;
        for (const code of ['400', '413', '415']) expect(methods[method].responses[code], `${method} ${path} ${code}`).toBeDefined();
      }
    }
    const examples = response(document.paths['/api/v2/transfers'].post.responses['409']).content['application/json'].examples;
    expect(Object.keys(examples)).toContain('IDEMPOTENCY_KEY_IN_USE');
    expect(Object.keys(response(document.paths['/api/v2/transfers'].post.responses['400']).content['application/json'].examples)).toContain('INSUFFICIENT_FUNDS');
    for (const [code, example] of Object.entries<any>(examples)) { // eslint-disable-line @typescript-eslint/no-explicit-any
      expect(example.$ref).toBe(`#/components/examples/${code}`);
      expect(document.components.examples[code].value.code).toBe(code);
    }
    // Only the codes the route can answer: no operator-token error on the API, no idempotency codes without a key.
    expect(Object.keys(response(document.paths['/api/v2/balance'].get.responses['401']).content['application/json'].examples)).not.toContain('ADMIN_TOKEN_INVALID');
    expect(Object.keys(response(document.paths['/api/v2/simple-qrs/{id}/cancel'].post.responses['400']).content['application/json'].examples)).not.toContain('IDEMPOTENCY_KEY_MISSING');
    expect(Object.keys(response(document.paths['/api/v2/transfers'].post.responses['400']).content['application/json'].examples)).toContain('MALFORMED_JSON');
  });
});

describe('the contract checker', () => {
  const checker = new ContractChecker({
    openapi: '3.1.0',
    paths: {
      '/things/{id}': {
        get: { responses: { 200: { headers: { 'X-Request-Id': {} }, content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } } } } } },
        post: { requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } }, responses: { 200: {} } },
      },
      '/things/special': { get: { responses: { 204: {} } } },
      '/things': { get: { responses: { 200: {}, 404: { $ref: '#/components/responses/NotFound' } } } },
    },
    components: {
      responses: {
        NotFound: { description: 'gone', headers: { 'X-Request-Id': {} }, content: { 'application/json': { schema: { type: 'object', required: ['code'] } } } },
      },
    },
  });
  const exchange = (overrides: Partial<Parameters<ContractChecker['check']>[0]>) => ({
    method: 'GET', path: '/things/7', sentBody: false, status: 200, headers: new Headers({ 'x-request-id': 'r' }),
    contentType: 'application/json', body: { id: 7 }, ...overrides,
  });

  it('passes what the document promises', () => {
    expect(checker.check(exchange({}))).toEqual([]);
    expect(checker.check(exchange({ path: '/things/special', status: 204, contentType: '', body: '', headers: new Headers() }))).toEqual([]);
    expect(checker.check(exchange({ path: '/elsewhere', status: 500 }))).toEqual([]);
  });

  it('catches an undocumented status, a body off its schema, an undocumented header and a body the service did without', () => {
    expect(checker.check(exchange({ status: 418 }))[0]).toContain('status 418 is not documented');
    expect(checker.check(exchange({ body: { id: 'seven' } }))[0]).toContain('does not match the documented schema');
    expect(checker.check(exchange({ headers: new Headers({ 'x-request-id': 'r', etag: '"x"' }) }))[0]).toContain('header ETag is sent but not documented');
    expect(checker.check(exchange({ method: 'POST', contentType: '' }))[0]).toContain('requires a body');
    expect(checker.check(exchange({ method: 'DELETE' }))[0]).toContain('method is not documented');
  });

  it('reads a response shared in components.responses through its $ref', () => {
    const notFound = (overrides: Partial<Parameters<ContractChecker['check']>[0]>) => exchange({ path: '/things', status: 404, body: { code: 'NOT_FOUND' }, ...overrides });
    expect(checker.check(notFound({}))).toEqual([]);
    expect(checker.check(notFound({ body: { message: 'no code' } }))[0]).toContain('does not match the documented schema');
    expect(checker.check(notFound({ headers: new Headers({ 'x-request-id': 'r', 'retry-after': '1' }) }))[0]).toContain('header Retry-After is sent but not documented');
  });
});
