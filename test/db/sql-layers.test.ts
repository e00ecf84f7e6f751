// The layering of src/ holds in SQL too (docs/architecture.md#layout): a view, function or trigger of a
// module, and the SQL of a module's TypeScript, reads and writes only its own module's tables and those of
// the modules its TypeScript imports. A lower module that read a higher one's tables through a view would
// be the import arrow layers.test.ts refuses, drawn where no import statement shows it.
//
// The module arrows are read from the import statements of src/<module>/ (routes and pages left out, as
// they sit above every capability), closed transitively; every table, view and function of the migrated
// schema must be declared below with its owning module, so a new one cannot slip past unowned. Views are
// read through the catalog's dependencies (pg_depend of their rewrite rule), functions through their
// source (prosrc), triggers as their function reacting to their table, foreign keys as their table
// referring to another. On both databases: the catalog is
// the same, and PGlite is what a run without PostgreSQL has.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.ts';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Which module owns each table, view and function of the schema: the folder of src/ whose stores keep it. */
const OWNERS: Record<string, string> = {
  // db
  schema_migrations: 'db',
  database_mode: 'db', // src/db/database-mode.ts: the MODE a database was first started in
  // rails
  rail_attempts: 'rails',
  rail_qr_cancels: 'rails',
  // merchants
  partners: 'merchants',
  merchants: 'merchants',
  api_keys: 'merchants',
  merchant_profiles: 'merchants',
  merchant_payout_accounts: 'merchants',
  // ledger
  balances: 'ledger',
  movements: 'ledger',
  movement_days: 'ledger',
  movement_states: 'ledger',
  journal_entries: 'ledger',
  journal_postings: 'ledger',
  ledger_buckets: 'ledger',
  movement_history: 'ledger',
  journal_refuse_change: 'ledger',
  journal_check_balanced: 'ledger',
  journal_check_entries_posted: 'ledger',
  // events
  events: 'events',
  events_refuse_change: 'events',
  // idempotency
  idempotency_keys: 'idempotency',
  // qr
  simple_qrs: 'qr',
  qr_payments: 'qr',
  qr_payments_movement_states: 'qr',
  // transfers
  transfers: 'transfers',
  transfer_batches: 'transfers',
  transfer_batch_items: 'transfers',
  transfers_movement_states_insert: 'transfers',
  transfers_movement_states_update: 'transfers',
  // refunds
  refunds: 'refunds',
  refunds_movement_states_insert: 'refunds',
  refunds_movement_states_update: 'refunds',
  // webhooks: the deliveries of new events are written by the webhooks' trigger on the events table
  webhook_endpoints: 'webhooks',
  webhook_deliveries: 'webhooks',
  webhook_attempts: 'webhooks',
  webhook_redelivery_windows: 'webhooks',
  webhook_deliveries_of_new_events: 'webhooks',
  event_subscribers: 'webhooks',
  // onboarding
  onboarding_intents: 'onboarding',
  onboarding_intents_hash_clear_token: 'onboarding',
  // bank
  bank_unmatched_credits: 'bank',
  bank_sweeps: 'bank',
  rail_reconciliations: 'bank',
  rail_reconciliation_days: 'bank',
  // payouts
  payout_schedules: 'payouts',
  payout_runs: 'payouts',
  // users: the merchant console's people and their sessions (the console's pages are src/console/)
  console_users: 'users',
  console_invitations: 'users',
  console_sessions: 'users',
};

/**
 * Reads across modules that the rule refuses and that are not fixed yet, each with why it stands. The test
 * fails when one of them goes away too, so the list can only shrink with the code.
 */
const KNOWN_EXCEPTIONS: Record<string, string> = {
  // The emit asks, in the insert of its events, whether any of them has a subscriber, so that only those
  // events wake the webhook dispatcher (migration 013). The answer is the webhooks' to give; moving it
  // behind the events module (a subscription table of its own, kept by a webhooks trigger) is open.
  'events/store.ts → event_subscribers (webhooks)': 'the emit wakes the dispatcher only for events with a subscriber',
};

/**
 * Foreign keys across modules that the rule refuses, kept for now: the ledger's rows are keyed by the
 * merchant's business_code and refer to the merchants table, though the ledger imports nothing of the
 * merchants module (merchants import the ledger, to open a balance). A reference to a merchant's identity,
 * checked on insert, not a read of what the merchant module keeps; the test fails when one goes.
 */
