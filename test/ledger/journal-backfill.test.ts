// Migration 007 journals a database written before the journal existed (docs/journal.md#backfill): after
// it, the ledger check passes, every movement has its entries dated when they happened, and a transfer
// that came back has its return on the day it failed, not on the day it was made. Migration 011 then
// counts the old movements per day of their date, in place of the old service's counters.
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import type { Database } from '../../src/db/database.ts';
import * as ledger from '../../src/ledger/service.ts';
import { databaseKinds, openEmptyDatabase } from '../helpers/databases.ts';

const BEFORE_JOURNAL = loadMigrations().filter((migration) => migration.version < 7);

const DAY1 = '2026-11-02T15:00:00Z';
const DAY2 = '2026-11-03T15:00:00Z';
const DAY3 = '2026-11-04T15:00:00Z';

/** The rows a wave-1 service would have written: movements edited in place, counters and balances that agree with them. */
async function writeOldHistory(db: Database): Promise<number> {
  const { rows } = await db.query<{ business_code: number }>("insert into merchants (name, ach_enabled) values ('Old Shop', true) returning business_code");
  const merchant = rows[0]!.business_code;
  await db.query('insert into balances (business_code, available_centavos, pending_out_centavos) values ($1::bigint, 110000, 10000)', [merchant]);
  const movement = async (type: string, amount: number, status: string, at: string) => (await db.query<{ id: number }>(
    `insert into movements (business_code, type, amount_centavos, status, reference, snapshot, created_at, updated_at)
     values ($1::bigint, $2::text, $3::bigint, $4::text, null, '{}'::jsonb, $5::timestamptz, $5::timestamptz) returning id`,
    [merchant, type, amount, status, at])).rows[0]!.id;
  const transfer = async (amount: number, status: string, createdAt: string, updatedAt: string) => {
    const movementId = await movement('transfer', -amount, status, createdAt);
    await db.query(
      `insert into transfers (business_code, movement_id, status, amount_centavos, bank_code, account_number, account_titular,
                              failure_code, created_at, updated_at)
       values ($1::bigint, $2::bigint, $3::text, $4::bigint, 1014, '10000123455678', 'Juan Perez',
               case when $3::text = 'FAILED' then 'ACCOUNT_CLOSED' end, $5::timestamptz, $6::timestamptz)`,
      [merchant, movementId, status, amount, createdAt, updatedAt]);
  };
  await movement('payment', 100_000, 'COMPLETED', DAY1);
  await transfer(30_000, 'COMPLETED', DAY1, DAY2);
  await movement('payment', 50_000, 'COMPLETED', DAY2);
  await transfer(20_000, 'FAILED', DAY2, DAY3);
  await transfer(5_000, 'CANCELED', DAY2, DAY2);
  await transfer(10_000, 'PENDING', DAY3, DAY3);
  await db.query(`insert into movement_counters (business_code, type, movement_count) values ($1::bigint, 'payment', 2), ($1::bigint, 'transfer', 4)`, [merchant]);
  // The platform collected one activation fee.
  await db.query(`insert into movements (business_code, type, amount_centavos, status, snapshot, created_at, updated_at)
                  values (1000, 'payment', 1000, 'COMPLETED', '{}'::jsonb, $1::timestamptz, $1::timestamptz)`, [DAY1]);
  await db.query('update balances set available_centavos = 1000 where business_code = 1000');
  return merchant;
}

describe.each(databaseKinds())('the journal backfill on %s', (kind) => {
  it('journals every old movement so the books close, each entry on the day it happened', async () => {
    const database = await openEmptyDatabase(kind);
    try {
      await migrate(database.db, BEFORE_JOURNAL);
      const merchant = await writeOldHistory(database.db);
      await migrate(database.db);

      const report = await ledger.checkLedger(database.db);
      expect(report).toMatchObject({ violations: [], problems: [] });
      expect(report.entriesChecked).toBe(6 + 3 + 1); // six openings, three closings, one fee

      const { rows: entries } = await database.db.query<{ kind: string; posted_at: Date; available: number | null }>(
        `select e.kind, e.posted_at, p.amount_centavos as available
           from journal_entries e left join journal_postings p on p.entry_id = e.id and p.account = 'available'
          where e.business_code = $1::bigint order by e.id`, [merchant]);
      expect(entries.map((e) => [e.kind, e.posted_at.toISOString(), e.available])).toEqual([
        ['payment', new Date(DAY1).toISOString(), 100_000],
        ['transfer', new Date(DAY1).toISOString(), -30_000],
        // Same instant: in movement order (the settlement belongs to the day-1 transfer).
        ['transfer_settlement', new Date(DAY2).toISOString(), null],
        ['payment', new Date(DAY2).toISOString(), 50_000],
        ['transfer', new Date(DAY2).toISOString(), -20_000],
        ['transfer', new Date(DAY2).toISOString(), -5_000],
        ['transfer_return', new Date(DAY2).toISOString(), 5_000],
        ['transfer_return', new Date(DAY3).toISOString(), 20_000],
        ['transfer', new Date(DAY3).toISOString(), -10_000],
      ]);
      // Migration 011 replaced the counters the old service kept with counts per day of each movement's date.
      const { rows: days } = await database.db.query<{ type: string; day: string; movement_count: number }>(
        `select type, to_char(day at time zone 'UTC', 'YYYY-MM-DD') as day, movement_count
           from movement_days where business_code = $1::bigint order by day, type`, [merchant]);
      expect(days.map((d) => [d.type, d.day, d.movement_count])).toEqual([
        ['payment', '2026-11-02', 1], ['transfer', '2026-11-02', 1],
        ['payment', '2026-11-03', 1], ['transfer', '2026-11-03', 2],
        ['transfer', '2026-11-04', 1],
      ]);
      const { rows: counters } = await database.db.query<{ found: boolean }>("select to_regclass('public.movement_counters') is not null as found");
      expect(counters).toEqual([{ found: false }]);
      const { rows: fee } = await database.db.query<{ kind: string }>('select kind from journal_entries where business_code = 1000');
      expect(fee).toEqual([{ kind: 'activation_fee' }]);
      // The movements keep their statuses, now read from the transfers.
      const { rows: statuses } = await database.db.query<{ status: string }>(
        'select status from movement_history where business_code = $1::bigint order by id', [merchant]);
      expect(statuses.map((s) => s.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED', 'CANCELED', 'PENDING']);
    } finally {
      await database.drop();
    }
  }, 120_000);
});
