// The journal export streams (docs/api-reference.md#statements): a merchant with 100,000 entries over a
// year is exported to a slow client by a real service process whose V8 heap is capped at HEAP_LIMIT_MB
// (--max-old-space-size). Holding the export — its 100,000 rows as objects, or its CSV text — would not
// fit beside the service's own idle heap (printed by the test), and the process would die of it; a
// streaming export finishes, every line in order. Calibrated: with the export read in one batch (rows
// held at once) the same process dies "JavaScript heap out of memory". PostgreSQL only: the service runs
// as its own process.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMerchant } from '../../src/merchants/service.ts';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.ts';
import { seedHistory } from '../helpers/journal-seed.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRIES = 100_000;
/** The service's heap limit: its idle heap (about 30–45 MiB) and room for a few batches, not for the export. */
const HEAP_LIMIT_MB = 72;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    }).on('error', reject);
  });
}

describeOnPostgres('the journal export\'s memory on %s', { timeout: 180_000 }, (kind) => {
  let database: TestDatabase;
  let service: ChildProcess;
  let base: string;
  let apiKey: string;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const created = await createMerchant(database.db, { name: 'Tienda Grande' }, 'sandbox', new Date('2025-11-30T12:00:00Z'));
    apiKey = created.apiKey;
    // 100,000 payments five minutes apart: 2025-12-01 to late October 2026.
    await seedHistory(database.db, created.merchant.business_code, { count: ENTRIES, start: new Date('2025-12-01T12:00:00Z'), spacingMs: 290_000 });
    await database.db.query('analyze');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    service = spawn(process.execPath, [`--max-old-space-size=${HEAP_LIMIT_MB}`, '--import', 'tsx', 'src/main.ts'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: database.url!, PORT: String(port), RATE_LIMIT: 'off', LOG_LEVEL: 'warn', SANDBOX_SETTLEMENT: 'off' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    for (let i = 0; i < 300; i++) {
      const ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
      if (ready) return;
      await sleep(100);
    }
    throw new Error('the service did not become ready');
  });

  afterAll(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((resolve) => service.once('exit', resolve));
      service.kill('SIGTERM');
      await exited;
    }
    await database?.drop();
  });

  async function heapUsed(): Promise<number> {
    const text = await (await fetch(`${base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('nodejs_heap_size_used_bytes '));
    return Number(line!.split(' ')[1]);
  }

  it(`streams 100,000 entries to a slow reader within a ${HEAP_LIMIT_MB} MiB heap, every line in order`, async () => {
    // Settle the heap, then take the idle figure.
    for (let i = 0; i < 3; i++) await fetch(`${base}/api/v2/balance/statement?from=2025-12-01&to=2025-12-02`, { headers: { 'X-API-KEY': apiKey } });
    const idle = await heapUsed();
    let peak = idle;
    const response = await fetch(`${base}/api/v2/balance/entries.csv?from=2025-12-01&to=2026-11-23`, { headers: { 'X-API-KEY': apiKey } });
    expect(response.status).toBe(200);
    const parser = parse({ columns: true });
    let rows = 0;
    let bytes = 0;
    let lastBalance = '';
    let lastEntry = 0;
    let ordered = true;
    parser.on('data', (row: { entry_id: string; balance_after: string }) => {
      rows++;
      if (Number(row.entry_id) <= lastEntry) ordered = false;
      lastEntry = Number(row.entry_id);
      lastBalance = row.balance_after;
    });
    const parsed = new Promise((resolve, reject) => parser.on('end', resolve).on('error', reject));
    const reader = response.body!.getReader();
    for (let chunk = 0; ; chunk++) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      parser.write(value);
      // A slow client: the service must wait for it rather than read ahead; look at its heap meanwhile.
      if (chunk % 20 === 0) {
        await sleep(10);
        peak = Math.max(peak, await heapUsed());
      }
    }
    parser.end();
    await parsed;
    peak = Math.max(peak, await heapUsed());
    expect(rows).toBe(ENTRIES);
    expect(ordered).toBe(true);
    expect(lastBalance).toBe('250000.00');
    console.log(`export: ${rows} rows, ${(bytes / 1048576).toFixed(1)} MiB of CSV; heap idle ${(idle / 1048576).toFixed(1)} MiB, peak ${(peak / 1048576).toFixed(1)} MiB`);
    expect(peak).toBeLessThan(HEAP_LIMIT_MB * 1024 * 1024);
    expect(service.exitCode).toBeNull(); // alive after it
  });
});
