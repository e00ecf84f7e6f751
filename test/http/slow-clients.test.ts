// What a client may hold of the service before it has sent a whole request (src/http/connections.ts), and
// what an unfinished or unreadable request leaves behind, through raw TCP — an HTTP client would finish its
// requests for us. Timeouts are shortened through their variables (HTTP_HEADERS_TIMEOUT,
// HTTP_REQUEST_TIMEOUT); the tests assert what the client receives, never how long it took.
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAppContext } from '../../src/composition.ts';
import type { AppContext } from '../../src/context.ts';
import { buildApp, type App } from '../../src/http/app.ts';
import { ADMIN_TOKEN, TestClock } from '../helpers/app.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.ts';

interface RawExchange {
  /** Everything the server wrote before it closed the connection (or before `giveUpMs`). */
  text: string;
  closedByServer: boolean;
}

/** Opens a connection, writes `parts` (each after the previous), and collects the answer until the server closes. */
function exchange(port: number, parts: string[], giveUpMs = 20_000): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closedByServer });
    };
    const timer = setTimeout(() => finish(false), giveUpMs);
    socket.on('connect', () => { for (const part of parts) socket.write(part); });
    socket.on('data', (chunk) => { text += chunk; });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

describe.each(databaseKinds())('slow and broken clients on %s', (kind) => {
  let database: TestDatabase;
  let app: App;
  let context: AppContext;
  let port: number;
  let merchantKey: string;
  let businessCode: number;
  const logLines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = loadConfig({
      DATABASE_URL: 'memory://', ADMIN_TOKEN, RATE_LIMIT: 'off', PUBLIC_RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off',
      HTTP_HEADERS_TIMEOUT: '1s', HTTP_REQUEST_TIMEOUT: '2s', CONNECTIONS_PER_ADDRESS: '4',
    });
    const stream = new Writable({ write(chunk, _encoding, done) { logLines.push(JSON.parse(String(chunk))); done(); } });
    const logger = pino({ level: 'info' }, stream) as unknown as import('fastify').FastifyBaseLogger;
    context = createAppContext({ config, db: database.db, clock: new TestClock() }, { log: logger });
    app = await buildApp(context, { logger });
    await context.lifecycle.start();
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as net.AddressInfo).port;
    const merchant = await fetch(`http://127.0.0.1:${port}/admin/v1/merchants`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Tienda' }),
    });
    ({ api_key: merchantKey, business_code: businessCode } = await merchant.json());
  });
  afterAll(async () => {
    await context?.lifecycle.stop(async () => { await app?.close(); });
    await database?.drop();
  });

  it('answers 408 in the contract\'s shape and closes a request whose body never comes', async () => {
    const answer = await exchange(port, [`POST /api/v2/simple-qrs HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${merchantKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"amount":`]);
    expect(answer.closedByServer).toBe(true);
    expect(statusOf(answer.text)).toBe(408);
    expect(bodyOf(answer.text)).toEqual({ type: 'invalid_request_error', code: 'REQUEST_TIMEOUT', message: expect.any(String) });
  });

  it('closes a connection whose headers never end', async () => {
    const answer = await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n']);
    expect(answer.closedByServer).toBe(true);
    expect(statusOf(answer.text)).toBe(408);
  });

  it('lets a long poll outlive the request timeout: only receiving the request is timed', async () => {
    const created = await fetch(`http://127.0.0.1:${port}/api/v2/simple-qrs`, {
      method: 'POST', headers: { 'x-api-key': merchantKey, 'content-type': 'application/json' }, body: JSON.stringify({ business_code: businessCode, amount: 5 }),
    });
    const qr = await created.json();
    const poll = await exchange(port, [`GET /api/v2/simple-qrs/${qr.id}?wait=3 HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${merchantKey}\r\nIf-None-Match: ${created.headers.get('etag') ?? '"none"'}\r\nConnection: close\r\n\r\n`]);
    expect([200, 304]).toContain(statusOf(poll.text)); // answered when its wait ran out, not cut at 2 s
  });

  it('answers bytes that are not HTTP, and headers too large, in the contract\'s shape', async () => {
    const garbage = await exchange(port, ['HELLO THERE\r\n\r\n']);
    expect(statusOf(garbage.text)).toBe(400);
    expect(bodyOf(garbage.text)).toEqual({ type: 'invalid_request_error', code: 'MALFORMED_REQUEST', message: expect.any(String) });
    const huge = await exchange(port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    expect(statusOf(huge.text)).toBe(431);
    expect(bodyOf(huge.text).code).toBe('HEADERS_TOO_LARGE');
  });

  it('refuses a client network\'s connection past CONNECTIONS_PER_ADDRESS with a 429, and takes it again once one closes', async () => {
    const held = await Promise.all(Array.from({ length: 4 }, () => new Promise<net.Socket>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    })));
    try {
      const refused = await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n']);
      expect(statusOf(refused.text)).toBe(429);
      expect(bodyOf(refused.text)).toEqual({ type: 'rate_limit_error', code: 'RATE_LIMITED', message: expect.stringContaining('connections') });
      expect(refused.text).toMatch(/\r\nRetry-After: 1\r\n/);
      const closed = new Promise((resolve) => held[0]!.once('close', resolve));
      held[0]!.destroy();
      await closed;
      await new Promise((resolve) => setImmediate(resolve)); // the server sees its side close
      const admitted = await exchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
      expect(statusOf(admitted.text)).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it.each(['destroys', 'half-closes'] as const)('answers a body cut off by a client that %s its connection as the client\'s doing: no 503, no "database unavailable"', async (how) => {
    logLines.length = 0;
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.on('error', () => {});
    socket.write(`POST /api/v2/simple-qrs HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${merchantKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"amount":`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    let answer = '';
    socket.on('data', (chunk) => { answer += chunk; });
    if (how === 'destroys') socket.destroy();
    else socket.end();
    const abandoned = () => logLines.find((line) => String(line.msg).startsWith('request abandoned'));
    for (let i = 0; i < 100 && !abandoned(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100)); // anything else it logs
    socket.destroy();
    expect(abandoned()).toMatchObject({ level: 30, status: 400 });
    expect(logLines.filter((line) => String(line.msg).includes('database unavailable') || Number(line.level) >= 40)).toEqual([]);
    // Whether or not an answer still reached the client, it is a 400, never a 503.
    if (answer !== '') expect(statusOf(answer)).toBe(400);
    const completed = logLines.filter((line) => line.msg === 'request completed');
    expect(completed.map((line) => line.statusCode).filter((status) => status !== 400)).toEqual([]);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).not.toMatch(/http_requests_total\{[^}]*status_code="503"/);
  });

  it('answers a static path that climbs out of its folder 404, with no error logged', async () => {
    logLines.length = 0;
    for (const path of ['/docs/static/%2e%2e/%2e%2e/package.json', '/docs/static/..%2f..%2fpackage.json', '/docs/static/%2e%2e%2f']) {
      const answer = await exchange(port, [`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
      expect(statusOf(answer.text), path).toBe(404);
      expect(bodyOf(answer.text).code, path).toBe('NOT_FOUND');
    }
    expect(logLines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });
});
