// What every answer must be, whatever was asked (docs/api-reference.md: Errors, Hostile input): never a 5xx, always an
// X-Request-Id, and every JSON error exactly `{ type, code, message }` — plus `errors`, a list of
// `{ field, code, message }`, on a 422 VALIDATION_FAILED — with the status and type of the catalogue.
import { expect } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/kernel/errors.ts';
import { describeRequest, describeResponse, type HttpRequest, type HttpResponse } from './http.ts';
import type { Refusal } from './requests.ts';

export interface ErrorBody {
  type: string;
  code: string;
  message: string;
  errors?: Array<{ field: string; code: string; message: string }>;
}

const isJson = (response: HttpResponse) => /^application\/json\b/.test(response.headers['content-type'] ?? '');

function exchange(request: HttpRequest, response: HttpResponse, what?: string): string {
  return `${what ? `${what}\n` : ''}--- request\n${describeRequest(request)}\n--- response\n${describeResponse(response)}`;
}

/**
 * The answer is within the contract. `htmlErrorsAllowed`: a hosted page may answer a 4xx with an HTML page;
 * a JSON answer from it is held to the error shape all the same. Returns the error body of a 4xx JSON answer.
 */
export function expectWithinContract(request: HttpRequest, response: HttpResponse, options: { what?: string; htmlErrorsAllowed?: boolean } = {}): ErrorBody | undefined {
  const context = exchange(request, response, options.what);
  expect(response.status, `a 5xx\n${context}`).toBeLessThan(500);
  expect(response.headers['x-request-id'] ?? '', `no X-Request-Id\n${context}`).not.toBe('');
  if (response.status < 400) return undefined;
  if (options.htmlErrorsAllowed && !isJson(response)) {
    expect(response.headers['content-type'] ?? '', `a 4xx neither JSON nor HTML\n${context}`).toMatch(/^text\/html\b/);
    return undefined;
  }
  expect(isJson(response), `a 4xx that is not JSON\n${context}`).toBe(true);
  const body = JSON.parse(response.text) as ErrorBody;
  const catalogued = (ERROR_CATALOGUE as Record<string, { status: number; type: string }>)[body.code];
  const validationFailed = body.code === 'VALIDATION_FAILED';
  expect(Object.keys(body).sort(), `not the error shape\n${context}`).toEqual(validationFailed ? ['code', 'errors', 'message', 'type'] : ['code', 'message', 'type']);
  expect(catalogued, `an error code outside the catalogue\n${context}`).toBeDefined();
  expect({ status: response.status, type: body.type }, `status or type not the catalogue's for ${body.code}\n${context}`).toEqual({ status: catalogued!.status, type: catalogued!.type });
  expect(typeof body.message === 'string' && body.message.length > 0, `no message\n${context}`).toBe(true);
  if (validationFailed) {
    expect(Array.isArray(body.errors) && body.errors.length > 0, `a 422 without errors\n${context}`).toBe(true);
    for (const error of body.errors!) {
      expect(Object.keys(error).sort(), `a field error not { field, code, message }\n${context}`).toEqual(['code', 'field', 'message']);
      expect([typeof error.field, typeof error.code, typeof error.message], `a field error with a non-string member\n${context}`).toEqual(['string', 'string', 'string']);
    }
  }
  return body;
}

/** The answer is the refusal the API reference promises for a mutated request. */
export function expectRefusal(request: HttpRequest, response: HttpResponse, refusal: Refusal, what: string): void {
  const context = exchange(request, response, what);
  const body = expectWithinContract(request, response, { what });
  expect(response.status >= 400 && response.status < 500, `a mutated request was not refused\n${context}`).toBe(true);
  if (refusal.statuses) expect(refusal.statuses, `expected ${refusal.statuses.join(' or ')}\n${context}`).toContain(response.status);
  if (refusal.code) expect(body?.code, `expected ${refusal.code}\n${context}`).toBe(refusal.code);
  if (refusal.field !== undefined && body?.code === 'VALIDATION_FAILED') {
    expect(body.errors!.map((error) => error.field), `the 422 does not name ${refusal.field}\n${context}`).toContain(refusal.field);
  }
}

/**
 * A request its route's schemas accept may still be refused by the business rules (a QR expiring in the
 * past, a bank account the rail refuses), but never as malformed: never MALFORMED_JSON, 415, or a 422 that
 * calls one of its fields unknown or of the wrong type — that would mean the OpenAPI document, which
 * clients build from, does not describe what the service validates.
 */
export function expectAcceptedAsWellFormed(request: HttpRequest, response: HttpResponse): void {
  const body = expectWithinContract(request, response);
  const context = exchange(request, response, 'a request built from the OpenAPI schemas');
  expect(['MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE'], `refused as malformed\n${context}`).not.toContain(body?.code);
  const schemaErrors = (body?.errors ?? []).filter((error) => error.code === 'unknown_field' || error.code === 'invalid_type');
  expect(schemaErrors, `refused for a field the document describes\n${context}`).toEqual([]);
}
