// `mps backup` and `mps restore` of the embedded database (docs/backups.md), as an operator runs them: the real
// bin/mps.js in child processes on DATA_DIR folders. The money is made through the service's HTTP API (a paid QR
// with fees, a transfer); the restored copy must pass the ledger check and show the same balances, through the
// same API keys, as the original.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { acquireDataDirLock } from '../../src/db/lock-file.ts';
import { loadMigrations } from '../../src/db/migrate.ts';
import { openDatabase } from '../../src/db/open.ts';
import { openPglite } from '../../src/db/pglite.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { CLI_TIMEOUT_MS, runCli } from '../helpers/cli.ts';

const linesOf = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

/**
 * The service as it runs on a DATA_DIR: opened through the folder's lock file. `fresh`: the DATA_DIR is made
 * from the suite's migrated template (as `mps migrate` would leave it, without initdb and the migrations again).
 */
async function serviceOn(dataDir: string, fresh = false): Promise<{ service: TestApp; db: Database }> {
  let db: Database;
  if (fresh) {
    const release = acquireDataDirLock(dataDir, 'service');
    const pglite = await openPglite({ dataDir, loadDataDir: new Blob([fs.readFileSync(inject('pgliteTemplate'))]) });
    const close = pglite.close.bind(pglite);
    db = Object.assign(pglite, { close: () => close().finally(release) });
  } else {
    db = await openDatabase({ kind: 'pglite', dataDir }, { purpose: 'service' });
  }
  const service = await startTestApp({
    kind: 'pglite',
    database: { kind: 'pglite', db, openAnother: () => Promise.reject(new Error('one process')), drop: () => db.close() },
  });
  return { service, db };
}

