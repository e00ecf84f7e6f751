// Migrations (docs/architecture.md, habit 10): idempotent on both databases, safe when several processes start together
// on PostgreSQL, each file in its own transaction, and reproducing the committed schema snapshot
// (src/db/schema.snapshot.txt) identically on PGlite and PostgreSQL.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { loadMigrations, migrate, type Migration } from '../../src/db/migrate.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import {
  createEmptyPostgresDatabase, createTestDatabase, databaseKinds, describeOnPostgres, openEmptyDatabase, type DatabaseKind, type TestDatabase,
} from '../helpers/databases.ts';

const SNAPSHOT_PATH = fileURLToPath(new URL('../../src/db/schema.snapshot.txt', import.meta.url));
const REGENERATE = 'UPDATE_SCHEMA_SNAPSHOT=1 TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/db/migrations.test.ts';

async function appliedVersions(db: Database): Promise<Array<{ version: number; name: string }>> {
  const { rows } = await db.query<{ version: number; name: string }>('select version, name from schema_migrations order by version');
  return rows;
}

async function tableExists(db: Database, name: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>('select to_regclass($1::text) is not null as found', [`public.${name}`]);
  return rows[0]!.found;
}

const ALL_MIGRATIONS = loadMigrations();

/** Starting a fresh PGlite (WASM) takes seconds on a busy machine; these tests each start one or two. */
const SLOW_TEST_MS = 120_000;

describe('the migration files', () => {
  // Numbers are reserved per capability (002 QR, 003 transfers, 004 webhooks), so a branch may hold a gap
  // until the others merge; the migrator applies files in order either way.
  it('are numbered from 001 in increasing order without duplicates, each with a header comment saying why', () => {
    expect(ALL_MIGRATIONS.length).toBeGreaterThan(0);
    const versions = ALL_MIGRATIONS.map((migration) => migration.version);
    expect(versions[0]).toBe(1);
    expect(versions).toEqual([...new Set(versions)].sort((a, b) => a - b));
    for (const migration of ALL_MIGRATIONS) expect(migration.sql.trimStart(), migration.name).toMatch(/^--\s*\S/);
  });
});

describe.each(databaseKinds())('migrations on %s', (kind) => {
  it('apply every file on an empty database, and nothing the second time', async () => {
    const empty = await openEmptyDatabase(kind);
    try {
      const names = ALL_MIGRATIONS.map((migration) => migration.name);
      expect(await migrate(empty.db)).toEqual(names);
      expect(await migrate(empty.db)).toEqual([]);
      expect(await appliedVersions(empty.db)).toEqual(ALL_MIGRATIONS.map(({ version, name }) => ({ version, name })));
      // The platform's own merchant account is created once, not once per run.
      const { rows } = await empty.db.query<{ count: number }>('select count(*) as count from merchants where is_platform');
      expect(rows[0]!.count).toBe(1);
    } finally {
      await empty.drop();
    }
  }, SLOW_TEST_MS);

  it('apply nothing to an already migrated database', async () => {
    const database = await createTestDatabase(kind);
    try {
      expect(await migrate(database.db)).toEqual([]);
    } finally {
      await database.drop();
    }
  }, SLOW_TEST_MS);

  it('run each file in its own transaction: a failing file leaves nothing behind and is not recorded', async () => {
    const empty = await openEmptyDatabase(kind);
    try {
      const nextVersion = Math.max(...ALL_MIGRATIONS.map((migration) => migration.version)) + 1;
      const broken: Migration = {
        version: nextVersion,
        name: `${String(nextVersion).padStart(3, '0')}_broken`,
        sql: '-- a file that fails half-way\ncreate table half_done (id integer);\nselect * from no_such_table;\n',
      };
      await expect(migrate(empty.db, [...ALL_MIGRATIONS, broken])).rejects.toThrow(/no_such_table/);
      expect(await tableExists(empty.db, 'half_done')).toBe(false);
      expect((await appliedVersions(empty.db)).map((row) => row.name)).toEqual(ALL_MIGRATIONS.map((migration) => migration.name));
      // Fixed, it applies on the next run.
      const fixed: Migration = { ...broken, sql: '-- fixed\ncreate table half_done (id integer);\n' };
      expect(await migrate(empty.db, [...ALL_MIGRATIONS, fixed])).toEqual([fixed.name]);
      expect(await tableExists(empty.db, 'half_done')).toBe(true);
    } finally {
      await empty.drop();
    }
  }, SLOW_TEST_MS);
});

describeOnPostgres('migrations started together on %s', () => {
  it.each([1, 2, 3])('apply each file exactly once from two pools on an empty database (round %i)', async () => {
    const empty = await createEmptyPostgresDatabase();
    const first = await openPostgres({ url: empty.url });
    const second = await openPostgres({ url: empty.url });
    try {
      const results = await Promise.allSettled([migrate(first), migrate(second)]);
      const failures = results.filter((result) => result.status === 'rejected').map((result) => String((result as PromiseRejectedResult).reason));
      expect(failures).toEqual([]);
      const appliedByBoth = results.flatMap((result) => (result as PromiseFulfilledResult<string[]>).value);
      expect([...appliedByBoth].sort()).toEqual(ALL_MIGRATIONS.map((migration) => migration.name).sort());
      expect(await appliedVersions(first)).toEqual(ALL_MIGRATIONS.map(({ version, name }) => ({ version, name })));
    } finally {
      await first.close();
      await second.close();
      await empty.drop();
    }
  }, SLOW_TEST_MS);
});

