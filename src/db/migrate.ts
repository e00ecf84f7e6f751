// Applies the numbered SQL files of ./migrations in order. Each file runs in its own transaction that
// first takes a transaction-scoped advisory lock, so processes starting together apply every file once.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
/** Advisory lock key of the migrator (any constant unique to this service; "mps:migrate"). */
const MIGRATION_LOCK_KEY = 0x6d70735f6d6967;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(directory = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(directory)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.replace(/\.sql$/, ''),
      sql: fs.readFileSync(path.join(directory, file), 'utf8'),
    }));
}

/** Applies the migrations not yet applied; returns the names of those it applied. */
export async function migrate(db: Database, migrations: Migration[] = loadMigrations()): Promise<string[]> {
  const applied: string[] = [];
  for (const migration of migrations) {
    const didApply = await db.transaction(async (tx) => {
      await tx.query('select pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
      await tx.query(`create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`);
      const { rows } = await tx.query('select 1 from schema_migrations where version = $1', [migration.version]);
      if (rows.length > 0) return false;
      await db.executeScript(tx, migration.sql);
      await tx.query('insert into schema_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
      return true;
    });
    if (didApply) applied.push(migration.name);
  }
  return applied;
}

/**
 * What `migrate` would do, without doing it (`mps migrate --dry-run`): the migrations of this version not yet
 * applied, in the order they would run, and the applied versions this version does not know (the database
 * was migrated by a newer release: docs/upgrading.md#going-back). Writes nothing and takes no lock.
 */
export async function pendingMigrations(db: Database, migrations: Migration[] = loadMigrations()): Promise<{ pending: string[]; unknown: string[] }> {
  const { rows: tables } = await db.query<{ present: boolean }>("select to_regclass('schema_migrations') is not null as present");
  const applied = tables[0]?.present
    ? (await db.query<{ version: number; name: string }>('select version, name from schema_migrations order by version')).rows
    : [];
  const appliedVersions = new Set(applied.map((row) => row.version));
  const known = new Set(migrations.map((migration) => migration.version));
  return {
    pending: migrations.filter((migration) => !appliedVersions.has(migration.version)).map((migration) => migration.name),
    unknown: applied.filter((row) => !known.has(row.version)).map((row) => row.name),
  };
}