describe('mps backup and restore of an embedded DATA_DIR', { timeout: CLI_TIMEOUT_MS }, () => {
  let root: string;
  let dataDir: string;
  let backupFile: string;
  let shops: Array<{ businessCode: number; apiKey: string }>;
  let balances: unknown[];
  let originalCheck: { entries_checked: number; balances_checked: number };

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-backup-'));
    dataDir = path.join(root, 'data');
    backupFile = path.join(root, 'mps-backup.tar.gz');
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('while the service holds DATA_DIR, backup is refused in one line (exit 1) and writes no file', async () => {
    const { service, db } = await serviceOn(dataDir, true);
    try {
      // Money through the API: a paid QR with a fee, a transfer with its fee, and a merchant with a payment only.
      const paying = await service.createMerchant({ name: 'Tienda Respaldo', ach_enabled: true });
      expect((await service.request('PATCH', `/admin/v1/merchants/${paying.businessCode}`, { body: { pricing: { qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 0.5 } } })).status).toBe(200);
      const other = await service.createMerchant({ name: 'Otra Tienda' });
      for (const [shop, amount] of [[paying, 120], [other, 45.5]] as const) {
        const qr = await service.request('POST', '/api/v2/simple-qrs', { apiKey: shop.apiKey, body: { business_code: shop.businessCode, amount } });
        expect(qr.status).toBe(201);
        expect((await service.request('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, { apiKey: shop.apiKey })).status).toBe(201);
      }
      const transfer = await service.request('POST', '/api/v2/transfers', {
        apiKey: paying.apiKey, headers: { 'idempotency-key': crypto.randomUUID() },
        body: { business_code: paying.businessCode, amount: 50, currency: 'BOB', destination: { type: 'bank_account', bank_code: 1001, account_number: '10000123454321', account_titular: 'Ana' } },
      });
      expect(transfer.status).toBe(201);
      shops = [paying, other];
      balances = [];
      for (const shop of shops) balances.push((await service.request('GET', '/api/v2/balance', { apiKey: shop.apiKey })).body);
      expect(balances[0]).toMatchObject({ available: 120 - 2.1 - 50 - 0.5 });
      // The original's ledger check, through the operator API (the same report as `mps ledger check`).
      const check = await service.request('GET', '/admin/v1/ledger/check');
      expect(check.status).toBe(200);
      expect(check.body).toMatchObject({ ok: true });
      originalCheck = check.body;

      const refused = await runCli(['backup', '--to', backupFile], { DATA_DIR: dataDir });
      expect(refused.exitCode).toBe(1);
      expect(refused.stdout).toBe('');
      expect(linesOf(refused.stderr)).toEqual([expect.stringMatching(new RegExp(`^mps: The embedded database in ${dataDir} is in use by process ${process.pid} `))]);
      expect(fs.readdirSync(root)).toEqual(['data']);
    } finally {
      await service.close();
      await db.close();
    }
  });

  it('once the service stopped, backup writes the file and prints where and how large; a second backup to the same file, or one into a missing folder, is refused', async () => {
    const result = await runCli(['backup', '--to', backupFile], { DATA_DIR: dataDir });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({ file: backupFile, bytes: fs.statSync(backupFile).size, data_dir: dataDir });
    expect(fs.readdirSync(root).sort()).toEqual(['data', 'mps-backup.tar.gz']); // no partial file left beside it
    expect(fs.existsSync(path.join(dataDir, 'mps.lock'))).toBe(false);

    const again = await runCli(['backup', '--to', backupFile], { DATA_DIR: dataDir });
    expect(again.exitCode).toBe(1);
    expect(linesOf(again.stderr)).toEqual([`mps: ${backupFile} already exists: back up to a new file`]);
    const nowhere = path.join(root, 'no-such-folder', 'backup.tar.gz');
    const unwritable = await runCli(['backup', '--to', nowhere], { DATA_DIR: dataDir });
    expect(unwritable.exitCode).toBe(1);
    expect(linesOf(unwritable.stderr)).toEqual([`mps: the folder of ${nowhere} does not exist`]);

  });

  it('restore into a new DATA_DIR gives a database whose ledger check is clean, with the same entries, balances and API keys', async () => {
    const restored = path.join(root, 'restored');
    const result = await runCli(['restore', '--from', backupFile], { DATA_DIR: restored });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.json).toEqual({ data_dir: restored, from: backupFile, migrations: loadMigrations().length });
    expect(fs.readdirSync(restored)).not.toContain('mps.lock');
    expect(fs.readdirSync(restored)).not.toContain('.mps-restoring');

    const check = await runCli(['ledger', 'check'], { DATA_DIR: restored });
    expect(check.stderr).toBe('');
    expect(check.exitCode).toBe(0);
    expect(check.json).toEqual({ ...originalCheck, ok: true, violations: [], problems: [] });
    expect(check.json.entries_checked).toBeGreaterThan(0);

    const { service, db } = await serviceOn(restored);
    try {
      for (const [index, shop] of shops.entries()) {
        const balance = await service.request('GET', '/api/v2/balance', { apiKey: shop.apiKey });
        expect(balance.status).toBe(200);
        expect(balance.body).toEqual(balances[index]);
      }
    } finally {
      await service.close();
      await db.close();
    }
  });

  it('restore refuses a DATA_DIR another process holds, and a non-empty DATA_DIR, touching neither', async () => {
    const held = path.join(root, 'held');
    const release = acquireDataDirLock(held, 'service'); // this process, as the service would
    try {
      const result = await runCli(['restore', '--from', backupFile], { DATA_DIR: held });
      expect(result.exitCode).toBe(1);
      expect(result.stdout).toBe('');
      expect(linesOf(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^mps: The embedded database in ${held} is in use by process ${process.pid} `))]);
      expect(fs.readdirSync(held)).toEqual(['mps.lock']);
    } finally {
      release();
    }

    const before = fs.readdirSync(dataDir).sort();
    const result = await runCli(['restore', '--from', backupFile], { DATA_DIR: dataDir });
    expect(result.exitCode).toBe(1);
    expect(linesOf(result.stderr)).toEqual([expect.stringMatching(new RegExp(`^mps: ${dataDir} is not empty \\(\\d+ entries, such as .+\\): restore into a new or empty DATA_DIR$`))]);
    expect(fs.readdirSync(dataDir).sort()).toEqual(before);
  });

  it('a garbage, truncated, missing or non-database file is refused with a clear line and nothing written', async () => {
    const garbage = path.join(root, 'garbage.tar.gz');
    fs.writeFileSync(garbage, Buffer.from('this is not a backup\n'.repeat(200)));
    const truncated = path.join(root, 'truncated.tar.gz');
    fs.writeFileSync(truncated, fs.readFileSync(backupFile).subarray(0, 100_000));
    // A sound tar archive (made by the system's tar) that holds no database: PGlite fails to open it.
    const notDatabase = path.join(root, 'not-a-database.tar');
    execFileSync('tar', ['-cf', notDatabase, '--format=ustar', '-C', root, 'garbage.tar.gz']);
    const target = path.join(root, 'never');
    const cases: Array<[string, RegExp]> = [
      [garbage, /is not a backup made by mps backup \(not a tar archive of a data directory\); nothing was restored$/],
      [notDatabase, /not-a-database\.tar did not open as a database of this service \(.+\); nothing was restored$/],
      [truncated, /is not a backup made by mps backup: its gzip data is damaged \(unexpected end of file\); nothing was restored$/],
      [path.join(root, 'missing.tar.gz'), /^mps: cannot read .*missing\.tar\.gz: ENOENT$/],
    ];
    for (const [file, message] of cases) {
      const result = await runCli(['restore', '--from', file], { DATA_DIR: target });
      expect(result.exitCode, file).toBe(1);
      expect(result.stdout).toBe('');
      expect(linesOf(result.stderr)).toEqual([expect.stringMatching(message)]);
      expect(fs.existsSync(target), file).toBe(false);
    }
    // An empty DATA_DIR made by the operator stays (empty) after a refused restore.
    const empty = path.join(root, 'empty');
    fs.mkdirSync(empty);
    const result = await runCli(['restore', '--from', garbage], { DATA_DIR: empty });
    expect(result.exitCode).toBe(1);
    expect(fs.readdirSync(empty)).toEqual([]);
  });

  it('with DATABASE_URL, backup and restore say to use pg_dump or pg_basebackup, in one line, without connecting', async () => {
    for (const args of [['backup', '--to', path.join(root, 'pg.tar.gz')], ['restore', '--from', backupFile]]) {
      const result = await runCli(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      expect(result.exitCode).toBe(1);
      expect(linesOf(result.stderr)).toEqual([expect.stringMatching(/^mps: (backup|restore) is for the embedded database \(DATA_DIR\); on PostgreSQL \(DATABASE_URL\) use pg_dump\/pg_restore or pg_basebackup .*\(docs\/backups\.md\)$/)]);
    }
    expect(fs.existsSync(path.join(root, 'pg.tar.gz'))).toBe(false);
  });
});
