// The full account number never reaches a log line: every transfer route is exercised with a logger at
// `trace` and no redaction at all, so a code path that logged a body or a destination would show here.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { buildApp, type App } from '../../src/http/app.ts';
import { ADMIN_TOKEN, TestClock } from '../helpers/app.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { createAppContext } from '../../src/composition.ts';
import type { AppContext } from '../../src/context.ts';

const ACCOUNT = '7788990011223344';

describe.each(databaseKinds())('logs of transfer routes on %s', (kind) => {
  let database: TestDatabase;
  let app: App;
  let context: AppContext;
  const lines: string[] = [];
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = loadConfig({ DATABASE_URL: 'memory://', ADMIN_TOKEN, RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off' });
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    const logger = pino({ level: 'trace' }, stream) as unknown as import('fastify').FastifyBaseLogger;
    context = createAppContext({ config, db: database.db, clock: new TestClock() }, { log: logger });
    app = await buildApp(context, { plugins: [fixtureRoutes], logger });
    await context.lifecycle.start();
    await app.ready();
  });
  afterAll(async () => {
    await context.lifecycle.stop(() => app.close());
    await database.drop();
  });

  it('never carry the full account number, whatever the route and outcome', async () => {
    const merchant = await app.inject({ method: 'POST', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name: 'Logs', ach_enabled: true } });
    const { business_code: businessCode, api_key: apiKey } = merchant.json();
    const headers = () => ({ 'x-api-key': apiKey, 'idempotency-key': randomUUID() });
    await app.inject({ method: 'POST', url: '/test/movements', headers: headers(), payload: { business_code: businessCode, amount: '100.00' } });
    const destination = { type: 'bank_account', bank_code: 1001, account_number: ACCOUNT, account_titular: 'Ana' };
    const created = await app.inject({ method: 'POST', url: '/api/v2/transfers', headers: headers(), payload: { business_code: businessCode, amount: 10, currency: 'BOB', destination } });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    const responses = await Promise.all([
      app.inject({ method: 'POST', url: '/api/v2/transfers', headers: headers(), payload: { business_code: businessCode, amount: 1000, currency: 'BOB', destination } }),
      app.inject({ method: 'POST', url: '/api/v2/transfers', headers: headers(), payload: { business_code: businessCode, amount: 10, currency: 'USD', destination: { ...destination, bank_code: 1 } } }),
      app.inject({ method: 'POST', url: '/api/v2/transfers', headers: headers(), payload: { business_code: businessCode + 1, amount: 10, currency: 'BOB', destination } }),
      app.inject({ method: 'POST', url: '/api/v2/transfers', headers: { ...headers(), 'content-type': 'application/json' }, payload: `{"destination":{"account_number":"${ACCOUNT}"` }),
    ]);
    expect(responses.map((response) => response.statusCode)).toEqual([400, 422, 403, 400]);
    await app.inject({ method: 'GET', url: `/api/v2/transfers/${id}`, headers: { 'x-api-key': apiKey } });
    await app.inject({ method: 'GET', url: '/api/v2/transfers', headers: { 'x-api-key': apiKey } });
    await app.inject({ method: 'POST', url: `/api/v2/sandbox/transfers/${id}/advance`, headers: { 'x-api-key': apiKey }, payload: { to: 'FAILED' } });
    await app.inject({ method: 'POST', url: `/api/v2/transfers/${id}/cancel`, headers: { 'x-api-key': apiKey } });
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.join('\n')).not.toContain(ACCOUNT);
    expect(lines.join('\n')).not.toContain(ACCOUNT.slice(0, 8));
  });
});
