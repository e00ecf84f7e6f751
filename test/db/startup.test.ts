// The service started as main.ts starts it, while its database is unreachable or silent, and then when it
// goes away and comes back: /healthz answers 200 all along, /readyz and the API 503 with Retry-After while
// the database is missing, no request hangs past the statement time limit, and the service recovers by
// itself — no restart. The database is cut off by a TCP proxy in front of the shared test server (never
// by stopping that server).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/kernel/logging.ts';
import { startService, type RunningService } from '../../src/startup.ts';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { createEmptyPostgresDatabase, describeOnPostgres } from '../helpers/databases.ts';
import { trackOpen } from '../helpers/open-resources.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

describeOnPostgres('starting while the database is down, on %s', () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let service: RunningService;
  let baseUrl: string;
  let closed: () => void;

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
    const server = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const config = loadConfig({
      DATABASE_URL: proxy.urlThrough(database.url), PORT: '0', ADMIN_TOKEN, RATE_LIMIT: 'off', LOG_LEVEL: 'silent', SANDBOX_SETTLEMENT: 'off',
      DATABASE_QUERY_TIMEOUT: '1s',
    });
    service = await startService(config, { log: createLogger('silent'), maxRetryDelayMs: 200 });
    closed = trackOpen('the started service');
    const address = service.app!.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await proxy?.accept(); // let close() finish its pending work quickly
    await service?.close();
    closed?.();
    await proxy?.close();
    await database?.drop();
  });

  const get = async (path: string, apiKey?: string) => {
    const response = await fetch(baseUrl + path, { headers: apiKey ? { 'x-api-key': apiKey } : {} });
    return { status: response.status, headers: response.headers, body: await response.json() as Record<string, unknown> };
  };
  const expectUnavailable = (response: Awaited<ReturnType<typeof get>>) => {
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ type: 'api_error', code: 'SERVICE_UNAVAILABLE' });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  };

  it('listens before the database answers: /healthz 200, /readyz and the API 503 with Retry-After', async () => {
    expect((await get('/healthz')).status).toBe(200);
    expectUnavailable(await get('/readyz'));
    expectUnavailable(await get('/api/v2/balance', `mk_test_${'a'.repeat(32)}`));
    expectUnavailable(await get('/admin/v1/merchants'));
  });

  let apiKey: string;
  it('migrates, creates the sandbox accounts and serves once the database comes', async () => {
    await proxy.accept();
    const sandbox = await service.ready;
    expect(sandbox?.apiKey).toMatch(/^mk_test_/);
    apiKey = sandbox!.apiKey;
    expect((await get('/readyz')).status).toBe(200);
    const balance = await get('/api/v2/balance', apiKey);
    expect(balance.status).toBe(200);
    expect(balance.body).toMatchObject({ available: 0 });
  });

  it('answers 503 while the database is away again and recovers by itself when it is back', async () => {
    await proxy.refuse();
    expectUnavailable(await get('/readyz'));
    expectUnavailable(await get('/api/v2/balance', apiKey));
    expect((await get('/healthz')).status).toBe(200);
    await proxy.accept();
    await expect.poll(async () => (await get('/api/v2/balance', apiKey)).status, { timeout: 10_000 }).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
  });

  it('answers 503 instead of hanging when the database stops answering without closing its connections', async () => {
    await proxy.freeze();
    const started = performance.now();
    const balance = await get('/api/v2/balance', apiKey);
    // A bound against hanging (connections would otherwise wait on TCP for minutes), not a speed claim.
    expect(performance.now() - started).toBeLessThan(10_000);
    expectUnavailable(balance);
    expect((await get('/healthz')).status).toBe(200);
    await proxy.accept();
    await expect.poll(async () => (await get('/api/v2/balance', apiKey)).status, { timeout: 15_000 }).toBe(200);
  });
});

describeOnPostgres('starting while the database accepts connections but never answers, on %s', () => {
  let database: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let service: RunningService | undefined;
  let closed: (() => void) | undefined;

  beforeAll(async () => {
    database = await createEmptyPostgresDatabase();
    const server = new URL(process.env.TEST_DATABASE_URL!);
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    await proxy.freeze();
  });
  afterAll(async () => {
    await proxy?.accept();
    await service?.close();
    closed?.();
    await proxy?.close();
    await database?.drop();
  });

  it('still listens, answers /healthz 200 and /readyz 503, and becomes ready once the database answers', async () => {
    const config = loadConfig({
      DATABASE_URL: proxy.urlThrough(database.url), PORT: '0', ADMIN_TOKEN, LOG_LEVEL: 'silent', SANDBOX_SETTLEMENT: 'off', DATABASE_QUERY_TIMEOUT: '1s',
    });
    service = await startService(config, { log: createLogger('silent'), maxRetryDelayMs: 200 });
    closed = trackOpen('the started service');
    const address = service.app!.server.address();
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${baseUrl}/readyz`)).status).toBe(503);
    await proxy.accept();
    await service.ready;
    await expect.poll(async () => (await fetch(`${baseUrl}/readyz`)).status, { timeout: 15_000 }).toBe(200);
  });
});
