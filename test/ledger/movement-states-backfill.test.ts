// Migration 025 gives every payment, transfer and refund movement recorded before it its state, so the
// history reads exactly as it did when movement_history joined the capabilities' tables (docs/journal.md,
// "Movement states"): statuses, the fee's charged_on and charged_on_id, row for row. And the ledger check,
// which now proves the states, passes on the result.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import * as ledger from '../../src/ledger/service.ts';
import { FullAccountNumber } from '../../src/masking.ts';
import { createMerchant } from '../../src/merchants/service.ts';
import { centavos } from '../../src/money.ts';
import * as transferStore from '../../src/transfers/store.ts';
import { databaseKinds, openEmptyDatabase } from '../helpers/databases.ts';

const BEFORE_STATES = loadMigrations().filter((migration) => migration.version < 25);
const T0 = new Date('2026-11-22T16:00:00.000Z');
const T1 = new Date('2026-11-22T17:00:00.000Z');

describe.each(databaseKinds())('the movement states backfill on %s', (kind) => {
  it('records the state of every payment, transfer and refund, so movement_history reads row for row as before', async () => {
    const database = await openEmptyDatabase(kind);
    try {
      const db = database.db;
      await migrate(db, BEFORE_STATES);
      const merchant = (await createMerchant(db, { name: 'Old Shop' }, 'sandbox', T0)).merchant.business_code;
      await db.transaction(async (tx) => {
        const opening = (amount: number, fee: number) => ({
          businessCode: merchant, amountCentavos: centavos(amount), feeCentavos: centavos(fee), reference: null, snapshot: {}, now: T0,
        });
        // A payment with its fee, through a QR.
        const paid = await ledger.credit(tx, opening(10_000, 150));
        const qrId = randomUUID();
        await tx.query(
          `insert into simple_qrs (id, business_code, pay_token, amount_centavos, modify_amount, is_multi_use, qr_payload, qr_image, created_at, updated_at)
           values ($1::uuid, $2::bigint, 'AAAAAAAAAAAAAAAAAAAAAA', 10000, false, false, 'payload', 'image', $3::timestamptz, $3::timestamptz)`,
          [qrId, merchant, T0]);
        const { rows: [payment] } = await tx.query<{ id: number }>(
          `insert into qr_payments (qr_id, business_code, single_use, amount_centavos, source_bank, account_number, account_titular, movement_id, paid_at, fee_centavos)
           values ($1::uuid, $2::bigint, true, 10000, 'Banco Union', '10000123455678', 'Ana Rojas', $3::bigint, $4::timestamptz, 150) returning id`,
          [qrId, merchant, paid.id, T0]);
        // Three transfers with fees: one left PENDING, one IN_TRANSIT, one FAILED with its funds and fee back.
        const transfers: Array<{ id: number; movementId: number }> = [];
        for (const amount of [1_000, 2_000, 3_000]) {
          const debited = await ledger.debit(tx, opening(amount, 50));
          await transferStore.insertTransfers(tx, [{
            businessCode: merchant, movementId: debited.id, amountCentavos: centavos(amount), reference: null, bankCode: 1014,
            accountNumber: new FullAccountNumber('10000123455678'), accountTitular: 'Juan Perez', feeCentavos: centavos(50), origin: 'api', now: T0,
          }]);
          const { rows: [transfer] } = await tx.query<{ id: number }>('select id from transfers where movement_id = $1::bigint', [debited.id]);
          transfers.push({ id: transfer!.id, movementId: debited.id });
        }
        await tx.query("update transfers set status = 'IN_TRANSIT' where id = $1::bigint", [transfers[1]!.id]);
        await tx.query("update transfers set status = 'FAILED', failure_code = 'ACCOUNT_CLOSED' where id = $1::bigint", [transfers[2]!.id]);
        await ledger.close(tx, { businessCode: merchant, movementId: transfers[2]!.movementId, kind: 'transfer_return', now: T1 });
        // A refund of part of the payment, still PENDING.
        const refunded = await ledger.debitForRefund(tx, { ...opening(500, 0), snapshot: { details: { payment_id: payment!.id } } });
        await tx.query(
          `insert into refunds (id, business_code, payment_id, qr_id, movement_id, amount_centavos, status, reason, created_at, updated_at)
           values ('rf_AAAAAAAAAAAAAAAAAAAAAA', $1::bigint, $2::bigint, $3::uuid, $4::bigint, 500, 'PENDING', 'duplicate', $5::timestamptz, $5::timestamptz)`,
          [merchant, payment!.id, qrId, refunded!.id, T0]);
      });
      const history = async () => (await db.query('select * from movement_history order by id')).rows;
      const before = await history();
      expect(before.map(({ type, status, charged_on }) => [type, status, charged_on])).toEqual([
        ['payment', 'COMPLETED', null], ['fee', 'COMPLETED', 'payment'],
        ['transfer', 'PENDING', null], ['fee', 'PENDING', 'transfer'],
        ['transfer', 'IN_TRANSIT', null], ['fee', 'IN_TRANSIT', 'transfer'],
        ['transfer', 'FAILED', null], ['fee', 'FAILED', 'transfer'],
        ['refund', 'PENDING', null],
      ]);

      await migrate(db);
      expect(await history()).toEqual(before);
      const { rows: states } = await db.query<{ count: number }>('select count(*)::int as count from movement_states');
      expect(states[0]!.count).toBe(5); // the payment, three transfers and the refund; fees have none of their own
      expect(await ledger.checkLedger(db)).toMatchObject({ violations: [], problems: [] });
    } finally {
      await database.drop();
    }
  }, 120_000);
});
