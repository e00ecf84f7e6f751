// The ceiling of money writes (BENCHMARKS.md): pgbench running the least any transfer must cost the
// database — one debit (the ledger's guarded UPDATE of a balance) plus one INSERT per transaction — on
// copies of the service's tables in its own database, so the service's ledger stays consistent.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const DEBIT_INSERT_CEILING = 'pgbench debit + insert';

/** The baseline's tables: a copy of `balances` as it stands (fund the merchants first) and an empty transfers table. */
export async function createDebitInsertTables(db: { query(sql: string): Promise<unknown> }): Promise<void> {
  await db.query('create table bench_baseline_transfers (id bigint generated always as identity primary key, business_code bigint not null, amount_centavos bigint not null, created_at timestamptz not null)');
  await db.query('create table bench_baseline_balances (like balances including all)');
  await db.query('insert into bench_baseline_balances select * from balances');
}

/** The debit of ledger's debitAvailable plus one insert, for a business code from `first` to `last` at random. */
function debitInsertScript(first: number, last: number): string {
  return `\\set bc random(${first}, ${last})
BEGIN;
UPDATE bench_baseline_balances SET available_centavos = available_centavos - 100, pending_out_centavos = pending_out_centavos + 100, updated_at = now()
 WHERE business_code = :bc AND available_centavos >= 100;
INSERT INTO bench_baseline_transfers (business_code, amount_centavos, created_at) VALUES (:bc, 100, now());
END;
`;
}

export interface DebitInsertRun {
  databaseUrl: string;
  /** The merchants' business codes, from first to last (the balances debited at random). */
  first: number;
  last: number;
  clients: number;
  seconds: number;
}

/** One pgbench run of the baseline (-j 2); its transactions per second. */
export async function runDebitInsert(run: DebitInsertRun): Promise<number> {
  const script = path.join(os.tmpdir(), `mps-bench-${process.pid}-${randomBytes(3).toString('hex')}.sql`);
  fs.writeFileSync(script, debitInsertScript(run.first, run.last));
  const url = new URL(run.databaseUrl);
  try {
    const { stdout } = await promisify(execFile)('pgbench', [
      '-n', '-f', script, '-c', String(run.clients), '-j', '2', '-T', String(run.seconds),
      '-h', url.hostname, '-p', url.port || '5432', '-U', decodeURIComponent(url.username) || 'postgres', url.pathname.slice(1),
    ], { maxBuffer: 10 * 1024 * 1024 });
    const tps = Number(/tps = ([0-9.]+)/.exec(stdout)?.[1]);
    if (!Number.isFinite(tps)) throw new Error(`pgbench printed no tps:\n${stdout}`);
    return tps;
  } finally {
    fs.rmSync(script, { force: true });
  }
}
