// What each ROLE serves, started as main.ts starts the service: ROLE=api the API without the jobs,
// ROLE=worker the jobs with only /healthz, /readyz and /metrics — so a supervisor and Prometheus reach a
// worker process as they reach an API process, and the jobs' webhook metrics are served somewhere.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/kernel/logging.ts';
import { startService, type RunningService } from '../../src/startup.ts';
import { ADMIN_TOKEN } from '../helpers/app.ts';
import { trackOpen } from '../helpers/open-resources.ts';

describe('ROLE', () => {
  let service: RunningService | undefined;
  let closed: (() => void) | undefined;
  afterEach(async () => {
    await service?.close();
    closed?.();
    service = undefined;
  });

  const start = async (role: 'api' | 'worker') => {
    const config = loadConfig({ DATABASE_URL: 'memory://', PORT: '0', ROLE: role, ADMIN_TOKEN, LOG_LEVEL: 'silent', SANDBOX_SETTLEMENT: 'off' });
    service = await startService(config, { log: createLogger('silent') });
    closed = trackOpen(`a ROLE=${role} service`);
    await service.ready;
    const address = service.app.server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    return async (path: string) => {
      const response = await fetch(base + path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return { status: response.status, text: await response.text() };
    };
  };

  it('worker: /healthz, /readyz and /metrics with the jobs\' metrics; no API, no operator API, no docs', async () => {
    const get = await start('worker');
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('webhook_delivery_attempts_total');
    for (const path of ['/api/v2/balance', '/admin/v1/merchants', '/docs', '/pay/abc']) expect((await get(path)).status).toBe(404);
  });

  it('api: the API and /metrics without the jobs\' metrics (no jobs run there)', async () => {
    const get = await start('api');
    expect((await get('/admin/v1/merchants')).status).toBe(200);
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('http_requests_total');
    expect(metrics.text).not.toContain('webhook_delivery_attempts_total');
  });
});
