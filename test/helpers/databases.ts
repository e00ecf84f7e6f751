// Each test file gets its own database: a clone of the migrated template, on PostgreSQL (CREATE DATABASE …
// TEMPLATE) and on PGlite (an in-memory instance loaded from the migrated data directory of global-setup)
// (docs/architecture.md, habit 11).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { describe, inject } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { trackOpen } from './open-resources.ts';
import { databaseUrlWithName } from '../../src/db/url.ts';

export type DatabaseKind = 'pglite' | 'postgres';

/** The databases this run tests on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function databaseKinds(): DatabaseKind[] {
  return inject('postgresTemplate') ? ['pglite', 'postgres'] : ['pglite'];
}

/** True when this run has a PostgreSQL server (TEST_DATABASE_URL). */
export function hasPostgres(): boolean {
  return inject('postgresTemplate') !== '';
}

/**
 * A suite that proves something only PostgreSQL can (races, several pools, a dropped connection: PGlite
 * runs one transaction at a time in one process). Without TEST_DATABASE_URL its tests are still collected
 * and reported as skipped, so the run says what it did not test instead of finding no suite in the file.
 * `%s` in the name reads "postgres", as in the `describe.each(databaseKinds())` suites.
 */
export function describeOnPostgres(name: string, suite: (kind: 'postgres') => void): void;
export function describeOnPostgres(name: string, options: { timeout?: number }, suite: (kind: 'postgres') => void): void;
export function describeOnPostgres(
  name: string,
  optionsOrSuite: { timeout?: number } | ((kind: 'postgres') => void),
  maybeSuite?: (kind: 'postgres') => void,
): void {
  const suite = typeof optionsOrSuite === 'function' ? optionsOrSuite : maybeSuite!;
  const options = typeof optionsOrSuite === 'function' ? {} : optionsOrSuite;
  const title = name.replace('%s', 'postgres');
  (hasPostgres() ? describe : describe.skip)(title, options, () => suite('postgres'));
}

export interface TestDatabase {
  kind: DatabaseKind;
  db: Database;
  /** The PostgreSQL URL of this database (for a second process or pool); undefined on PGlite. */
  url?: string;
  /** Opens another pool on the same database (PostgreSQL only): a second service instance. */
  openAnother(): Promise<Database>;
  drop(): Promise<void>;
}

let template: Promise<Blob> | undefined;

/** The migrated PGlite data directory of global-setup, read once per test process. */
function pgliteTemplate(): Promise<Blob> {
  template ??= fs.promises.readFile(inject('pgliteTemplate')).then((bytes) => new Blob([bytes]));
  return template;
}

export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const db = await openPglite({ loadDataDir: await pgliteTemplate() });
    const closed = trackOpen('a PGlite test database');
    return {
      kind,
      db,
      openAnother: () => Promise.reject(new Error('PGlite is one connection in one process')),
      async drop() {
        await db.close();
        closed();
      },
    };
  }
  const serverUrl = process.env.TEST_DATABASE_URL!;
  const name = `mps_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(serverUrl, (admin) => admin.query(`create database ${name} template ${inject('postgresTemplate')}`));
  const url = databaseUrlWithName(serverUrl, name);
  const db = await openPostgres({ url });
  const closed = trackOpen(`the PostgreSQL test database ${name}`);
  const others: Database[] = [];
  return {
    kind,
    db,
    url,
    async openAnother() {
      const other = await openPostgres({ url });
      others.push(other);
      return other;
    },
    async drop() {
      for (const other of others) await other.close().catch(() => {});
      await db.close().catch(() => {});
      await withAdmin(serverUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`));
      closed();
    },
  };
}

/** A fresh empty PostgreSQL database with no migrations applied (migration tests). */
export async function createEmptyPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = process.env.TEST_DATABASE_URL!;
  const name = `mps_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(serverUrl, (admin) => admin.query(`create database ${name}`));
  return {
    url: databaseUrlWithName(serverUrl, name),
    drop: () => withAdmin(serverUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}

/** An empty database (no migrations applied) of `kind`: migration and backfill tests apply what they need. */
export async function openEmptyDatabase(kind: DatabaseKind): Promise<{ db: Database; url?: string; drop(): Promise<void> }> {
  if (kind === 'pglite') {
    const db = await openPglite();
    return { db, drop: () => db.close() };
  }
  const empty = await createEmptyPostgresDatabase();
  const db = await openPostgres({ url: empty.url });
  return {
    db,
    url: empty.url,
    async drop() {
      await db.close().catch(() => {});
      await empty.drop();
    },
  };
}

async function withAdmin<T>(url: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/**
 * Remembers what `db` holds now (a just-started app's database: the migrations and the rows its start
 * wrote, such as the platform merchant) and answers a function that puts it back, in one transaction: every
 * table emptied, then the remembered rows written again. A file whose tests each need the state of a fresh
 * app can so share one app instead of starting one per test (a database cloned and an app built: a second or
 * more each). It runs with session_replication_role = replica, so the journal's and the events' append-only
 * triggers and the foreign-key checks do not fire — this is a test's reset, not a change of history. DELETE
 * rather than TRUNCATE: a test leaves a few rows, and PostgreSQL's TRUNCATE of every table replaces their
 * files (0.3–0.7 s a reset on a busy machine, against about 10 ms). Ids are not restarted: a row of the next
 * test never takes an id that something the app still holds in memory (a cached API key, a business code)
 * names. Call it with nothing in flight towards the app.
 */
export async function databaseReset(db: Database): Promise<() => Promise<void>> {
  const tables = (await db.query<{ name: string }>(
    `select quote_ident(table_name) as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name <> 'schema_migrations'
      order by table_name`)).rows.map((row) => row.name);
  // Kept as the database's own JSON text, never parsed here: a bigint beyond 2^53 comes back exact.
  const kept: Array<{ table: string; rows: string }> = [];
  for (const table of tables) {
    const { rows } = await db.query<{ rows: string | null }>(`select json_agg(t)::text as rows from ${table} t`);
    if (rows[0]!.rows !== null) kept.push({ table, rows: rows[0]!.rows });
  }
  return () => db.transaction(async (tx) => {
    await tx.query('set local session_replication_role = replica');
    for (const table of tables) await tx.query(`delete from ${table}`);
    for (const { table, rows } of kept) {
      await tx.query(`insert into ${table} overriding system value select * from json_populate_recordset(null::${table}, $1::json)`, [rows]);
    }
  });
}
