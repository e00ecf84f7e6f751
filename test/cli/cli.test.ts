// The operator CLI `mps` (docs/api-reference.md#cli) as a user runs it: the real bin/mps.js in a child process, on a fresh
// PostgreSQL database (DATABASE_URL) and on an embedded PGlite folder (DATA_DIR). What it creates is then
// used against the service opened on the same database. Each spawn costs about a second: assertions are
// grouped, and the tests of one database follow one operator session in order.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { loadMigrations } from '../../src/db/migrate.ts';
import { openDatabase } from '../../src/db/open.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { startTestApp, TEST_ENCRYPTION_KEYS, type TestApp, type TestResponse } from '../helpers/app.ts';
import { freePort, startBankFor } from '../helpers/baneco.ts';
import { CLI_TIMEOUT_MS, runCli } from '../helpers/cli.ts';
import { createEmptyPostgresDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The non-empty lines of a stream. */
const linesOf = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

/** Repeats `probe` until `done` accepts its answer or 5.5 s pass (docs/api-reference.md#authentication: within 5 s on every instance). */
async function eventually(probe: () => Promise<TestResponse>, done: (response: TestResponse) => boolean): Promise<TestResponse> {
  const deadline = Date.now() + 5_500;
  let response = await probe();
  while (!done(response) && Date.now() < deadline) {
    await sleep(100);
    response = await probe();
  }
  return response;
}

describe('mps CLI without a database', { timeout: CLI_TIMEOUT_MS }, () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-cli-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('--help prints the commands on stdout and exits 0 without opening a database', async () => {
    const dataDir = path.join(root, 'help-data');
    const result = await runCli(['--help'], { DATA_DIR: dataDir });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    for (const command of ['migrate', 'partner create', 'merchant create', 'merchant update', 'merchant pricing', 'key create', 'key revoke', 'ledger check', 'backup --to', 'restore --from']) {
      expect(result.stdout, command).toContain(command);
    }
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it('a wrong configuration value exits 2 with one line naming the variable', async () => {
    const dataDir = path.join(root, 'config-data');
    const result = await runCli(['ledger', 'check'], { DATA_DIR: dataDir, MODE: 'bogus' });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    const lines = linesOf(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('MODE');
    expect(lines[0]).toContain('bogus');
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});

describeOnPostgres('mps CLI on a fresh %s database', { timeout: CLI_TIMEOUT_MS }, (kind) => {
  let empty: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  let database: TestDatabase | undefined;
  let service: TestApp | undefined;
  let partner: { id: number; master_key: string; key_prefix: string };
  let merchant: { business_code: number; api_key: string; key_prefix: string };

  beforeAll(async () => {
    empty = await createEmptyPostgresDatabase();
    env = { DATABASE_URL: empty.url };
  });
  afterAll(async () => {
    await service?.close();
    if (database) await database.drop();
    else await empty?.drop();
  });

  /** The service on the database the CLI works on (started once the CLI has migrated it). */
  const startService = async () => {
    const db = await openPostgres({ url: empty.url });
    const others: Database[] = [];
    database = {
      kind,
      db,
      url: empty.url,
      async openAnother() {
        const other = await openPostgres({ url: empty.url });
        others.push(other);
        return other;
      },
      async drop() {
        for (const other of others) await other.close().catch(() => {});
        await db.close().catch(() => {});
        await empty.drop();
      },
    };
    return startTestApp({ kind, database, plugins: [fixtureRoutes] });
  };

  it('migrate --dry-run lists every migration of an empty database and changes nothing', async () => {
    const all = loadMigrations().map((migration) => migration.name);
    for (let run = 0; run < 2; run++) {
      const dry = await runCli(['migrate', '--dry-run'], env);
      expect(dry.stderr).toBe('');
      expect(dry.exitCode).toBe(0);
      expect(dry.json).toEqual({ pending: all, unknown: [] });
    }
    const db = await openPostgres({ url: empty.url });
    try {
      expect((await db.query("select to_regclass('schema_migrations') is null as untouched")).rows).toEqual([{ untouched: true }]);
    } finally {
      await db.close();
    }
    const misplaced = await runCli(['ledger', 'check', '--dry-run'], env);
    expect(misplaced.exitCode).toBe(1);
    expect(misplaced.stderr).toMatch(/^mps: --dry-run goes with migrate only/);
  });

  it('migrate applies every migration to an empty database, and a second run applies none', async () => {
    const first = await runCli(['migrate'], env);
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    expect(first.json).toEqual({ applied: loadMigrations().map((migration) => migration.name) });
    expect(first.json.applied.length).toBeGreaterThan(0);

    const second = await runCli(['migrate'], env);
    expect(second.exitCode).toBe(0);
    expect(second.json).toEqual({ applied: [] });
  });

  it('migrate --dry-run then lists nothing pending, and names a migration applied by a newer version', async () => {
    expect((await runCli(['migrate', '--dry-run'], env)).json).toEqual({ pending: [], unknown: [] });
    const db = await openPostgres({ url: empty.url });
    try {
      await db.query("insert into schema_migrations (version, name) values (999, '999_from_a_newer_release')");
      const dry = await runCli(['migrate', '--dry-run'], env);
      expect(dry.exitCode).toBe(0);
      expect(dry.json).toEqual({ pending: [], unknown: ['999_from_a_newer_release'] });
    } finally {
      await db.query('delete from schema_migrations where version = 999');
      await db.close();
    }
  });

  it('partner create prints the partner with its master key as JSON', async () => {
    const result = await runCli(['partner', 'create', '--name', 'Banco Socio'], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({
      id: expect.any(Number),
      name: 'Banco Socio',
      master_key: expect.stringMatching(/^pk_master_test_[0-9A-Za-z]{22,}$/),
      key_prefix: result.json.master_key.slice(0, 'pk_master_test_'.length + 8),
    });
    partner = result.json;
  });

  it('merchant create --ach on prints the merchant with an API key that works against the service on the same database', async () => {
    const result = await runCli(['merchant', 'create', '--name', 'Tienda CLI', '--city', 'Cochabamba', '--mcc', '5411', '--ach', 'on', '--partner', String(partner.id)], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({
      business_code: expect.any(Number),
      name: 'Tienda CLI',
      city: 'Cochabamba',
      mcc: '5411',
      status: 'active',
      ach_enabled: true,
      partner_id: partner.id,
      pricing: { qr_percent: 0, qr_fixed: 0, transfer_fixed: 0 },
      created_at: expect.stringMatching(ISO_UTC),
      updated_at: expect.stringMatching(ISO_UTC),
      api_key: expect.stringMatching(/^mk_test_[0-9A-Za-z]{22,}$/),
      key_prefix: result.json.api_key.slice(0, 'mk_test_'.length + 8),
    });
    merchant = result.json;

    service = await startService();
    const balance = await service.request('GET', '/api/v2/balance', { apiKey: merchant.api_key });
    expect(balance.status).toBe(200);
    expect(balance.body).toEqual({ business_code: merchant.business_code, currency: 'BOB', available: 0, pending_out: 0 });
    expect((await service.request('POST', '/test/ach-only', { apiKey: merchant.api_key })).status).toBe(200);
    const asPartner = await service.request('GET', '/test/partner-only', { apiKey: partner.master_key });
    expect(asPartner.body).toEqual({ partner_id: partner.id });
  });

  it('merchant payout-schedule sets a schedule as the API stores it, shows it, and names a wrong option in one line', async () => {
    const code = String(merchant.business_code);
    const set = await runCli(['merchant', 'payout-schedule', code, '--interval', 'weekly', '--weekday', '5',
      '--bank', '1014', '--account', '20150123455678', '--holder', 'Juan Pérez', '--keep', '50'], env);
    expect(set.stderr).toBe('');
    expect(set.exitCode).toBe(0);
    expect(set.json).toMatchObject({
      business_code: merchant.business_code, interval: 'weekly', weekday: 5, minimum: 10, keep: 50, last_run: null,
      destination: { type: 'bank_account', bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Pérez' },
    });
    expect(set.stdout).not.toContain('20150123455678');
    const api = await service!.request('GET', `/admin/v1/merchants/${code}/payout-schedule`);
    expect(api.body).toEqual(set.json);

    // Switched off with the account kept, then shown.
    expect((await runCli(['merchant', 'payout-schedule', code, '--interval', 'manual'], env)).json).toMatchObject({ interval: 'manual', destination: set.json.destination });
    const shown = await runCli(['merchant', 'payout-schedule', code], env);
    expect(shown.exitCode).toBe(0);
    expect(shown.json).toMatchObject({ interval: 'manual', weekday: null, keep: 0, destination: set.json.destination });

    const wrong = await runCli(['merchant', 'payout-schedule', code, '--interval', 'weekly', '--bank', '9999', '--account', '12ab', '--holder', 'Ana'], env);
    expect(wrong.exitCode).toBe(1);
    expect(linesOf(wrong.stderr)).toHaveLength(1);
    expect(wrong.stderr).toMatch(/--bank .*--account /);
    const noWeekday = await runCli(['merchant', 'payout-schedule', code, '--interval', 'weekly'], env);
    expect(noWeekday.exitCode).toBe(1);
    expect(noWeekday.stderr).toMatch(/^mps: --weekday is required with interval weekly/);
    const noInterval = await runCli(['merchant', 'payout-schedule', code, '--keep', '5'], env);
    expect(noInterval.exitCode).toBe(1);
    expect(noInterval.stderr).toContain('--interval manual|daily|weekly is needed');
  });

  it('merchant update --status suspended is answered 403 MERCHANT_SUSPENDED by the running service within 5 seconds', async () => {
    const result = await runCli(['merchant', 'update', String(merchant.business_code), '--status', 'suspended'], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toMatchObject({ business_code: merchant.business_code, status: 'suspended', ach_enabled: true });

    const response = await eventually(() => service!.request('GET', '/api/v2/balance', { apiKey: merchant.api_key }), (r) => r.status !== 200);
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('MERCHANT_SUSPENDED');
  });

  it('merchant pricing shows the plan, changes the fields given, and the running service reads the change', async () => {
    const code = String(merchant.business_code);
    const shown = await runCli(['merchant', 'pricing', code], env);
    expect(shown.stderr).toBe('');
    expect(shown.exitCode).toBe(0);
    expect(shown.json).toMatchObject({ business_code: merchant.business_code, pricing: { qr_percent: 0, qr_fixed: 0, transfer_fixed: 0 } });

    const changed = await runCli(['merchant', 'pricing', code, '--qr', '1.5%+0.30', '--transfer', '0.50'], env);
    expect(changed.stderr).toBe('');
    expect(changed.exitCode).toBe(0);
    expect(changed.json.pricing).toEqual({ qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 0.5 });
    const qrOnly = await runCli(['merchant', 'pricing', code, '--qr', '2%+0'], env);
    expect(qrOnly.json.pricing).toEqual({ qr_percent: 2, qr_fixed: 0, transfer_fixed: 0.5 });
    expect((await service!.request('GET', `/admin/v1/merchants/${code}`)).body.pricing).toEqual({ qr_percent: 2, qr_fixed: 0, transfer_fixed: 0.5 });

    // Every wrong option named in one line, before the database is opened; nothing changes.
    const bad = await runCli(['merchant', 'pricing', code, '--qr', '10.5%+0', '--transfer', '0.505'], env);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toBe('');
    expect(linesOf(bad.stderr)).toEqual([expect.stringMatching(/^mps: --qr must be PERCENT%\+FIXED .*; --transfer must be an amount /)]);
    expect((await service!.request('GET', `/admin/v1/merchants/${code}`)).body.pricing).toEqual({ qr_percent: 2, qr_fixed: 0, transfer_fixed: 0.5 });
    const unknown = await runCli(['merchant', 'pricing', '999999', '--transfer', '1'], env);
    expect(unknown.exitCode).toBe(1);
    expect(linesOf(unknown.stderr)).toEqual(['mps: No such merchant.']);
  });

  it('key revoke is answered 401 by the running service within 5 seconds', async () => {
    const result = await runCli(['key', 'revoke', merchant.key_prefix], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({ key_prefix: merchant.key_prefix, revoked_at: expect.stringMatching(ISO_UTC) });

    const response = await eventually(() => service!.request('GET', '/api/v2/balance', { apiKey: merchant.api_key }), (r) => r.status !== 403);
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('API_KEY_INVALID');
  });

  it('revoking an already revoked key exits 1 with one line on stderr', async () => {
    const result = await runCli(['key', 'revoke', merchant.key_prefix], env);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(linesOf(result.stderr)).toHaveLength(1);
  });

  it('statement prints a merchant\'s daily statement as JSON, and with --csv its journal entries', async () => {
    const shop = await service!.createMerchant();
    const qr = await service!.request('POST', '/api/v2/simple-qrs', { apiKey: shop.apiKey, body: { business_code: shop.businessCode, amount: 12.5 } });
    expect((await service!.request('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, { apiKey: shop.apiKey })).status).toBe(201);
    const hostile = await service!.request('POST', '/api/v2/simple-qrs', { apiKey: shop.apiKey, body: { business_code: shop.businessCode, amount: 1, description: 'Pedido\n=1+1' } });
    expect((await service!.request('POST', `/api/v2/sandbox/simple-qrs/${hostile.body.id}/payments`, { apiKey: shop.apiKey })).status).toBe(201);
    const day = '2026-11-22'; // the service's test clock; the CLI's own clock is later, so the day is past
    const json = await runCli(['statement', String(shop.businessCode), '--from', day, '--to', day], env);
    expect(json.stderr).toBe('');
    expect(json.exitCode).toBe(0);
    expect(json.json).toMatchObject({ business_code: shop.businessCode, opening_balance: 0, closing_balance: 13.5, days: [{ date: day, payments: { count: 2, amount: 13.5 } }] });
    const csv = await runCli(['statement', String(shop.businessCode), '--from', day, '--to', day, '--csv'], env);
    expect(csv.exitCode).toBe(0);
    const lines = csv.stdout.split('\r\n');
    expect(lines[0]).toMatch(/^entry_id,posted_at,kind,amount,balance_after,/);
    expect(lines[1]).toMatch(/,payment,12\.50,12\.50,BOB,/);
    // The API's writer (src/ledger/csv.ts): a line break inside a field is quoted, and a formula after it neutralised.
    const records = parseCsv(csv.stdout, { columns: true, record_delimiter: ['\r\n', '\n', '\r'] }) as Array<Record<string, string>>;
    expect(records.map((r) => [r.kind, r.amount, r.reference])).toEqual([['payment', '12.50', ''], ['payment', '1.00', "Pedido\n'=1+1"]]);
    const bad = await runCli(['statement', String(shop.businessCode), '--from', '2026-02-30', '--to', day], env);
    expect(bad.exitCode).toBe(1);
    expect(linesOf(bad.stderr)).toEqual([expect.stringMatching(/^mps: --from is not a date of the calendar/)]);
    const unknown = await runCli(['statement', '999999', '--from', day, '--to', day], env);
    expect(unknown.exitCode).toBe(1);
    expect(linesOf(unknown.stderr)).toHaveLength(1);
  });

  it('revenue prints the fees earned by day and merchant as JSON, and with --csv one row per day and merchant', async () => {
    const shop = await service!.createMerchant({ name: '=Tienda CLI' });
    expect((await service!.request('PATCH', `/admin/v1/merchants/${shop.businessCode}`, { body: { pricing: { qr_percent: 2, qr_fixed: 0.1 } } })).status).toBe(200);
    const qr = await service!.request('POST', '/api/v2/simple-qrs', { apiKey: shop.apiKey, body: { business_code: shop.businessCode, amount: 50 } });
    expect((await service!.request('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, { apiKey: shop.apiKey })).body.fee).toBe(1.1);
    const day = '2026-11-22'; // the service's test clock
    const json = await runCli(['revenue', '--from', day, '--to', day], env);
    expect(json.stderr).toBe('');
    expect(json.exitCode).toBe(0);
    expect(json.json.days).toEqual([{ date: day, count: expect.any(Number), amount: expect.any(Number) }]);
    expect(json.json.merchants).toContainEqual({ business_code: shop.businessCode, name: '=Tienda CLI', count: 1, amount: 1.1 });
    const csv = await runCli(['revenue', '--from', day, '--to', day, '--csv'], env);
    expect(csv.exitCode).toBe(0);
    const records = parseCsv(csv.stdout, { columns: true, record_delimiter: '\r\n' }) as Array<Record<string, string>>;
    // A merchant's name is text from outside: made inert for spreadsheets, like the journal export.
    expect(records).toContainEqual({ date: day, kind: 'fee', business_code: String(shop.businessCode), merchant: "'=Tienda CLI", count: '1', amount: '1.10' });
    const bad = await runCli(['revenue', '--from', day], env);
    expect(bad.exitCode).toBe(1);
    expect(linesOf(bad.stderr)).toEqual([expect.stringMatching(/^mps: --to /)]);
  });

  it('refund resolve records what became of a PENDING refund, once', async () => {
    const shop = await service!.createMerchant();
    const qr = await service!.request('POST', '/api/v2/simple-qrs', { apiKey: shop.apiKey, body: { business_code: shop.businessCode, amount: 8 } });
    const payment = await service!.request('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, { apiKey: shop.apiKey });
    const refund = await service!.request('POST', '/api/v2/refunds', { apiKey: shop.apiKey, body: { payment_id: payment.body.id }, headers: { 'idempotency-key': crypto.randomUUID() } });
    expect(refund.body.status).toBe('PENDING');
    const resolved = await runCli(['refund', 'resolve', refund.body.id, '--to', 'FAILED', '--note', 'Cuenta del pagador cerrada'], env);
    expect(resolved.stderr).toBe('');
    expect(resolved.exitCode).toBe(0);
    expect(resolved.json).toMatchObject({ id: refund.body.id, status: 'FAILED', resolution_note: 'Cuenta del pagador cerrada' });
    expect((await service!.request('GET', '/api/v2/balance', { apiKey: shop.apiKey })).body.available).toBe(8);
    const again = await runCli(['refund', 'resolve', refund.body.id, '--to', 'COMPLETED'], env);
    expect(again.exitCode).toBe(1);
    expect(linesOf(again.stderr)).toEqual([expect.stringMatching(/^mps: Refund rf_\w+ is FAILED: it was resolved already\.$/)]);
    const bad = await runCli(['refund', 'resolve', refund.body.id, '--to', 'PAID'], env);
    expect(bad.exitCode).toBe(1);
    expect(linesOf(bad.stderr)).toEqual([expect.stringMatching(/^mps: --to must be one of: COMPLETED, FAILED /)]);
  });

  it('rails batch resolve settles the transfers of a batch still IN_TRANSIT, once', async () => {
    const shop = await service!.createMerchant({ ach_enabled: true });
    const funded = await service!.request('POST', '/api/v2/simple-qrs', { apiKey: shop.apiKey, body: { business_code: shop.businessCode, amount: 30 } });
    await service!.request('POST', `/api/v2/sandbox/simple-qrs/${funded.body.id}/payments`, { apiKey: shop.apiKey });
    const transfer = await service!.request('POST', '/api/v2/transfers', {
      apiKey: shop.apiKey, headers: { 'idempotency-key': crypto.randomUUID() },
      body: { business_code: shop.businessCode, amount: 20, currency: 'BOB', destination: { type: 'bank_account', bank_code: 1001, account_number: '10000123454321', account_titular: 'Ana' } },
    });
    // A bank rail's batch whose upload's answer never came (the sandbox has none of its own): written as the batch job writes it.
    const batch = await service!.db.query<{ id: number }>(
      `with batch as (insert into transfer_batches (rail, status, item_count, amount_centavos, message, created_at, updated_at)
                      values ('baneco', 'unknown', 1, 2000, 'timeout', now(), now()) returning id)
       insert into transfer_batch_items (transfer_id, batch_id) select $1::bigint, id from batch returning batch_id as id`, [transfer.body.id]);
    await service!.db.query(`update transfers set status = 'IN_TRANSIT' where id = $1::bigint`, [transfer.body.id]);
    const batchId = `mps-b-${batch.rows[0]!.id}`;
    const resolved = await runCli(['rails', 'batch', 'resolve', batchId, '--to', 'FAILED'], env);
    expect(resolved.stderr).toBe('');
    expect(resolved.exitCode).toBe(0);
    expect(resolved.json).toMatchObject({ id: batchId, status: 'unknown', resolution: 'FAILED', transfers: [{ id: transfer.body.id, status: 'FAILED' }] });
    expect((await service!.request('GET', '/api/v2/balance', { apiKey: shop.apiKey })).body.available).toBe(30);
    const again = await runCli(['rails', 'batch', 'resolve', batchId, '--to', 'COMPLETED'], env);
    expect(again.exitCode).toBe(1);
    expect(linesOf(again.stderr)).toEqual([`mps: Batch ${batchId} was resolved already (FAILED); only an uploaded or unknown batch not resolved yet can be resolved.`]);
    const bad = await runCli(['rails', 'batch', 'resolve', '42', '--to', 'FAILED'], env);
    expect(bad.exitCode).toBe(1);
    expect(linesOf(bad.stderr)).toEqual([expect.stringMatching(/^mps: BATCH_ID is the batch id the bank knows, like mps-b-12/)]);
  });

  it('a MODE=live CLI refuses the database its sandbox commands recorded: exit 2, one line, before any change', async () => {
    const bank = await startBankFor(await freePort());
    try {
      const live = { ...env, ...bank.env, MODE: 'live', ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS };
      for (const args of [['partner', 'create', '--name', 'Banco en vivo'], ['migrate']]) {
        const result = await runCli(args, live);
        expect(result.exitCode, result.stderr).toBe(2);
        expect(result.stdout).toBe('');
        expect(linesOf(result.stderr)).toEqual([expect.stringMatching(/^mps: configuration error: MODE=live, but this database belongs to MODE=sandbox \(recorded by its first start, .*\): refusing to run a live process on a sandbox database; start it with MODE=sandbox/)]);
      }
    } finally {
      await bank.stop();
    }
    expect((await runCli(['partner', 'list'], env)).json.data.map((partner: { name: string }) => partner.name)).not.toContain('Banco en vivo');
  });

  it('ledger check exits 0 and reports every balance consistent', async () => {
    const result = await runCli(['ledger', 'check'], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const merchants = await service!.request('GET', '/admin/v1/merchants');
    expect(result.json).toEqual({ balances_checked: merchants.body.data.length, entries_checked: expect.any(Number), ok: true, violations: [], problems: [] });
  });
});

describe('mps CLI on an embedded DATA_DIR (pglite)', { timeout: CLI_TIMEOUT_MS }, () => {
  let root: string;
  let dataDir: string;
  let env: Record<string, string>;
  let merchant: { business_code: number; api_key: string; key_prefix: string };
  let secondKey: { api_key: string; key_prefix: string };

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-cli-'));
    dataDir = path.join(root, 'data');
    env = { DATA_DIR: dataDir };
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('merchant create on an empty DATA_DIR creates the database and prints the merchant with the defaults and its API key', async () => {
    const result = await runCli(['merchant', 'create', '--name', 'Tienda Embebida'], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toMatchObject({ name: 'Tienda Embebida', city: 'La Paz', mcc: '5999', status: 'active', ach_enabled: false, partner_id: null });
    expect(result.json.api_key).toMatch(/^mk_test_[0-9A-Za-z]{22,}$/);
    expect(result.json.api_key.startsWith(result.json.key_prefix)).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
    merchant = result.json;
  });

  it('merchant create gives the new merchant the plan of FEE_QR and FEE_TRANSFER', async () => {
    const result = await runCli(['merchant', 'create', '--name', 'Tienda Con Tarifa'], { ...env, FEE_QR: '1%+0.10', FEE_TRANSFER: '0.25' });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json.pricing).toEqual({ qr_percent: 1, qr_fixed: 0.1, transfer_fixed: 0.25 });
  });

  it('key create prints another API key of the merchant', async () => {
    const result = await runCli(['key', 'create', String(merchant.business_code)], env);
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({ api_key: expect.stringMatching(/^mk_test_/), key_prefix: expect.stringMatching(/^mk_test_/), kind: 'merchant' });
    expect(result.json.api_key).not.toBe(merchant.api_key);
    secondKey = result.json;
  });

  it('key create --kind terminal prints a terminal key (tk_…); any other kind is a usage error', async () => {
    const result = await runCli(['key', 'create', String(merchant.business_code), '--kind', 'terminal'], env);
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({ api_key: expect.stringMatching(/^tk_test_[0-9A-Za-z]{32}$/), key_prefix: expect.stringMatching(/^tk_test_/), kind: 'terminal' });
    const wrong = await runCli(['key', 'create', String(merchant.business_code), '--kind', 'partner'], env);
    expect(wrong.exitCode).not.toBe(0);
    expect(wrong.stderr).toMatch(/--kind/);
  });

  it('key revoke prints the revoked key prefix and time', async () => {
    const result = await runCli(['key', 'revoke', merchant.key_prefix], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({ key_prefix: merchant.key_prefix, revoked_at: expect.stringMatching(ISO_UTC) });
  });

  it('merchant update --status suspended prints the merchant suspended', async () => {
    const result = await runCli(['merchant', 'update', String(merchant.business_code), '--status', 'suspended'], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toMatchObject({ business_code: merchant.business_code, status: 'suspended' });
  });

  it('ledger check exits 0 and reports every balance consistent', async () => {
    const result = await runCli(['ledger', 'check'], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({ balances_checked: expect.any(Number), entries_checked: expect.any(Number), ok: true, violations: [], problems: [] });
    expect(result.json.balances_checked).toBeGreaterThanOrEqual(1);
  });

  it('an unknown command exits 1 with one line on stderr', async () => {
    const result = await runCli(['frobnicate', 'now'], env);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    const lines = linesOf(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('frobnicate');
  });

  describe('while the service holds the DATA_DIR', () => {
    let db: Database;
    let service: TestApp;
    beforeAll(async () => {
      // Opened as the service opens it: through the lock file of DATA_DIR.
      db = await openDatabase({ kind: 'pglite', dataDir }, { purpose: 'service' });
      service = await startTestApp({
        kind: 'pglite',
        database: { kind: 'pglite', db, openAnother: () => Promise.reject(new Error('one process')), drop: () => db.close() },
        plugins: [fixtureRoutes],
      });
    });
    afterAll(async () => {
      await service?.close();
      await db?.close();
    });

    it("the service sees the CLI's changes: the revoked key gets 401, the suspended merchant's other key 403", async () => {
      const revoked = await service.request('GET', '/api/v2/balance', { apiKey: merchant.api_key });
      expect(revoked.status).toBe(401);
      expect(revoked.body.code).toBe('API_KEY_INVALID');
      const suspended = await service.request('GET', '/api/v2/balance', { apiKey: secondKey.api_key });
      expect(suspended.status).toBe(403);
      expect(suspended.body.code).toBe('MERCHANT_SUSPENDED');
    });

    it('the CLI says in one line that the DATA_DIR is in use and exits non-zero', async () => {
      const result = await runCli(['ledger', 'check'], env);
      expect(result.exitCode).not.toBe(0);
      expect(result.exitCode).not.toBeNull();
      expect(result.stdout).toBe('');
      const lines = linesOf(result.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('in use');
      expect(lines[0]).toContain(dataDir);
      expect(lines[0]).toContain(String(process.pid));
    });
  });

  it('once the service has closed the DATA_DIR, the CLI opens it again: key list shows the revoked and the live key', async () => {
    const result = await runCli(['key', 'list', String(merchant.business_code)], env);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json.data).toEqual([
      expect.objectContaining({ key_prefix: merchant.key_prefix, created_at: expect.stringMatching(ISO_UTC), revoked_at: expect.stringMatching(ISO_UTC) }),
      expect.objectContaining({ key_prefix: secondKey.key_prefix, kind: 'merchant', created_at: expect.stringMatching(ISO_UTC), revoked_at: null }),
      expect.objectContaining({ key_prefix: expect.stringMatching(/^tk_test_/), kind: 'terminal', revoked_at: null }),
    ]);
    expect(result.stdout).not.toContain(secondKey.api_key);
  });
});
