// The error model of docs/api-reference.md#errors through the real app on both databases: every error body is exactly
// { type, code, message } (+ errors on 422) with X-Request-Id, 422s list every failing field at once with
// the contract's field codes, bodies are never coerced, and the checks run in the contract's order.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import type { Database } from '../../src/db/database.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { buildApp, type App } from '../../src/http/app.ts';
import { ERROR_CATALOGUE, FIELD_ERROR_CODES } from '../../src/kernel/errors.ts';
import { createLogger } from '../../src/kernel/logging.ts';
import { FieldErrorSchema, StrictObject } from '../../src/kernel/schemas.ts';
import { startTestApp, TestClock, type TestApp, type TestResponse } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { createAppContext } from '../../src/composition.ts';
import { withGeneratedTable } from '../../scripts/error-reference.ts';

// ---------------------------------------------------------------------------------------------------
// The error codes table of the project's own reference, docs/api-reference.md ("Error codes"), read
// from inside the repository.

const REFERENCE_URL = new URL('../../docs/api-reference.md', import.meta.url);
const ERRORS_TS_URL = new URL('../../src/kernel/errors.ts', import.meta.url);
const ERROR_CODES_HEADING = /^#{2,3} Error codes[ \t]*$/m;
const ERROR_CODES_HEADER = ['HTTP status', 'type', 'code', 'when'];

interface ContractError {
  status: number;
  type: string;
}

/** The "Error codes" section of the reference: from its heading to the next heading of the same or a higher level. */
function readErrorSection(): string {
  const path = fileURLToPath(REFERENCE_URL);
  if (!fs.existsSync(path)) throw new Error(`the API reference is missing at ${path}`);
  const text = fs.readFileSync(path, 'utf8');
  const heading = ERROR_CODES_HEADING.exec(text);
  if (!heading) throw new Error('docs/api-reference.md has no "Error codes" heading');
  const level = heading[0].indexOf(' ');
  const rest = text.slice(heading.index + heading[0].length);
  const next = new RegExp(`^#{1,${level}} `, 'm').exec(rest);
  return heading[0] + (next ? rest.slice(0, next.index) : rest);
}

/**
 * The rows of the one markdown table of the section, whose header must be exactly
 * | HTTP status | type | code | when |: one code per row (in backticks or bare), with its status and type.
 * Codes listed twice are kept twice, so a duplicate shows up.
 */
function parseErrorTable(section: string): Array<{ code: string } & ContractError> {
  const cellsOf = (line: string) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());
  const lines = section.split('\n').filter((line) => line.trim().startsWith('|'));
  if (lines.length < 3) throw new Error('the "Error codes" section has no table');
  if (cellsOf(lines[0]!).join(' | ') !== ERROR_CODES_HEADER.join(' | ')) {
    throw new Error(`the error codes table's header must be | ${ERROR_CODES_HEADER.join(' | ')} |, not ${lines[0]}`);
  }
  if (!cellsOf(lines[1]!).every((cell) => /^:?-{3,}:?$/.test(cell))) throw new Error(`the error codes table's second row must separate: ${lines[1]}`);
  return lines.slice(2).map((line) => {
    const cells = cellsOf(line);
    if (cells.length !== ERROR_CODES_HEADER.length) throw new Error(`error codes table row without ${ERROR_CODES_HEADER.length} cells: ${line}`);
    const [status, type, code, when] = cells as [string, string, string, string];
    if (!/^\d{3}$/.test(status)) throw new Error(`error codes table row with status ${JSON.stringify(status)}: ${line}`);
    const bare = code.replace(/^`(.*)`$/, '$1');
    if (!/^[A-Z][A-Z0-9_]*$/.test(bare)) throw new Error(`error codes table row with code ${JSON.stringify(code)} (one code per row): ${line}`);
    if (!/^[a-z_]+$/.test(type)) throw new Error(`error codes table row with type ${JSON.stringify(type)}: ${line}`);
    if (when === '') throw new Error(`error codes table row that does not say when: ${line}`);
    return { code: bare, status: Number(status), type };
  });
}

const ERROR_SECTION = readErrorSection();
const CONTRACT_ERROR_ROWS = parseErrorTable(ERROR_SECTION);
const CONTRACT_ERRORS = new Map<string, ContractError>(CONTRACT_ERROR_ROWS.map(({ code, ...rest }) => [code, rest]));

// ---------------------------------------------------------------------------------------------------
// Assertions on responses.

