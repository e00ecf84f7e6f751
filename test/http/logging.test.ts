// Request logs: one JSON line per answered request, with its request id, method, route pattern, status and
// time — never the raw URL, whose path can carry a pay or onboarding token. Successful reads at debug.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { buildApp, type App } from '../../src/http/app.ts';
import { ADMIN_TOKEN, TestClock } from '../helpers/app.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.ts';
import { createAppContext } from '../../src/composition.ts';
import type { AppContext } from '../../src/context.ts';

describe.each(databaseKinds())('request logs on %s', (kind) => {
  let database: TestDatabase;
  let app: App;
  let context: AppContext;
  const lines: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = loadConfig({ DATABASE_URL: 'memory://', ADMIN_TOKEN, RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off' });
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    const logger = pino({ level: 'debug' }, stream) as unknown as import('fastify').FastifyBaseLogger;
    context = createAppContext({ config, db: database.db, clock: new TestClock() }, { log: logger });
    app = await buildApp(context, { logger });
    await context.lifecycle.start();
    await app.ready();
  });
  afterAll(async () => {
    await context.lifecycle.stop(() => app.close());
    await database.drop();
  });

  it('writes one line per request with the route pattern, never the token in the path', async () => {
    const token = 'Zx9TokenThatMustNotBeLogged1';
    lines.length = 0;
    const page = await app.inject({ method: 'GET', url: `/pay/${token}`, headers: { 'x-request-id': 'req-log-1' } });
    const health = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'req-log-2' } });
    expect([page.statusCode, health.statusCode]).toEqual([404, 200]);
    const requestLines = lines.filter((line) => line.msg === 'request completed');
    expect(requestLines).toHaveLength(2);
    // A failed read at info; a successful read (a POS poll, a health check) at debug.
    expect(requestLines[0]).toMatchObject({ level: 30, reqId: 'req-log-1', method: 'GET', route: '/pay/:token', statusCode: 404 });
    expect(requestLines[1]).toMatchObject({ level: 20, reqId: 'req-log-2', method: 'GET', route: '/healthz', statusCode: 200 });
    expect(typeof requestLines[0]!.responseTimeMs).toBe('number');
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it('logs every write at info, whatever its answer', async () => {
    lines.length = 0;
    const refused = await app.inject({ method: 'POST', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
    const created = await app.inject({ method: 'POST', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'Logged' } });
    expect([refused.statusCode, created.statusCode]).toEqual([422, 201]);
    const requestLines = lines.filter((line) => line.msg === 'request completed');
    expect(requestLines.map((line) => [line.level, line.method, line.route, line.statusCode])).toEqual([
      [30, 'POST', '/admin/v1/merchants', 422],
      [30, 'POST', '/admin/v1/merchants', 201],
    ]);
    // The API key of the new merchant is in the response, never in the log.
    expect(JSON.stringify(lines)).not.toContain(JSON.parse(created.body).api_key);
  });
});
