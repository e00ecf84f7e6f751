// The service with a real streaming replica (DATABASE_REPLICA_URL, test/helpers/replica-service.ts). Replay
// on the replica is paused to make it lag as far as the test wants: lists, movements and the statement
// show the replica's older state, while a QR's status, its long poll, idempotent replays and the balance
// read the primary and never lag. A replica that is down costs nothing but load: lists come from the primary.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
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

// A read the replica cancels because replaying the primary's WAL needs what the read holds — a recovery
// conflict, SQLSTATE 40001, the error a busy hot standby gives long reads — is answered by the primary:
// the client sees a 200 with the primary's data, never the conflict. Provoked for real, without timing
// luck: the primary takes ACCESS EXCLUSIVE locks, which the standby replays. The first makes the
// service's read on the replica wait for `movements` while it already holds the other table it reads;
// the second asks the standby for that table, and once max_standby_streaming_delay has passed the standby
// cancels the read. It has a service of its own: the fallback leaves the replica alone for 30 s, which
// would hide what the first suite tests. (One file: the clusters of two files started at once could pick
// the same port.)
describeOnPostgres('a read the replica cancels for a recovery conflict, on %s', { timeout: 120_000 }, () => {
  let service: ReplicaService;
  const lockHolders: pg.Client[] = [];
  beforeAll(async () => {
    service = await startReplicaService();
    await service.standby.adminQuery("alter system set max_standby_streaming_delay = '200ms'");
    await service.standby.adminQuery('select pg_reload_conf()');
  }, 120_000);
  afterAll(async () => {
    for (const client of lockHolders) await client.end().catch(() => {});
    await service?.close();
  }, 60_000);

  /** A transaction on the primary holding an ACCESS EXCLUSIVE lock on `table` until it is committed. */
  const lockOnPrimary = async (table: string) => {
    const client = new pg.Client({ connectionString: service.primary.url('mps') });
    await client.connect();
    lockHolders.push(client);
    await client.query('begin');
    await client.query(`lock table ${table} in access exclusive mode`);
    await service.caughtUp(); // the standby has replayed the lock
    return { release: () => client.query('commit') };
  };

  it('is answered by the primary with the primary\'s data, and the fallback is logged with the conflict', async () => {
    const qr = await service.call('POST', '/api/v2/simple-qrs', { business_code: service.businessCode, amount: 20 });
    expect(qr.status).toBe(201);
    expect((await service.call('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, {})).status).toBe(201);
    await service.caughtUp();
    const before = await service.get('/api/v2/balance/movements');
    expect(before.status).toBe(200);
    expect(before.body.meta.total).toBeGreaterThan(0);
    expect(service.warnings).toEqual([]); // so far every read was the replica's

    const movements = await lockOnPrimary('movements');
    // The standby's replay now holds `movements`.
    const pending = service.get('/api/v2/balance/movements');
    pending.catch(() => {}); // awaited below; a wait that fails first must not leave it unhandled
    // The service's read on the standby: waiting for `movements`, holding the other tables it reads.
    let held = '';
    await service.eventually(async () => {
      const rows = await service.queryOn<{ held: string }>(service.standby, `
        select c.relname as held
          from pg_locks l join pg_class c on c.oid = l.relation join pg_stat_activity a on a.pid = l.pid
         where a.application_name = 'merchant-payments' and l.granted and c.relkind = 'r'
           and c.relnamespace = 'public'::regnamespace and c.relname <> 'movements'
           and exists (select 1 from pg_locks w where w.pid = l.pid and not w.granted)
         order by c.relname limit 1`);
      held = rows[0]?.held ?? '';
      return held !== '';
    }, 'the service\'s read waiting for the replayed lock');
    const second = await lockOnPrimary(held);
    // The standby cancels the read to replay the second lock; the service reads the primary instead,
    // where it waits for both locks until they are released.
    await service.eventually(async () => service.warnings.some((line) => line.msg === FALLBACK_WARNING), 'the read sent to the primary');
    await movements.release();
    await second.release();

    const answered = await pending;
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual(before.body);
    const fallbacks = service.warnings.filter((line) => line.msg === FALLBACK_WARNING);
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]!.error?.sqlstate).toBe('40001');
    expect(fallbacks[0]!.error?.message).toMatch(/conflict with recovery/);
    expect(service.warnings).toHaveLength(1); // nothing else went wrong
  });
});
