// The rules of replicaWithFallback (src/db/replica.ts) on two real embedded databases standing in for a
// replica and its primary: the "replica" lacks the table the read needs, as a replica that has not yet
// replayed a migration does. What a real streaming replica shows is in replica.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { REPLICA_PAUSE_MS, replicaWithFallback } from '../../src/db/replica.ts';

describe('reads of a replica, falling back to the primary', () => {
  let primary: Database;
  let replica: Database;
  beforeAll(async () => {
    primary = await openPglite({});
    replica = await openPglite({});
    await primary.query('create table notes (id int primary key, body text)');
    await primary.query("insert into notes values (1, 'on the primary')");
    await replica.query('create table behind (id int)'); // the replica has other tables, not `notes` yet
  });
  afterAll(async () => {
    await primary?.close();
    await replica?.close();
  });

  const reads = () => {
    let clock = 0;
    const fallbacks: unknown[] = [];
    const lagging = replicaWithFallback(replica, primary, { onFallback: (error) => fallbacks.push(error), now: () => clock });
    return { lagging, fallbacks, advance: (ms: number) => { clock += ms; } };
  };

  it('a read the replica fails with a database error runs on the primary, and the replica is left alone for a while', async () => {
    const { lagging, fallbacks, advance } = reads();
    const { rows } = await lagging.query<{ body: string }>('select body from notes where id = $1', [1]);
    expect(rows).toEqual([{ body: 'on the primary' }]);
    expect(fallbacks).toHaveLength(1);
    expect((fallbacks[0] as { code?: string }).code).toBe('42P01'); // undefined_table
    // Paused: the next reads go straight to the primary, without asking the replica again.
    await lagging.transaction((tx) => tx.query('select body from notes'));
    expect(fallbacks).toHaveLength(1);
    advance(REPLICA_PAUSE_MS);
    // The pause over, the replica is tried again (and still fails, so it is paused again).
    await lagging.query('select body from notes');
    expect(fallbacks).toHaveLength(2);
  });

  it('a session stays on the primary once one of its reads went there; a new session tries the replica again', async () => {
    const { lagging, fallbacks, advance } = reads();
    const session = lagging.session();
    await session.query('select body from notes');
    advance(REPLICA_PAUSE_MS); // the pause is over, but the session keeps to the server it moved to
    const { rows } = await session.query<{ here: boolean }>("select to_regclass('behind') is null as here");
    expect(rows).toEqual([{ here: true }]); // the primary has no `behind` table: this read was the primary's
    expect(fallbacks).toHaveLength(1);
    const fresh = await lagging.session().query<{ here: boolean }>("select to_regclass('behind') is null as here");
    expect(fresh.rows).toEqual([{ here: false }]); // the replica's answer
  });

  it('an error of the work itself is not a replica failure: it is thrown as it is, not run again', async () => {
    const { lagging, fallbacks } = reads();
    let runs = 0;
    const notFound = new Error('not found');
    await expect(lagging.transaction(async (tx) => {
      runs += 1;
      await tx.query('select 1');
      throw notFound;
    })).rejects.toBe(notFound);
    expect(runs).toBe(1);
    expect(fallbacks).toHaveLength(0);
  });
});