const KNOWN_FOREIGN_KEYS = [
  'balances → merchants (merchants)', 'ledger_buckets → merchants (merchants)', 'movement_days → merchants (merchants)',
  'movements → merchants (merchants)',
];

const isRouteFile = (file: string) => /(^|\/)(routes|admin-routes|events-routes)\.ts$/.test(file) || file.includes('/pages/') || file.endsWith('/http.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The files of src/'s module folders (src-relative, with /), each with its text. */
const moduleFiles = sourceFiles(SRC)
  .map((file) => ({ file: path.relative(SRC, file).split(path.sep).join('/'), text: readFileSync(file, 'utf8') }))
  .filter(({ file }) => file.includes('/'));
const moduleOf = (file: string) => file.split('/')[0]!;

/** Each module's direct imports of other modules, from the import statements of its files other than routes and pages. */
const directImports = new Map<string, Set<string>>();
for (const { file, text } of moduleFiles) {
  const from = moduleOf(file);
  const targets = directImports.get(from) ?? new Set<string>();
  directImports.set(from, targets);
  if (isRouteFile(file)) continue;
  for (const match of text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)) {
    const target = path.relative(SRC, path.resolve(path.dirname(path.join(SRC, file)), match[1]!)).split(path.sep).join('/');
    if (target.includes('/') && moduleOf(target) !== from) targets.add(moduleOf(target));
  }
}

