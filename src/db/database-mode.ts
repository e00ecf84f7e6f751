// The mode a database belongs to (migration 026; docs/upgrading.md#the-database-remembers-its-mode). The
// first process to start on it records its MODE; every later one — the service in any ROLE, the CLI — checks
// its own against that record after migrating and refuses to go on in the other mode. A MODE=sandbox CLI can
// so no longer mint `mk_test_…` keys, nor a sandbox service take sandbox payments, on a live database (nor
// live keys be minted on a sandbox one).
import type { Database } from './database.ts';

export type DatabaseMode = 'sandbox' | 'live';

/** A process in one mode found a database recorded in the other: it must stop. */
export class DatabaseModeMismatch extends Error {
  constructor(readonly wanted: DatabaseMode, readonly recorded: DatabaseMode, readonly recordedAt: Date) {
    super(`MODE=${wanted}, but this database belongs to MODE=${recorded} (recorded by its first start, ${recordedAt.toISOString()}): `
      + `refusing to run a ${wanted} process on a ${recorded} database; start it with MODE=${recorded}, or point DATABASE_URL or DATA_DIR at a ${wanted} database`);
  }
}

interface ModeRow {
  mode: DatabaseMode;
  recorded_at: Date | string;
}

/**
 * Records `mode` as the database's when it has none yet (its first start, or the first after the upgrade
 * that added 026) and answers whether this call recorded it; throws DatabaseModeMismatch when the database
 * belongs to the other mode. Two processes starting together in different modes: one records, the other
 * (its insert waiting for the first's commit, then doing nothing) reads the winner's mode and refuses.
 */
export async function claimDatabaseMode(db: Database, mode: DatabaseMode): Promise<{ recorded: boolean }> {
  const inserted = await db.query<ModeRow>(
    'insert into database_mode (mode) values ($1) on conflict (singleton) do nothing returning mode, recorded_at', [mode]);
  if (inserted.rows.length > 0) return { recorded: true };
  const existing = await recordedDatabaseMode(db);
  if (!existing) throw new Error('database_mode has no row after an insert that did nothing'); // cannot happen: nothing deletes it
  if (existing.mode !== mode) throw new DatabaseModeMismatch(mode, existing.mode, existing.recordedAt);
  return { recorded: false };
}

/** The database's recorded mode; null before its first start (or before migration 026 ran). */
export async function recordedDatabaseMode(db: Database): Promise<{ mode: DatabaseMode; recordedAt: Date } | null> {
  const { rows: tables } = await db.query<{ present: boolean }>("select to_regclass('database_mode') is not null as present");
  if (!tables[0]?.present) return null;
  const { rows } = await db.query<ModeRow>('select mode, recorded_at from database_mode');
  const row = rows[0];
  return row ? { mode: row.mode, recordedAt: new Date(row.recorded_at) } : null;
}

/** Refuses, without recording anything, when the database belongs to the other mode (`mps migrate --dry-run`). */
export async function checkDatabaseMode(db: Database, mode: DatabaseMode): Promise<void> {
  const existing = await recordedDatabaseMode(db);
  if (existing && existing.mode !== mode) throw new DatabaseModeMismatch(mode, existing.mode, existing.recordedAt);
}
