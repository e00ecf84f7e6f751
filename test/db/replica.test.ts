// The service with a real streaming replica (DATABASE_REPLICA_URL, test/helpers/replica-service.ts). Replay
// on the replica is paused to make it lag as far as the test wants: lists, movements and the statement
// show the replica's older state, while a QR's status, its long poll, idempotent replays and the balance
// read the primary and never lag. A replica that is down costs nothing but load: lists come from the primary.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnPostgres } from '../helpers/databases.ts';
import { FALLBACK_WARNING, startReplicaService, type ReplicaService } from '../helpers/replica-service.ts';

describeOnPostgres('a streaming read replica (DATABASE_REPLICA_URL), on %s', { timeout: 120_000 }, () => {
  let service: ReplicaService;
  beforeAll(async () => {
    service = await startReplicaService();
  }, 120_000);
  afterAll(async () => {
    await service?.close();
  }, 60_000);

  const get = (url: string, headers: Record<string, string> = {}) => service.get(url, headers);
  const call = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => service.call(method, url, body, headers);
  const caughtUp = () => service.caughtUp();
  const eventually = (check: () => Promise<boolean>, what: string) => service.eventually(check, what);
  const listedQrs = async () => new Map<string, string>((await get('/api/v2/simple-qrs?per_page=100')).body.data.map((qr: any) => [qr.id, qr.status]));
  // Today in the service's time zone (SERVICE_TIMEZONE's default), the statement's only day here; read once,
  // so that a run across midnight compares one day with itself.
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/La_Paz' }).format(new Date());
  const statementPath = () => `/api/v2/balance/statement?from=${today}&to=${today}`;
  const paymentsToday = async () => (await get(statementPath())).body.days[0].payments.count as number;
  const movementsTotal = async () => (await get('/api/v2/balance/movements')).body.meta.total as number;
  const createQr = async () => {
    const response = await call('POST', '/api/v2/simple-qrs', { business_code: service.businessCode, amount: 150.5 });
    expect(response.status).toBe(201);
    return response.body as { id: string; status: string };
  };

  it('a lagging replica: lists show its older state, a QR\'s status, its long poll, replays and the balance never lag', async () => {
    const paid = await createQr();
    await caughtUp();
    expect((await listedQrs()).has(paid.id)).toBe(true);
    const movementsBefore = await movementsTotal();
    const eventsBefore = (await get('/api/v2/events')).body.meta.total as number;
    const balanceBefore = (await get('/api/v2/balance')).body;
    const paymentsBefore = await paymentsToday();

    await service.standby.pauseReplay();
    // The replica now serves a frozen snapshot: nothing written from here on reaches the lists until replay resumes.
    const unseen = await createQr();
    const read = await get(`/api/v2/simple-qrs/${unseen.id}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(unseen.id);
    const listed = await listedQrs();
    expect(listed.has(paid.id)).toBe(true);
    expect(listed.has(unseen.id)).toBe(false); // the list lags: proof that it reads the replica

    const etag = (await get(`/api/v2/simple-qrs/${paid.id}`)).headers.get('etag')!;
    const payment = await call('POST', `/api/v2/sandbox/simple-qrs/${paid.id}/payments`, {});
    expect(payment.status).toBe(201);
    expect((await get(`/api/v2/simple-qrs/${paid.id}`)).body.status).toBe('PAID');
    const polled = await get(`/api/v2/simple-qrs/${paid.id}?wait=5`, { 'if-none-match': etag });
    expect(polled.status).toBe(200);
    expect(polled.body.status).toBe('PAID');
    expect((await listedQrs()).get(paid.id)).toBe(paid.status); // still as the replica last saw it
    const balance = (await get('/api/v2/balance')).body;
    expect(balance.available).toBeCloseTo(balanceBefore.available + 150.5, 2); // money reads the primary
    expect(await movementsTotal()).toBe(movementsBefore); // the history reads the replica
    expect(await paymentsToday()).toBe(paymentsBefore); // and so does the statement

    const key = randomUUID();
    const transfer = { business_code: service.businessCode, amount: 100.25, currency: 'BOB', reference: 'Replica',
      destination: { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Juan Pérez' } };
    const created = await call('POST', '/api/v2/transfers', transfer, { 'idempotency-key': key });
    expect(created.status).toBe(201);
    const replayed = await call('POST', '/api/v2/transfers', transfer, { 'idempotency-key': key });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.id).toBe(created.body.id); // the key is read on the primary: never a second transfer
    expect((await get(`/api/v2/transfers/${created.body.id}`)).status).toBe(200);
    const transfers = (await get('/api/v2/transfers')).body.data.map((t: { id: number }) => t.id);
    expect(transfers).not.toContain(created.body.id);
    expect((await get('/api/v2/events')).body.meta.total).toBe(eventsBefore);

    await service.standby.resumeReplay();
    await eventually(async () => (await listedQrs()).get(paid.id) === 'PAID' && (await listedQrs()).has(unseen.id), 'the QRs as they are');
    await eventually(async () => (await movementsTotal()) === movementsBefore + 2, 'the payment and the transfer in the history');
    await eventually(async () => (await paymentsToday()) === paymentsBefore + 1, 'the payment in the statement');
    await eventually(async () => (await get('/api/v2/transfers')).body.data.some((t: { id: number }) => t.id === created.body.id), 'the transfer');
    expect((await get('/api/v2/events')).body.meta.total).toBeGreaterThan(eventsBefore);
    expect(service.warnings).toEqual([]); // a lagging replica is not a failing one: nothing went to the primary
  });

  it('a replica that is down: lists, movements, the statement and the export are served by the primary', async () => {
    await service.standby.stop('fast');
    const fresh = await createQr();
    expect((await listedQrs()).has(fresh.id)).toBe(true);
    expect((await get('/api/v2/balance/movements')).status).toBe(200);
    expect((await get(statementPath())).status).toBe(200);
    const csv = await fetch(`${service.baseUrl}/api/v2/balance/entries.csv?from=${today}&to=${today}`, { headers: { 'x-api-key': service.apiKey } });
    expect(csv.status).toBe(200);
    expect((await csv.text()).split('\n')[0]).toMatch(/^entry_id,/);
    expect(service.warnings.filter((line) => line.msg === FALLBACK_WARNING)).toHaveLength(1); // logged once per 30 s, not per read
  });
});