// ---------------------------------------------------------------------------------------------------
// Schema snapshot.

/**
 * A sorted, readable description of the public schema: per table its columns (in order, with type,
 * nullability, default and identity), its constraints and its indexes by name with their definitions;
 * then the sequences. PostgreSQL 18 (inside PGlite) also lists NOT NULL as constraints (contype 'n');
 * nullability is already on the column lines, so those are left out to compare with PostgreSQL 15.
 */
async function describeSchema(db: Database): Promise<string> {
  const columns = await db.query<{ table_name: string; column_name: string; column_type: string; not_null: boolean; default_value: string | null; identity: string; generated: string }>(`
    select c.relname as table_name, a.attname as column_name, format_type(a.atttypid, a.atttypmod) as column_type,
           a.attnotnull as not_null, pg_get_expr(d.adbin, d.adrelid) as default_value,
           a.attidentity::text as identity, a.attgenerated::text as generated
      from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      join pg_namespace n on n.oid = c.relnamespace
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where n.nspname = 'public' and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
     order by c.relname, a.attnum`);
  const constraints = await db.query<{ table_name: string; name: string; definition: string }>(`
    select cl.relname as table_name, co.conname as name, pg_get_constraintdef(co.oid, true) as definition
      from pg_constraint co
      join pg_class cl on cl.oid = co.conrelid
      join pg_namespace n on n.oid = co.connamespace
     where n.nspname = 'public' and co.contype in ('c', 'f', 'p', 'u', 'x')
     order by cl.relname, co.conname`);
  const indexes = await db.query<{ table_name: string; name: string; definition: string }>(`
    select tablename as table_name, indexname as name, indexdef as definition
      from pg_indexes where schemaname = 'public'
     order by tablename, indexname`);
  const sequences = await db.query<{ name: string; data_type: string; start_value: string; increment_by: string; min_value: string; max_value: string; cycle: boolean }>(`
    select sequencename as name, data_type::text as data_type, start_value::text as start_value,
           increment_by::text as increment_by, min_value::text as min_value, max_value::text as max_value, cycle
      from pg_sequences where schemaname = 'public'
     order by sequencename`);

  const tables = [...new Set(columns.rows.map((row) => row.table_name))].sort();
  const lines: string[] = [
    '# The database schema after every migration, on PGlite and PostgreSQL alike. Generated by',
    '# test/db/migrations.test.ts; regenerate it after adding a migration with:',
    `#   ${REGENERATE}`,
    '',
  ];
  for (const table of tables) {
    lines.push(`table ${table}`);
    for (const column of columns.rows.filter((row) => row.table_name === table)) {
      const parts = [`  column ${column.column_name} ${column.column_type}`, column.not_null ? 'not null' : 'null'];
      if (column.default_value !== null) parts.push(`default ${column.default_value}`);
      if (column.identity === 'a') parts.push('generated always as identity');
      if (column.identity === 'd') parts.push('generated by default as identity');
      if (column.generated === 's') parts.push('generated stored');
      lines.push(parts.join(' '));
    }
    for (const constraint of constraints.rows.filter((row) => row.table_name === table)) {
      lines.push(`  constraint ${constraint.name} ${constraint.definition}`);
    }
    for (const index of indexes.rows.filter((row) => row.table_name === table)) {
      lines.push(`  index ${index.name} ${index.definition}`);
    }
    lines.push('');
  }
  for (const sequence of sequences.rows) {
    lines.push(`sequence ${sequence.name} ${sequence.data_type} start ${sequence.start_value} increment ${sequence.increment_by} min ${sequence.min_value} max ${sequence.max_value}${sequence.cycle ? ' cycle' : ''}`);
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

describe('the schema snapshot (src/db/schema.snapshot.txt)', () => {
  const dumps = new Map<DatabaseKind, string>();
  const databases: TestDatabase[] = [];

  beforeAll(async () => {
    for (const kind of databaseKinds()) {
      const database = await createTestDatabase(kind);
      databases.push(database);
      dumps.set(kind, await describeSchema(database.db));
    }
    if (process.env.UPDATE_SCHEMA_SNAPSHOT === '1') {
      fs.writeFileSync(SNAPSHOT_PATH, dumps.get('postgres') ?? dumps.get('pglite')!);
    }
  }, SLOW_TEST_MS);
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  it.runIf(databaseKinds().includes('postgres'))('is the same on PGlite and PostgreSQL', () => {
    expect(dumps.get('pglite'), 'migrations produce different schemas on PGlite and PostgreSQL').toBe(dumps.get('postgres'));
  });

  it.each(databaseKinds())('is what the migrations produce on %s', (kind) => {
    expect(fs.existsSync(SNAPSHOT_PATH), `src/db/schema.snapshot.txt is missing; create it with: ${REGENERATE}`).toBe(true);
    const committed = fs.readFileSync(SNAPSHOT_PATH, 'utf8');
    expect(dumps.get(kind), `the schema differs from src/db/schema.snapshot.txt; if the change is intended, regenerate it with: ${REGENERATE} and commit it`).toBe(committed);
  });

  it('names the constraints the stores map to domain errors', () => {
    const dump = dumps.get('pglite')!;
    for (const name of ['balances_available_nonnegative', 'balances_pending_out_nonnegative', 'api_keys_key_prefix_unique', 'api_keys_key_hash_unique', 'idempotency_keys_pkey', 'movements_amount_sign']) {
      expect(dump).toMatch(new RegExp(`^  constraint ${name} `, 'm'));
    }
  });
});