/** The modules whose tables `module` may read or write: itself and everything its TypeScript imports, transitively. */
function reachable(module: string): Set<string> {
  const seen = new Set([module]);
  const queue = [module];
  while (queue.length > 0) {
    for (const next of directImports.get(queue.pop()!) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

/** "a → b (owner)" for each name `from` uses that belongs to a module `from`'s owner may not reach. */
function crossings(from: string, owner: string, used: Iterable<string>): string[] {
  const allowed = reachable(owner);
  return [...new Set(used)].filter((name) => OWNERS[name] !== undefined && !allowed.has(OWNERS[name]!))
    .map((name) => `${from} → ${name} (${OWNERS[name]})`);
}

/** The functions among OWNERS' names (the rest are tables and views). */
const FUNCTIONS = new Set([
  'journal_refuse_change', 'journal_check_balanced', 'journal_check_entries_posted', 'events_refuse_change',
  'qr_payments_movement_states', 'transfers_movement_states_insert', 'transfers_movement_states_update',
  'refunds_movement_states_insert', 'refunds_movement_states_update', 'webhook_deliveries_of_new_events',
  'event_subscribers', 'onboarding_intents_hash_clear_token',
]);

const withoutSqlComments = (sql: string) => sql.replace(/--[^\n]*/g, '');
const NAMES = Object.keys(OWNERS);
const namesIn = (text: string) => NAMES.filter((name) => new RegExp(`\\b${name}\\b`).test(text));

describe('module arrows from the import statements', () => {
  it('are found, and point down: the ledger imports no capability, transfers import the ledger', () => {
    expect(reachable('transfers').has('ledger')).toBe(true);
    expect([...reachable('ledger')].sort()).toEqual(['db', 'kernel', 'ledger']);
    expect(reachable('webhooks').has('events')).toBe(true);
    expect(reachable('events').has('webhooks')).toBe(false);
  });

  it('make the test able to fail: a ledger view reading transfers is a crossing', () => {
    expect(crossings('view movement_history', 'ledger', ['movements', 'transfers'])).toEqual(['view movement_history → transfers (transfers)']);
  });
});

describe('SQL in the TypeScript of src/', () => {
  // Table and view names where SQL puts them (after FROM, JOIN, INTO, UPDATE, TABLE), function names where
  // they are called; comments left out, TypeScript's and SQL's.
  const relationNames = NAMES.filter((name) => !FUNCTIONS.has(name));
  const usedBy = moduleFiles.map(({ file, text }) => {
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/[^\n]*/g, '$1').replace(/--\s[^\n]*/g, '');
    const relations = relationNames.filter((name) => new RegExp(`\\b(from|join|into|update|table)\\s+${name}\\b`, 'i').test(code));
    const functions = [...FUNCTIONS].filter((name) => new RegExp(`\\b${name}\\s*\\(`).test(code));
    return { file, used: [...relations, ...functions] };
  });

  it('is found: the stores name their tables', () => {
    expect(usedBy.find(({ file }) => file === 'transfers/store.ts')?.used).toContain('transfers');
    expect(usedBy.find(({ file }) => file === 'ledger/statement-store.ts')?.used).toContain('journal_postings');
  });

  it('reads and writes only the tables of its own module and of the modules it imports', () => {
    const found = usedBy.flatMap(({ file, used }) => crossings(file, moduleOf(file), used));
    expect(found.filter((crossing) => !(crossing in KNOWN_EXCEPTIONS))).toEqual([]);
    expect(Object.keys(KNOWN_EXCEPTIONS).filter((exception) => !found.includes(exception))).toEqual([]);
  });
});

describe.each(databaseKinds())('SQL objects of the migrated schema on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterAll(() => database?.drop());

  it('each have an owning module declared here', async () => {
    const { rows } = await database.db.query<{ name: string; what: string }>(
      `select c.relname as name, case c.relkind when 'v' then 'view' when 'm' then 'view' else 'table' end as what
         from pg_class c
        where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p', 'v', 'm')
       union all
       select p.proname, 'function' from pg_proc p where p.pronamespace = current_schema()::regnamespace
        order by 1`);
    expect(rows.length).toBeGreaterThan(30);
    expect(rows.filter(({ name }) => OWNERS[name] === undefined).map(({ name, what }) => `${what} ${name}`)).toEqual([]);
    // and nothing declared that the schema lacks: the map is the schema's, not a wish list
    const names = new Set(rows.map(({ name }) => name));
    expect(NAMES.filter((name) => !names.has(name))).toEqual([]);
    const functions = rows.filter(({ what }) => what === 'function').map(({ name }) => name);
    expect(functions.sort()).toEqual([...FUNCTIONS].sort());
  });

  it('views read only tables of their module and of the modules it imports', async () => {
    const { rows } = await database.db.query<{ view: string; used: string }>(
      `select distinct v.relname as view, coalesce(t.relname, f.proname) as used
         from pg_rewrite r
         join pg_class v on v.oid = r.ev_class and v.relkind in ('v', 'm')
         join pg_depend d on d.classid = 'pg_rewrite'::regclass and d.objid = r.oid
         left join pg_class t on d.refclassid = 'pg_class'::regclass and t.oid = d.refobjid and t.oid <> v.oid
         left join pg_proc f on d.refclassid = 'pg_proc'::regclass and f.oid = d.refobjid
        where v.relnamespace = current_schema()::regnamespace and coalesce(t.relname, f.proname) is not null
        order by 1, 2`);
    expect(rows.find(({ view }) => view === 'movement_history')?.used).toBeDefined();
    const found = rows.flatMap(({ view, used }) => crossings(`view ${view}`, OWNERS[view]!, [used]));
    expect(found).toEqual([]);
  });

  it('functions read and write only tables of their module and of the modules it imports', async () => {
    const { rows } = await database.db.query<{ name: string; source: string }>(
      `select proname as name, prosrc as source from pg_proc where pronamespace = current_schema()::regnamespace order by 1`);
    const found = rows.flatMap(({ name, source }) => crossings(`function ${name}`, OWNERS[name]!, namesIn(withoutSqlComments(source))));
    expect(found).toEqual([]);
  });

  it('foreign keys refer only to tables of their table\'s module and of the modules it imports', async () => {
    const { rows } = await database.db.query<{ table: string; referenced: string }>(
      `select distinct c.relname as table, r.relname as referenced
         from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_class r on r.oid = k.confrelid
        where k.contype = 'f' and c.relnamespace = current_schema()::regnamespace
        order by 1, 2`);
    expect(rows.length).toBeGreaterThan(20);
    const found = rows.flatMap(({ table, referenced }) => crossings(table, OWNERS[table]!, [referenced]));
    expect(found.sort()).toEqual([...KNOWN_FOREIGN_KEYS].sort());
  });

  it('triggers react to tables of their function\'s module or of the modules it imports', async () => {
    const { rows } = await database.db.query<{ trigger: string; table: string; function: string }>(
      `select t.tgname as trigger, c.relname as table, p.proname as function
         from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_proc p on p.oid = t.tgfoid
        where not t.tgisinternal and c.relnamespace = current_schema()::regnamespace
        order by 1`);
    expect(rows.length).toBeGreaterThan(5);
    const found = rows.flatMap(({ trigger, table, function: fn }) => crossings(`trigger ${trigger} (${fn})`, OWNERS[fn]!, [table]));
    expect(found).toEqual([]);
  });
});