/** The response is the error `code` of docs/api-reference.md#error-codes: its status and type, exactly the contract's keys, X-Request-Id. */
function expectApiError(response: TestResponse, code: string): void {
  const contract = CONTRACT_ERRORS.get(code);
  if (!contract) throw new Error(`${code} is not an error code of docs/api-reference.md#error-codes`);
  expect(response.status, `${code}: ${response.text}`).toBe(contract.status);
  expect(response.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(response.headers.get('x-request-id') ?? '').not.toBe('');
  const body = response.body as Record<string, unknown>;
  expect(typeof body, response.text).toBe('object');
  expect(Object.keys(body).sort()).toEqual(contract.status === 422 && code === 'VALIDATION_FAILED'
    ? ['code', 'errors', 'message', 'type']
    : ['code', 'message', 'type']);
  expect(body.type).toBe(contract.type);
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(0);
  if (code === 'VALIDATION_FAILED') {
    const errors = body.errors as unknown[];
    expect(Array.isArray(errors)).toBe(true);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors as Record<string, unknown>[]) {
      expect(Object.keys(error).sort()).toEqual(['code', 'field', 'message']);
      expect(typeof error.field).toBe('string');
      expect(typeof error.code).toBe('string');
      expect(typeof error.message).toBe('string');
      expect((error.message as string).length).toBeGreaterThan(0);
    }
  }
}

/** A 422 whose `errors` are exactly these (field, code) pairs, one entry per field, in any order. */
function expectFieldErrors(response: TestResponse, expected: Record<string, string>): void {
  expectApiError(response, 'VALIDATION_FAILED');
  const errors = response.body.errors as Array<{ field: string; code: string }>;
  const fields = errors.map((error) => error.field);
  expect(new Set(fields).size, `one entry per field: ${response.text}`).toBe(fields.length);
  const actual = Object.fromEntries(errors.map((error) => [error.field, error.code]));
  expect(actual, response.text).toEqual(expected);
}

function expectRetryAfter(response: TestResponse): void {
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter, 'Retry-After header').toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
}

const uuidV4 = () => crypto.randomUUID();

/** A body of exactly `size` bytes: valid JSON for /test/movements except a reference far too long. */
function jsonBodyOfSize(size: number, businessCode: number): string {
  const head = `{"business_code":${businessCode},"amount":1,"reference":"`;
  const tail = '"}';
  return head + 'x'.repeat(size - head.length - tail.length) + tail;
}

// A route of this file, registered through buildApp like the fixture routes, for the field types the
// fixture does not have (a boolean): it echoes what validation let through.
const ProbeBody = StrictObject({
  flag: Type.Optional(Type.Boolean()),
  count: Type.Optional(Type.Integer()),
  label: Type.Optional(Type.String()),
});
const probeRoutes: FastifyPluginAsync<AppContext> = async (instance) => {
  const app = instance as unknown as App;
  app.post('/test/errors-probe', { schema: { body: ProbeBody } }, async (request) => ({ received: request.body }));
};

// ---------------------------------------------------------------------------------------------------

describe('the error catalogue (src/kernel/errors.ts) matches docs/api-reference.md "Error codes"', () => {
  it('is the table `npm run docs:errors` writes from the catalogue (run it after changing src/kernel/errors.ts)', () => {
    const document = fs.readFileSync(fileURLToPath(REFERENCE_URL), 'utf8');
    expect(withGeneratedTable(document)).toBe(document);
  });

  it('finds the error codes table in docs/api-reference.md inside the repository', () => {
    expect(CONTRACT_ERROR_ROWS.length).toBeGreaterThanOrEqual(20);
  });

  it('has every documented code in ERROR_CATALOGUE with the same status and type', () => {
    for (const { code, status, type } of CONTRACT_ERROR_ROWS) {
      const entry = (ERROR_CATALOGUE as Record<string, { status: number; type: string; message: string }>)[code];
      expect(entry, `${code} of docs/api-reference.md is missing from ERROR_CATALOGUE`).toBeDefined();
      expect({ code, status: entry!.status, type: entry!.type }).toEqual({ code, status, type });
      expect(entry!.message.trim().length, `${code} has a message`).toBeGreaterThan(0);
    }
  });

  it('lists each code once, in docs/api-reference.md and in errors.ts', () => {
    const documentedCodes = CONTRACT_ERROR_ROWS.map((row) => row.code);
    expect(documentedCodes.filter((code, index) => documentedCodes.indexOf(code) !== index), 'codes listed twice in docs/api-reference.md').toEqual([]);
    // An object literal silently keeps the last of two equal keys, so read the source.
    const source = fs.readFileSync(fileURLToPath(ERRORS_TS_URL), 'utf8');
    const catalogueBlock = source.slice(source.indexOf('ERROR_CATALOGUE = {'), source.indexOf('} as const'));
    const sourceCodes = [...catalogueBlock.matchAll(/^\s+([A-Z][A-Z0-9_]*):\s*\{/gm)].map((match) => match[1]!);
    expect(sourceCodes.filter((code, index) => sourceCodes.indexOf(code) !== index), 'codes defined twice in errors.ts').toEqual([]);
    expect([...sourceCodes].sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
  });

  it('has no code that docs/api-reference.md does not document', () => {
    const undocumented = Object.keys(ERROR_CATALOGUE).filter((code) => !CONTRACT_ERRORS.has(code));
    expect(undocumented, 'catalogue codes absent from the error codes table of docs/api-reference.md').toEqual([]);
  });
});

describe('the field codes (FIELD_ERROR_CODES) match docs/api-reference.md "Field codes" and the OpenAPI schema', () => {
  const reference = fs.readFileSync(fileURLToPath(REFERENCE_URL), 'utf8');
  const section = reference.slice(reference.indexOf('### Field codes'), reference.indexOf('\n---', reference.indexOf('### Field codes')));
  const documented = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]!);

  it('documents every code of the list, once, and no other', () => {
    expect(documented.length).toBeGreaterThanOrEqual(10);
    expect(documented).toEqual([...FIELD_ERROR_CODES]);
  });

  it('publishes the same list as the enum of an error entry\'s code', () => {
    expect((FieldErrorSchema.properties.code as { enum?: string[] }).enum).toEqual([...FIELD_ERROR_CODES]);
  });
});

