// A read the replica cancels because replaying the primary's WAL needs what the read holds — a recovery
// conflict, SQLSTATE 40001, the error a busy hot standby gives long reads — is answered by the primary:
// the client sees a 200 with the primary's data, never the conflict. Provoked for real, without timing
// luck: the primary takes ACCESS EXCLUSIVE locks, which the standby replays. The first makes the
// service's read on the replica wait for `movements` while it already holds the other table it reads;
// the second asks the standby for that table, and once max_standby_streaming_delay has passed the standby
// cancels the read. Its own file and service: the fallback leaves the replica alone for 30 s, which
// would hide what replica.test.ts tests.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnPostgres } from '../helpers/databases.ts';
import { FALLBACK_WARNING, startReplicaService, type ReplicaService } from '../helpers/replica-service.ts';

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
