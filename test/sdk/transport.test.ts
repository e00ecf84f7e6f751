// The SDK's transport against a scripted HTTP server, for what the service itself does not do on cue:
// an answer whose headers never come, a body that streams slowly, a 503 that never ends. (Everything
// the service does is tested against the service, in sdk.test.ts and outage.test.ts.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient } from '@merchant-payments/sdk';
import { retryAfterMs } from '../../sdk/src/retry.ts';

type Handler = (request: http.IncomingMessage, response: http.ServerResponse, attempt: number) => void;

describe('the SDK transport', () => {
  let server: http.Server;
  let baseUrl: string;
  let handler: Handler = (_, response) => response.end();
  let attempts = 0;
  beforeAll(async () => {
    server = http.createServer((request, response) => handler(request, response, ++attempts));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    attempts = 0;
    server.closeAllConnections();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const json = (response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

  it('retries a read whose answer does not come within timeoutMs', async () => {
    handler = (_, response, attempt) => {
      if (attempt === 1) return; // never answered
      json(response, 200, { business_code: 1001, currency: 'BOB', available: 1, pending_out: 0 });
    };
    const client = createClient({ baseUrl, apiKey: 'mk_test_x', retry: { timeoutMs: 300, initialDelayMs: 10 } });
    expect((await client.balance.get()).available).toBe(1);
    expect(attempts).toBe(2);
  });

  it('lets a body stream for longer than timeoutMs once its headers came in time', async () => {
    handler = (_, response) => {
      response.writeHead(200, { 'content-type': 'text/csv' });
      response.write('entry_id,amount\n');
      let row = 0;
      const next = setInterval(() => {
        response.write(`${++row},1.00\n`);
        if (row === 6) {
          clearInterval(next);
          response.end();
        }
      }, 150); // 900 ms in all
    };
    const client = createClient({ baseUrl, apiKey: 'mk_test_x', retry: { timeoutMs: 300 } });
    const csv = await new Response(await client.balance.entriesCsv({ from: '2026-11-01', to: '2026-11-02' })).text();
    expect(csv.trim().split('\n')).toHaveLength(7);
  });

  it('gives up after maxRetries on a 503 that does not end, with the 503 as an ApiError; an undefined option keeps its default', async () => {
    handler = (_, response) => json(response, 503, { type: 'api_error', code: 'SERVICE_UNAVAILABLE', message: 'down' }, { 'retry-after': '0' });
    const client = createClient({ baseUrl, apiKey: 'mk_test_x', retry: { maxRetries: undefined, initialDelayMs: 10 } });
    const error = await client.balance.get().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(attempts).toBe(3); // the first and the default two retries
  });

  it('does not wait out a Retry-After longer than maxDelayMs: the 429 comes back at once', async () => {
    handler = (_, response) => json(response, 429, { type: 'rate_limit_error', code: 'RATE_LIMITED', message: 'slow down' }, { 'retry-after': '120' });
    const client = createClient({ baseUrl, apiKey: 'mk_test_x' });
    const started = Date.now();
    expect(await client.balance.get().catch((e: unknown) => e)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(attempts).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('keeps a proxy\'s error page as the message of an UNEXPECTED_RESPONSE', async () => {
    handler = (_, response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
    const client = createClient({ baseUrl, apiKey: 'mk_test_x' });
    expect(await client.balance.get().catch((e: unknown) => e)).toMatchObject({ status: 502, code: 'UNEXPECTED_RESPONSE', message: 'HTTP 502: <h1>Bad gateway</h1>' });
  });
});

describe('Retry-After', () => {
  it('reads delay-seconds and an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-11-24T12:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Tue, 24 Nov 2026 12:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Tue, 24 Nov 2026 11:00:00 GMT', now)).toBe(0);
    for (const junk of ['1.5', '-1', 'abc 3', '', '2026-11-24']) expect(retryAfterMs(junk, now), junk).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});