describe.each(databaseKinds())('errors on %s', (kind) => {
  let t: TestApp;
  let merchant: { businessCode: number; apiKey: string };
  let otherMerchant: { businessCode: number; apiKey: string };
  let partner: { partnerId: number; masterKey: string };

  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes, probeRoutes] });
    merchant = await t.createMerchant({ name: 'Errores SRL' });
    otherMerchant = await t.createMerchant({ name: 'Otra Tienda' });
    partner = await t.createPartner('Socio');
  });
  afterAll(() => t.close());

  /** POST /test/movements as `merchant`, with a fresh Idempotency-Key unless told otherwise. */
  const postMovement = (options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; apiKey?: string | null; idempotencyKey?: string | null } = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const idempotencyKey = options.idempotencyKey === undefined ? uuidV4() : options.idempotencyKey;
    if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
    if (options.rawBody !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    return t.request('POST', '/test/movements', {
      body: options.body,
      rawBody: options.rawBody,
      headers,
      apiKey: options.apiKey === null ? undefined : (options.apiKey ?? merchant.apiKey),
    });
  };

  describe('body parsing', () => {
    it('answers 400 MALFORMED_JSON to a body that is not JSON', async () => {
      for (const rawBody of ['{"business_code": ', '{"amount": 1} trailing', "{'amount': 1}", '{"amount": 01}']) {
        expectApiError(await postMovement({ rawBody }), 'MALFORMED_JSON');
      }
    });

    it('answers 413 PAYLOAD_TOO_LARGE to a body over 64 KiB, and reads a body of exactly 64 KiB', async () => {
      const over = jsonBodyOfSize(64 * 1024 + 1, merchant.businessCode);
      expect(Buffer.byteLength(over)).toBe(65_537);
      expectApiError(await postMovement({ rawBody: over }), 'PAYLOAD_TOO_LARGE');
      expectApiError(await postMovement({ rawBody: jsonBodyOfSize(200 * 1024, merchant.businessCode) }), 'PAYLOAD_TOO_LARGE');

      const atLimit = jsonBodyOfSize(64 * 1024, merchant.businessCode);
      expect(Buffer.byteLength(atLimit)).toBe(65_536);
      // Read and validated: the only problem left is the over-long reference.
      expectFieldErrors(await postMovement({ rawBody: atLimit }), { reference: 'too_long' });
    });

    it('answers 415 UNSUPPORTED_MEDIA_TYPE to text/plain and form bodies on API routes', async () => {
      const json = JSON.stringify({ business_code: merchant.businessCode, amount: 1 });
      expectApiError(await postMovement({ rawBody: json, headers: { 'content-type': 'text/plain' } }), 'UNSUPPORTED_MEDIA_TYPE');
      expectApiError(await postMovement({ rawBody: json, headers: { 'content-type': 'text/plain;charset=UTF-8' } }), 'UNSUPPORTED_MEDIA_TYPE');
      expectApiError(await postMovement({
        rawBody: `business_code=${merchant.businessCode}&amount=1`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }), 'UNSUPPORTED_MEDIA_TYPE');
      expectApiError(await postMovement({ rawBody: '<movement/>', headers: { 'content-type': 'application/xml' } }), 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('accepts application/json with a charset parameter', async () => {
      const response = await postMovement({
        rawBody: JSON.stringify({ business_code: merchant.businessCode, amount: 1 }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(response.status, response.text).toBe(201);
    });

    it('reads an empty POST body as {} without Content-Type: missing fields are 422 required, not 400', async () => {
      const response = await postMovement({});
      expectFieldErrors(response, { business_code: 'required', amount: 'required' });
    });

    it('reads an empty POST body as {} with Content-Type: application/json', async () => {
      const response = await postMovement({ rawBody: '', headers: { 'content-type': 'application/json' } });
      expectFieldErrors(response, { business_code: 'required', amount: 'required' });
    });

    it('answers a JSON body that is not an object with 422, never 500', async () => {
      for (const rawBody of ['[]', '"text"', '42', 'null', 'true']) {
        const response = await postMovement({ rawBody });
        expectApiError(response, 'VALIDATION_FAILED');
      }
    });
  });

  describe('unknown routes and crashes', () => {
    it('answers 404 NOT_FOUND with the error body for an unknown route', async () => {
      expectApiError(await t.request('GET', '/api/v2/no-such-thing'), 'NOT_FOUND');
      expectApiError(await t.request('GET', '/api/v2/balance/12345/nothing', { apiKey: merchant.apiKey }), 'NOT_FOUND');
      expectApiError(await t.request('POST', '/api/v2/no-such-thing', { body: { a: 1 } }), 'NOT_FOUND');
      expectApiError(await t.request('DELETE', '/healthz'), 'NOT_FOUND');
    });

    it('answers 404 NOT_FOUND for an unknown route whatever its body (no endpoint, so no body to judge)', async () => {
      expectApiError(await t.request('POST', '/api/v2/no-such-thing', { rawBody: 'hello', headers: { 'content-type': 'text/plain' } }), 'NOT_FOUND');
      expectApiError(await t.request('POST', '/api/v2/no-such-thing', { rawBody: '{"a": ', headers: { 'content-type': 'application/json' } }), 'NOT_FOUND');
      expectApiError(await t.request('POST', '/api/v2/no-such-thing', { rawBody: '{"__proto__": {}}', headers: { 'content-type': 'application/json' } }), 'NOT_FOUND');
    });

    it('answers 500 INTERNAL_ERROR without the stack, the SQL or the table name', async () => {
      const response = await t.request('GET', '/test/crash');
      expectApiError(response, 'INTERNAL_ERROR');
      for (const leak of ['secret_table', 'secret.ts', 'select', 'relation', 'api_key', '/work/', 'stack', ' at ']) {
        expect(response.text.toLowerCase(), `500 body leaks "${leak}"`).not.toContain(leak);
      }
    });
  });

  describe('X-Request-Id', () => {
    it('answers a path that cannot be decoded with 404 NOT_FOUND in the contract shape, with its request id', async () => {
      for (const path of ['/api/v2/simple-qrs/%E0%A4%A', '/%']) {
        const response = await t.request('GET', path, { headers: { 'x-request-id': 'bad-url-1' } });
        expectApiError(response, 'NOT_FOUND');
        expect(response.headers.get('x-request-id')).toBe('bad-url-1');
      }
    });

    it('echoes a safe caller request id on an error', async () => {
      const response = await t.request('GET', '/api/v2/no-such-thing', { headers: { 'x-request-id': 'pos-42:retry.1_A-b' } });
      expectApiError(response, 'NOT_FOUND');
      expect(response.headers.get('x-request-id')).toBe('pos-42:retry.1_A-b');
    });

    it('replaces an unsafe or over-long caller request id with its own', async () => {
      for (const unsafe of ['has spaces in it', 'x'.repeat(65), 'semi;colon', 'percent%41', '<script>']) {
        const response = await t.request('GET', '/api/v2/no-such-thing', { headers: { 'x-request-id': unsafe } });
        const id = response.headers.get('x-request-id') ?? '';
        expect(id).not.toBe('');
        expect(id).not.toBe(unsafe);
        expect(id).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
      }
      const longest = 'y'.repeat(64);
      expect((await t.request('GET', '/healthz', { headers: { 'x-request-id': longest } })).headers.get('x-request-id')).toBe(longest);
    });

    it('gives every response a request id, distinct per request', async () => {
      const first = await t.request('GET', '/test/crash');
      const second = await t.request('GET', '/test/crash');
      expect(first.headers.get('x-request-id')).toBeTruthy();
      expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
    });
  });

  describe('authentication and permission errors', () => {
    it('answers 401 API_KEY_MISSING and API_KEY_INVALID', async () => {
      expectApiError(await t.request('GET', '/test/merchant-only'), 'API_KEY_MISSING');
      expectApiError(await t.request('GET', '/test/merchant-only', { apiKey: 'mk_test_' + 'a'.repeat(32) }), 'API_KEY_INVALID');
      expectApiError(await t.request('GET', '/test/merchant-only', { apiKey: 'not a key' }), 'API_KEY_INVALID');
    });

    it('answers 401 ADMIN_TOKEN_INVALID to a missing or wrong operator token', async () => {
      expectApiError(await t.request('GET', '/admin/v1/merchants', { adminToken: null }), 'ADMIN_TOKEN_INVALID');
      expectApiError(await t.request('GET', '/admin/v1/merchants', { adminToken: 'wrong-token-0123456789' }), 'ADMIN_TOKEN_INVALID');
    });

    it('answers 403 MASTER_KEY_REQUIRED and MERCHANT_KEY_REQUIRED to the wrong kind of key', async () => {
      expectApiError(await t.request('GET', '/test/partner-only', { apiKey: merchant.apiKey }), 'MASTER_KEY_REQUIRED');
      expectApiError(await t.request('GET', '/test/merchant-only', { apiKey: partner.masterKey }), 'MERCHANT_KEY_REQUIRED');
    });

    it('answers 403 MODULE_NOT_ENABLED to a merchant without the ACH module', async () => {
      expectApiError(await t.request('POST', '/test/ach-only', { apiKey: merchant.apiKey }), 'MODULE_NOT_ENABLED');
    });

    it('answers 403 MERCHANT_SUSPENDED to a suspended merchant\'s key', async () => {
      const suspended = await t.createMerchant({ name: 'Suspendida' });
      const patch = await t.request('PATCH', `/admin/v1/merchants/${suspended.businessCode}`, { body: { status: 'suspended' } });
      expect(patch.status, patch.text).toBe(200);
      expectApiError(await t.request('GET', '/test/merchant-only', { apiKey: suspended.apiKey }), 'MERCHANT_SUSPENDED');
      // Key-level 403 comes before body parsing (order of checks).
      expectApiError(await postMovement({ apiKey: suspended.apiKey, rawBody: '{not json' }), 'MERCHANT_SUSPENDED');
    });
  });

  describe('idempotency and business errors', () => {
    it('answers 400 IDEMPOTENCY_KEY_MISSING and IDEMPOTENCY_KEY_INVALID', async () => {
      const body = { business_code: merchant.businessCode, amount: 1 };
      expectApiError(await postMovement({ body, idempotencyKey: null }), 'IDEMPOTENCY_KEY_MISSING');
      expectApiError(await postMovement({ body, idempotencyKey: 'not-a-uuid' }), 'IDEMPOTENCY_KEY_INVALID');
      // A UUID, but version 1, not 4.
      expectApiError(await postMovement({ body, idempotencyKey: 'c232ab00-9414-11ec-b3c8-9f6bdeced846' }), 'IDEMPOTENCY_KEY_INVALID');
    });

    it('answers 422 IDEMPOTENCY_KEY_REUSED to the same key with another body', async () => {
      const key = uuidV4();
      const first = await postMovement({ idempotencyKey: key, body: { business_code: merchant.businessCode, amount: 1 } });
      expect(first.status, first.text).toBe(201);
      expectApiError(await postMovement({ idempotencyKey: key, body: { business_code: merchant.businessCode, amount: 2 } }), 'IDEMPOTENCY_KEY_REUSED');
    });

    it('answers 400 INSUFFICIENT_FUNDS to a debit beyond the balance', async () => {
      const poor = await t.createMerchant({ name: 'Sin Fondos' });
      expectApiError(await postMovement({
        apiKey: poor.apiKey,
        body: { business_code: poor.businessCode, amount: 5, direction: 'debit' },
      }), 'INSUFFICIENT_FUNDS');
    });

    it('answers 403 BUSINESS_CODE_MISMATCH to another merchant\'s business_code', async () => {
      expectApiError(await postMovement({ body: { business_code: otherMerchant.businessCode, amount: 1 } }), 'BUSINESS_CODE_MISMATCH');
    });
  });

  describe('422 VALIDATION_FAILED', () => {
    it('lists every failing field at once, with dotted paths and the contract\'s field codes', async () => {
      const response = await postMovement({
        body: {
          amount: 'abc',
          reference: 'r'.repeat(51),
          direction: 'sideways',
          hold_ms: 5001,
          nested: { note: 5, extra: true },
          colour: 'blue',
        },
      });
      expectFieldErrors(response, {
        business_code: 'required',
        amount: 'invalid_format',
        reference: 'too_long',
        direction: 'invalid_value',
        hold_ms: 'too_large',
        'nested.note': 'invalid_type',
        'nested.extra': 'unknown_field',
        colour: 'unknown_field',
      });
    });

    it('reports too_small, too_many_decimals and invalid_type in one answer', async () => {
      const response = await postMovement({
        body: { business_code: String(merchant.businessCode), amount: 10.001, hold_ms: -1, nested: 'note' },
      });
      expectFieldErrors(response, {
        business_code: 'invalid_type',
        amount: 'too_many_decimals',
        hold_ms: 'too_small',
        nested: 'invalid_type',
      });
    });

    it('never coerces types: "5" is not an integer and 1 is not a boolean', async () => {
      expectFieldErrors(await t.request('POST', '/test/errors-probe', { body: { flag: 1, count: '5', label: 7 } }), {
        flag: 'invalid_type',
        count: 'invalid_type',
        label: 'invalid_type',
      });
      expectFieldErrors(await t.request('POST', '/test/errors-probe', { body: { flag: 'true', count: 5.5 } }), {
        flag: 'invalid_type',
        count: 'invalid_type',
      });
      expectFieldErrors(await postMovement({ body: { business_code: merchant.businessCode, amount: 1, hold_ms: '5' } }), {
        hold_ms: 'invalid_type',
      });
      // The same fields with their own types pass through unchanged.
      const valid = await t.request('POST', '/test/errors-probe', { body: { flag: true, count: 5, label: '7' } });
      expect(valid.status, valid.text).toBe(200);
      expect(valid.body).toEqual({ received: { flag: true, count: 5, label: '7' } });
    });

    it.each(['__proto__', 'constructor', 'prototype'])('answers a top-level "%s" key with 422 unknown_field', async (key) => {
      const rawBody = `{"business_code": ${merchant.businessCode}, "amount": 1, "${key}": {"polluted": "yes"}}`;
      const response = await postMovement({ rawBody });
      expectFieldErrors(response, { [key]: 'unknown_field' });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it.each(['__proto__', 'constructor', 'prototype'])('answers a "%s" key in a PATCH body with 422 unknown_field, changing nothing', async (key) => {
      const rawBody = `{"status": "suspended", "${key}": {"polluted": "yes"}}`;
      const response = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { rawBody, headers: { 'content-type': 'application/json' } });
      expectFieldErrors(response, { [key]: 'unknown_field' });
      const after = await t.request('GET', `/admin/v1/merchants/${merchant.businessCode}`);
      expect(after.body.status).toBe('active');
    });

    it.each(['__proto__', 'constructor', 'prototype'])('answers a nested "%s" key with 422 unknown_field', async (key) => {
      const rawBody = `{"business_code": ${merchant.businessCode}, "amount": 1, "nested": {"note": "n", "${key}": {"polluted": "yes"}}}`;
      const response = await postMovement({ rawBody });
      expectFieldErrors(response, { [`nested.${key}`]: 'unknown_field' });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('lists prototype keys beside the other failing fields', async () => {
      const rawBody = '{"amount": 10.001, "__proto__": {"x": 1}, "nested": {"constructor": 1, "prototype": 2}}';
      const response = await postMovement({ rawBody });
      expectFieldErrors(response, {
        business_code: 'required',
        amount: 'too_many_decimals',
        ['__proto__']: 'unknown_field',
        'nested.constructor': 'unknown_field',
        'nested.prototype': 'unknown_field',
      });
    });

    it('answers prototype keys on a route without a body schema with 422 too, never 400 or 500', async () => {
      const response = await t.request('POST', '/test/errors-probe', {
        rawBody: '{"__proto__": {"isAdmin": true}, "label": "x"}',
        headers: { 'content-type': 'application/json' },
      });
      expectFieldErrors(response, { ['__proto__']: 'unknown_field' });
    });
  });

  describe('amounts (docs/api-reference.md#money; the fixture takes 0.10 to 20000.00)', () => {
    const credit = async (amount: unknown) => {
      const response = await postMovement({ body: { business_code: merchant.businessCode, amount } });
      return response;
    };

    it.each([
      [0.1, 10],
      ['0.10', 10],
      ['0.1', 10],
      [20000, 2_000_000],
      ['20000.00', 2_000_000],
      [150.5, 15_050],
      [0.29, 29],
      [1.1, 110],
      [4.35, 435],
      ['00012.30', 1_230],
    ])('accepts %j as %i centavos', async (amount, centavos) => {
      const response = await credit(amount);
      expect(response.status, response.text).toBe(201);
      expect(response.body.amount_centavos).toBe(centavos);
    });

    it('accepts a JSON 1e3 as the number 1000', async () => {
      const response = await postMovement({ rawBody: `{"business_code": ${merchant.businessCode}, "amount": 1e3}` });
      expect(response.status, response.text).toBe(201);
      expect(response.body.amount_centavos).toBe(100_000);
      const decimalExponent = await postMovement({ rawBody: `{"business_code": ${merchant.businessCode}, "amount": 1.5E1}` });
      expect(decimalExponent.status, decimalExponent.text).toBe(201);
      expect(decimalExponent.body.amount_centavos).toBe(1_500);
    });

    it.each([
      [10.001, 'too_many_decimals'],
      ['10.001', 'too_many_decimals'],
      [0.30000000000000004, 'too_many_decimals'],
      ['1e3', 'invalid_format'],
      [-5, 'too_small'],
      ['-5', 'too_small'],
      ['NaN', 'invalid_format'],
      ['Infinity', 'invalid_format'],
      ['', 'invalid_format'],
      [' 10', 'invalid_format'],
      ['10.', 'invalid_format'],
      ['.5', 'invalid_format'],
      ['+5', 'invalid_format'],
      ['1,50', 'invalid_format'],
      ['0x10', 'invalid_format'],
      [0, 'too_small'],
      [0.09, 'too_small'],
      ['0.09', 'too_small'],
      [20000.01, 'too_large'],
      ['20000.01', 'too_large'],
      [1e21, 'too_large'],
      ['99999999999999999999999', 'too_large'],
      [true, 'invalid_type'],
      [null, 'invalid_type'],
      [[10], 'invalid_type'],
      [{ value: 10 }, 'invalid_type'],
    ])('refuses %j with %s', async (amount, code) => {
      expectFieldErrors(await credit(amount), { amount: code });
    });

    it('treats a 0.1 and a "0.10" with the same Idempotency-Key as the same request', async () => {
      const key = uuidV4();
      const first = await postMovement({ idempotencyKey: key, body: { business_code: merchant.businessCode, amount: 0.1 } });
      const second = await postMovement({ idempotencyKey: key, body: { amount: '0.10', business_code: merchant.businessCode } });
      expect(first.status, first.text).toBe(201);
      expect(second.status, second.text).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
    });
  });

  describe('order of checks (docs/api-reference.md#order-of-checks)', () => {
    it('answers 401 before 415, 413, 400 and 422', async () => {
      expectApiError(await postMovement({ apiKey: null, rawBody: 'hello', headers: { 'content-type': 'text/plain' } }), 'API_KEY_MISSING');
      expectApiError(await postMovement({ apiKey: null, rawBody: '{"amount": ' }), 'API_KEY_MISSING');
      expectApiError(await postMovement({ apiKey: null, body: { amount: 'abc' }, idempotencyKey: null }), 'API_KEY_MISSING');
      expectApiError(await postMovement({ apiKey: 'mk_test_' + 'b'.repeat(32), rawBody: '{"amount": ' }), 'API_KEY_INVALID');
      expectApiError(await postMovement({ apiKey: 'mk_test_' + 'b'.repeat(32), body: { amount: 'abc' } }), 'API_KEY_INVALID');
      expectApiError(await postMovement({ apiKey: null, rawBody: jsonBodyOfSize(70 * 1024, 1) }), 'API_KEY_MISSING');
    });

    it('answers a key-level 403 before reading the body', async () => {
      expectApiError(await postMovement({ apiKey: partner.masterKey, rawBody: '{"amount": ' }), 'MERCHANT_KEY_REQUIRED');
      expectApiError(await postMovement({ apiKey: partner.masterKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 'MERCHANT_KEY_REQUIRED');
      expectApiError(await t.request('POST', '/test/ach-only', {
        apiKey: merchant.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' },
      }), 'MODULE_NOT_ENABLED');
    });

    it('answers body errors (415, 400 MALFORMED_JSON) before the Idempotency-Key header', async () => {
      expectApiError(await postMovement({ idempotencyKey: null, rawBody: '{"amount": ' }), 'MALFORMED_JSON');
      expectApiError(await postMovement({ idempotencyKey: 'nope', rawBody: '{"amount": ' }), 'MALFORMED_JSON');
      expectApiError(await postMovement({ idempotencyKey: null, rawBody: '{}', headers: { 'content-type': 'text/plain' } }), 'UNSUPPORTED_MEDIA_TYPE');
      expectApiError(await postMovement({ idempotencyKey: null, rawBody: jsonBodyOfSize(70 * 1024, merchant.businessCode) }), 'PAYLOAD_TOO_LARGE');
    });

    it('answers the Idempotency-Key header 400 before 422 validation', async () => {
      const invalid = { business_code: 'x', amount: -1, colour: 'blue' };
      expectApiError(await postMovement({ idempotencyKey: null, body: invalid }), 'IDEMPOTENCY_KEY_MISSING');
      expectApiError(await postMovement({ idempotencyKey: 'not-a-uuid', body: invalid }), 'IDEMPOTENCY_KEY_INVALID');
      expectApiError(await postMovement({ idempotencyKey: null, rawBody: '{"__proto__": {}}' }), 'IDEMPOTENCY_KEY_MISSING');
    });

    it('answers 422 before 403 BUSINESS_CODE_MISMATCH', async () => {
      expectFieldErrors(await postMovement({ body: { business_code: otherMerchant.businessCode, amount: 10.001 } }), { amount: 'too_many_decimals' });
      expectFieldErrors(await postMovement({ rawBody: `{"business_code": ${otherMerchant.businessCode}, "amount": 1, "__proto__": {}}` }), { ['__proto__']: 'unknown_field' });
      expectApiError(await postMovement({ body: { business_code: otherMerchant.businessCode, amount: 1 } }), 'BUSINESS_CODE_MISMATCH');
    });

    it('answers 403 BUSINESS_CODE_MISMATCH before the idempotency replay', async () => {
      const key = uuidV4();
      const first = await postMovement({ idempotencyKey: key, body: { business_code: merchant.businessCode, amount: 3 } });
      expect(first.status, first.text).toBe(201);
      expectApiError(await postMovement({ idempotencyKey: key, body: { business_code: otherMerchant.businessCode, amount: 3 } }), 'BUSINESS_CODE_MISMATCH');
    });
  });

  describe('429 RATE_LIMITED', () => {
    let limited: TestApp;
    beforeAll(async () => {
      // A second instance on the same database with a bucket of one request.
      limited = await startTestApp({ kind, database: t.database, env: { RATE_LIMIT: '1/s,1' }, plugins: [fixtureRoutes] });
    });
    afterAll(() => limited.close());

    it('answers 429 with Retry-After and the RateLimit headers, after 401 and before 403 and body errors', async () => {
      const key = (await limited.createMerchant({ name: 'Limitada' })).apiKey;
      // The app's clock stands still: the bucket's one token never comes back during the test.
      const first = await limited.request('GET', '/test/merchant-only', { apiKey: key });
      expect(first.status, first.text).toBe(200);
      const response = await limited.request('GET', '/test/merchant-only', { apiKey: key });
      expectApiError(response, 'RATE_LIMITED');
      expectRetryAfter(response);
      for (const header of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
        expect(response.headers.get(header), header).toMatch(/^\d+$/);
      }
      // Still limited: 429 before the key-level 403 and before the body is read.
      const wrongKind = await limited.request('GET', '/test/partner-only', { apiKey: key });
      const badBody = await limited.request('POST', '/test/movements', { apiKey: key, rawBody: '{"amount": ', headers: { 'content-type': 'application/json' } });
      expectApiError(wrongKind, 'RATE_LIMITED');
      expectApiError(badBody, 'RATE_LIMITED');
      // An unknown key is 401, never counted against a bucket.
      expectApiError(await limited.request('GET', '/test/merchant-only', { apiKey: 'mk_test_' + 'c'.repeat(32) }), 'API_KEY_INVALID');
    });
  });
});

describe('503 SERVICE_UNAVAILABLE when the database is unreachable', () => {
  let app: App;
  let context: AppContext;
  let db: Database;
  let baseUrl: string;

  beforeAll(async () => {
    // Nothing listens on port 1: every connection is refused.
    const url = 'postgres://postgres@127.0.0.1:1/none';
    const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off' });
    db = await openPostgres({ url });
    const logger = createLogger('silent');
    context = createAppContext({ config, db, clock: new TestClock() }, { log: logger });
    app = await buildApp(context, { plugins: [fixtureRoutes], logger });
    await context.lifecycle.start();
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await context?.lifecycle.stop(async () => { await app?.close(); });
    await db?.close();
  });

  const get = async (path: string, headers: Record<string, string> = {}): Promise<TestResponse> => {
    const response = await fetch(baseUrl + path, { headers });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
  };

  it('still starts and answers /healthz', async () => {
    const response = await get('/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it('answers /readyz with 503 and Retry-After', async () => {
    const response = await get('/readyz');
    expectApiError(response, 'SERVICE_UNAVAILABLE');
    expectRetryAfter(response);
  });

  it('answers an authenticated route with 503 and Retry-After, not 500 or 401', async () => {
    const response = await get('/api/v2/balance', { 'x-api-key': 'mk_test_' + 'd'.repeat(32) });
    expectApiError(response, 'SERVICE_UNAVAILABLE');
    expectRetryAfter(response);
    expect(response.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
  });
});
