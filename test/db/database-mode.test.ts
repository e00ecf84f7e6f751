// The mode a database belongs to (src/db/database-mode.ts, migration 026) on both databases: the first claim
// records it, a claim in the same mode goes on, one in the other mode is refused; and on PostgreSQL two
// processes claiming different modes at once: exactly one records, the other is refused.
import { afterEach, describe, expect, it } from 'vitest';
import { checkDatabaseMode, claimDatabaseMode, DatabaseModeMismatch, recordedDatabaseMode } from '../../src/db/database-mode.ts';
import { createTestDatabase, databaseKinds, describeOnPostgres, type TestDatabase } from '../helpers/databases.ts';

describe.each(databaseKinds())('the database mode on %s', (kind) => {
  let database: TestDatabase;
  afterEach(() => database?.drop());

  it('has none before the first start; the first claim records it, the same mode goes on, the other is refused', async () => {
    database = await createTestDatabase(kind);
    const { db } = database;
    expect(await recordedDatabaseMode(db)).toBeNull();
    await checkDatabaseMode(db, 'live'); // nothing recorded: nothing to refuse, and nothing recorded by a check
    expect(await recordedDatabaseMode(db)).toBeNull();

    expect(await claimDatabaseMode(db, 'sandbox')).toEqual({ recorded: true });
    expect(await recordedDatabaseMode(db)).toEqual({ mode: 'sandbox', recordedAt: expect.any(Date) });
    expect(await claimDatabaseMode(db, 'sandbox')).toEqual({ recorded: false });

    const refused = await claimDatabaseMode(db, 'live').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DatabaseModeMismatch);
    expect((refused as Error).message).not.toContain('\n');
    expect((refused as Error).message).toMatch(/^MODE=live, but this database belongs to MODE=sandbox \(recorded by its first start, .*Z\): /);
    await expect(checkDatabaseMode(db, 'live')).rejects.toThrow(DatabaseModeMismatch);
    expect((await db.query('select mode from database_mode')).rows).toEqual([{ mode: 'sandbox' }]);
  });

  it('holds one row, of a known mode', async () => {
    database = await createTestDatabase(kind);
    await expect(database.db.query("insert into database_mode (singleton, mode) values (false, 'live')")).rejects.toThrow(/database_mode_singleton/);
    await expect(database.db.query("insert into database_mode (mode) values ('test')")).rejects.toThrow(/database_mode_mode_valid/);
  });
});

describeOnPostgres('two processes claiming a new database in different modes at once, on %s', (kind) => {
  let database: TestDatabase;
  afterEach(() => database?.drop());

  it('one records its mode, the other is refused', async () => {
    database = await createTestDatabase(kind);
    const other = await database.openAnother();
    const results = await Promise.allSettled([claimDatabaseMode(database.db, 'sandbox'), claimDatabaseMode(other, 'live')]);
    const recorded = results.filter((result) => result.status === 'fulfilled');
    const refused = results.filter((result) => result.status === 'rejected');
    expect(recorded).toEqual([{ status: 'fulfilled', value: { recorded: true } }]);
    expect(refused).toHaveLength(1);
    expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseModeMismatch);
  });
});
