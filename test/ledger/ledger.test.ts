// The ledger core on a real database (docs/architecture.md#money-rules, docs/api-reference.md#balance-invariant):
// credit, debit and settle inside the caller's transaction, the CHECK behind them, and checkInvariant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Transaction } from '../../src/db/database.ts';
import { databaseErrorOf } from '../../src/db/database.ts';
import * as events from '../../src/events/service.ts';
import { ApiError } from '../../src/kernel/errors.ts';
import * as ledger from '../../src/ledger/service.ts';
import { LedgerError, type MovementRow, type MovementStatus } from '../../src/ledger/service.ts';
import { createMerchant } from '../../src/merchants/service.ts';
import { createTestDatabase, databaseKinds, describeOnPostgres, type TestDatabase } from '../helpers/databases.ts';
import { toInvariantReportView } from '../../src/ledger/views.ts';
import { centavos, type Centavos } from '../../src/money.ts';

const T0 = new Date('2026-11-22T16:00:00.000Z');
const T1 = new Date('2026-11-22T16:05:00.000Z');

const PAYER = { source_bank: 'Banco Union', account_number: '******5678', account_titular: 'Ana Rojas' };
const DESTINATION = { type: 'bank_account', bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Perez' };

/** Helpers bound to one test database. */
function ledgerRoom(getDb: () => Database) {
  const db = () => getDb();
  return {
    async newMerchant(): Promise<number> {
      return db().transaction(async (tx) => (await createMerchant(tx, { name: 'Ledger Shop' }, 'sandbox', T0)).merchant.business_code);
    },
    credit(businessCode: number, amountCentavos: number, now = T0): Promise<MovementRow> {
      return db().transaction((tx) => ledger.credit(tx, { businessCode, amountCentavos: amountCentavos as Centavos, reference: null, snapshot: PAYER, now }));
    },
    debit(businessCode: number, amountCentavos: number, now = T0): Promise<MovementRow> {
      return db().transaction((tx) => ledger.debit(tx, { businessCode, amountCentavos: amountCentavos as Centavos, reference: null, snapshot: DESTINATION, now }));
    },
    settle(businessCode: number, movementId: number, status: Exclude<MovementStatus, 'PENDING'>, now = T1): Promise<MovementRow> {
      return db().transaction((tx) => ledger.settle(tx, { businessCode, movementId, status, now }));
    },
    async balance(businessCode: number): Promise<{ available: number; pendingOut: number }> {
      const row = await ledger.getBalance(db(), businessCode);
      if (!row) throw new Error(`no balance for ${businessCode}`);
      return { available: row.available_centavos, pendingOut: row.pending_out_centavos };
    },
    async movements(businessCode: number): Promise<MovementRow[]> {
      const { rows } = await db().query<MovementRow>(
        `select id, business_code, type, amount_centavos, currency, status, reference, snapshot, created_at, updated_at
           from movements where business_code = $1::bigint order by id`,
        [businessCode],
      );
      return rows;
    },
    async counters(businessCode: number): Promise<Record<string, number>> {
      const { rows } = await db().query<{ type: string; movement_count: number }>(
        'select type, movement_count from movement_counters where business_code = $1::bigint',
        [businessCode],
      );
      return Object.fromEntries(rows.map((r) => [r.type, r.movement_count]));
    },
    async eventCount(businessCode: number): Promise<number> {
      const { rows } = await db().query<{ n: number }>(
        "select count(*)::int as n from events where owner_kind = 'merchant' and owner_id = $1::bigint",
        [businessCode],
      );
      return rows[0]!.n;
    },
    checkInvariant() {
      return db().transaction((tx) => ledger.checkInvariant(tx));
    },
  };
}

/** The error a promise rejects with (fails the test when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

describe.each(databaseKinds())('ledger on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterAll(() => database.drop());
  const room = ledgerRoom(() => database.db);

  it('a credit adds to available and writes a COMPLETED payment movement with its snapshot', async () => {
    const merchant = await room.newMerchant();
    const movement = await database.db.transaction((tx) =>
      ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(10_050), reference: 'Order 7', snapshot: PAYER, now: T0 }));

    expect(movement).toEqual({
      id: expect.any(Number),
      business_code: merchant,
      type: 'payment',
      amount_centavos: 10_050,
      currency: 'BOB',
      status: 'COMPLETED',
      reference: 'Order 7',
      snapshot: PAYER,
      created_at: T0,
      updated_at: T0,
    });
    expect(await room.movements(merchant)).toEqual([movement]);
    expect(await room.balance(merchant)).toEqual({ available: 10_050, pendingOut: 0 });
  });

  it('each movement bumps its merchant\'s counter for its type', async () => {
    const merchant = await room.newMerchant();
    const other = await room.newMerchant();
    expect(await room.counters(merchant)).toEqual({});
    await room.credit(merchant, 1_000);
    await room.credit(merchant, 2_000);
    await room.debit(merchant, 500);
    await room.credit(other, 100);
    expect(await room.counters(merchant)).toEqual({ payment: 2, transfer: 1 });
    expect(await room.counters(other)).toEqual({ payment: 1 });
  });

  it('a debit moves the amount from available to pending_out and writes a PENDING transfer movement with a negative amount', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 5_000);
    const movement = await database.db.transaction((tx) =>
      ledger.debit(tx, { businessCode: merchant, amountCentavos: centavos(1_234), reference: 'Payroll', snapshot: DESTINATION, now: T1 }));

    expect(movement).toMatchObject({
      business_code: merchant,
      type: 'transfer',
      amount_centavos: -1_234,
      currency: 'BOB',
      status: 'PENDING',
      reference: 'Payroll',
      snapshot: DESTINATION,
      created_at: T1,
    });
    expect((await room.movements(merchant)).at(-1)).toEqual(movement);
    expect(await room.balance(merchant)).toEqual({ available: 3_766, pendingOut: 1_234 });
    expect(await room.counters(merchant)).toEqual({ payment: 1, transfer: 1 });
  });

  it('a debit of exactly the available amount succeeds and leaves zero', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 700);
    await room.debit(merchant, 700);
    expect(await room.balance(merchant)).toEqual({ available: 0, pendingOut: 700 });
  });

  it('a debit beyond available throws INSUFFICIENT_FUNDS and changes nothing', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 500);
    const error = await rejectionOf(room.debit(merchant, 501));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'INSUFFICIENT_FUNDS', status: 400 });
    expect(await room.balance(merchant)).toEqual({ available: 500, pendingOut: 0 });
    expect((await room.movements(merchant)).map((m) => m.type)).toEqual(['payment']);
    expect(await room.counters(merchant)).toEqual({ payment: 1 });
  });

  it('after INSUFFICIENT_FUNDS the same transaction can still commit other work', async () => {
    const merchant = await room.newMerchant();
    await database.db.transaction(async (tx) => {
      await ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(500), reference: null, snapshot: PAYER, now: T0 });
      const error = await rejectionOf(ledger.debit(tx, { businessCode: merchant, amountCentavos: centavos(600), reference: null, snapshot: DESTINATION, now: T0 }));
      expect(error).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
      await ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(100), reference: null, snapshot: PAYER, now: T0 });
      await ledger.debit(tx, { businessCode: merchant, amountCentavos: centavos(550), reference: null, snapshot: DESTINATION, now: T0 });
    });
    expect(await room.balance(merchant)).toEqual({ available: 50, pendingOut: 550 });
    expect((await room.movements(merchant)).map((m) => m.amount_centavos)).toEqual([500, 100, -550]);
    expect(await room.counters(merchant)).toEqual({ payment: 2, transfer: 1 });
  });

  // The room passes any number through as Centavos: the ledger's own guard is what is tested.
  it.each([0, -100, 10.5])('an amount of %s centavos is refused with LedgerError', async (amount) => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    expect(await rejectionOf(room.credit(merchant, amount))).toBeInstanceOf(LedgerError);
    expect(await rejectionOf(room.debit(merchant, amount))).toBeInstanceOf(LedgerError);
    expect(await room.balance(merchant)).toEqual({ available: 1_000, pendingOut: 0 });
    expect(await room.movements(merchant)).toHaveLength(1);
  });

  it('settling to IN_TRANSIT keeps the funds pending, in place', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 2_000);
    const debited = await room.debit(merchant, 800);
    const settled = await room.settle(merchant, debited.id, 'IN_TRANSIT', T1);
    expect(settled).toEqual({ ...debited, status: 'IN_TRANSIT', updated_at: T1 });
    expect(await room.balance(merchant)).toEqual({ available: 1_200, pendingOut: 800 });
    expect(await room.movements(merchant)).toHaveLength(2);
  });

  it('settling to COMPLETED releases pending_out and leaves available as it was', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 2_000);
    const debited = await room.debit(merchant, 800);
    await room.settle(merchant, debited.id, 'IN_TRANSIT');
    const completed = await room.settle(merchant, debited.id, 'COMPLETED');
    expect(completed).toMatchObject({ id: debited.id, status: 'COMPLETED', amount_centavos: -800 });
    expect(await room.balance(merchant)).toEqual({ available: 1_200, pendingOut: 0 });
    expect((await room.movements(merchant)).map((m) => [m.type, m.status, m.amount_centavos])).toEqual([
      ['payment', 'COMPLETED', 2_000],
      ['transfer', 'COMPLETED', -800],
    ]);
  });

  it.each([
    ['FAILED', 'from PENDING', false],
    ['FAILED', 'from IN_TRANSIT', true],
    ['CANCELED', 'from PENDING', false],
  ] as const)('settling to %s %s returns the funds to available, in place, without a second row', async (status, _from, viaInTransit) => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 2_000);
    const debited = await room.debit(merchant, 800);
    if (viaInTransit) await room.settle(merchant, debited.id, 'IN_TRANSIT');
    const settled = await room.settle(merchant, debited.id, status);
    expect(settled).toMatchObject({ id: debited.id, status, amount_centavos: -800 });
    expect(await room.balance(merchant)).toEqual({ available: 2_000, pendingOut: 0 });
    expect((await room.movements(merchant)).map((m) => [m.id, m.status, m.amount_centavos])).toEqual([
      [expect.any(Number), 'COMPLETED', 2_000],
      [debited.id, status, -800],
    ]);
    expect(await room.counters(merchant)).toEqual({ payment: 1, transfer: 1 });
  });

  it.each(['FAILED', 'CANCELED', 'COMPLETED'] as const)('a %s movement cannot be settled again, and its funds return exactly once', async (finalStatus) => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 2_000);
    const debited = await room.debit(merchant, 800);
    await room.settle(merchant, debited.id, finalStatus === 'COMPLETED' ? 'IN_TRANSIT' : finalStatus);
    if (finalStatus === 'COMPLETED') await room.settle(merchant, debited.id, 'COMPLETED');
    const afterFirst = await room.balance(merchant);

    for (const next of ['FAILED', 'CANCELED', 'COMPLETED', 'IN_TRANSIT'] as const) {
      const error = await rejectionOf(room.settle(merchant, debited.id, next));
      expect(error, `${finalStatus} → ${next}`).toBeInstanceOf(LedgerError);
    }
    expect(await room.balance(merchant)).toEqual(afterFirst);
    expect(afterFirst).toEqual(finalStatus === 'COMPLETED' ? { available: 1_200, pendingOut: 0 } : { available: 2_000, pendingOut: 0 });
    expect((await room.movements(merchant))[1]!.status).toBe(finalStatus);
  });

  it('a movement already IN_TRANSIT cannot be moved to IN_TRANSIT again', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    const debited = await room.debit(merchant, 300);
    await room.settle(merchant, debited.id, 'IN_TRANSIT');
    expect(await rejectionOf(room.settle(merchant, debited.id, 'IN_TRANSIT'))).toBeInstanceOf(LedgerError);
    expect(await room.balance(merchant)).toEqual({ available: 700, pendingOut: 300 });
  });

  // docs/api-reference.md#transfer-lifecycle: PENDING → IN_TRANSIT → COMPLETED; PENDING or IN_TRANSIT → FAILED; only PENDING → CANCELED
  // ("Only a PENDING transfer can be canceled"). The movement's status mirrors the transfer's (docs/api-reference.md#movements).
  it('an IN_TRANSIT movement cannot be CANCELED (only a PENDING transfer can be canceled)', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    const debited = await room.debit(merchant, 300);
    await room.settle(merchant, debited.id, 'IN_TRANSIT');
    expect(await rejectionOf(room.settle(merchant, debited.id, 'CANCELED'))).toBeInstanceOf(LedgerError);
    expect(await room.balance(merchant)).toEqual({ available: 700, pendingOut: 300 });
    expect((await room.movements(merchant))[1]!.status).toBe('IN_TRANSIT');
  });

  it('a PENDING movement cannot jump to COMPLETED without going IN_TRANSIT', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    const debited = await room.debit(merchant, 300);
    expect(await rejectionOf(room.settle(merchant, debited.id, 'COMPLETED'))).toBeInstanceOf(LedgerError);
    expect(await room.balance(merchant)).toEqual({ available: 700, pendingOut: 300 });
    expect((await room.movements(merchant))[1]!.status).toBe('PENDING');
  });

  it('a payment movement cannot be settled', async () => {
    const merchant = await room.newMerchant();
    const payment = await room.credit(merchant, 1_000);
    for (const status of ['FAILED', 'CANCELED', 'IN_TRANSIT', 'COMPLETED'] as const) {
      expect(await rejectionOf(room.settle(merchant, payment.id, status)), status).toBeInstanceOf(LedgerError);
    }
    expect(await room.balance(merchant)).toEqual({ available: 1_000, pendingOut: 0 });
  });

  it('another merchant\'s movement is not found by settle, and neither balance changes', async () => {
    const owner = await room.newMerchant();
    const stranger = await room.newMerchant();
    await room.credit(owner, 1_000);
    await room.credit(stranger, 1_000);
    const debited = await room.debit(owner, 400);
    expect(await rejectionOf(room.settle(stranger, debited.id, 'FAILED'))).toBeInstanceOf(LedgerError);
    expect(await room.balance(owner)).toEqual({ available: 600, pendingOut: 400 });
    expect(await room.balance(stranger)).toEqual({ available: 1_000, pendingOut: 0 });
    expect((await room.movements(owner))[1]!.status).toBe('PENDING');
  });

  it('the database refuses a negative available balance (CHECK balances_available_nonnegative)', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 100);
    const error = await rejectionOf(
      database.db.query('update balances set available_centavos = -1 where business_code = $1::bigint', [merchant]),
    );
    expect(databaseErrorOf(error)).toEqual({ code: '23514', constraint: 'balances_available_nonnegative' });
    expect(await room.balance(merchant)).toEqual({ available: 100, pendingOut: 0 });
  });

  it('checkInvariant finds no violation after a mix of credits, debits and every kind of settlement', async () => {
    const first = await room.newMerchant();
    const second = await room.newMerchant();
    await room.credit(first, 10_000);
    await room.credit(first, 2_550);
    await room.credit(second, 300);
    const toFail = await room.debit(first, 1_000);
    const toCancel = await room.debit(first, 2_000);
    const toComplete = await room.debit(first, 500);
    const inTransit = await room.debit(first, 50);
    const stillPending = await room.debit(second, 300);
    await room.settle(first, toFail.id, 'IN_TRANSIT');
    await room.settle(first, toFail.id, 'FAILED');
    await room.settle(first, toCancel.id, 'CANCELED');
    await room.settle(first, toComplete.id, 'IN_TRANSIT');
    await room.settle(first, toComplete.id, 'COMPLETED');
    await room.settle(first, inTransit.id, 'IN_TRANSIT');
    expect(await rejectionOf(room.debit(second, 1))).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(stillPending.status).toBe('PENDING');

    expect(await room.balance(first)).toEqual({ available: 12_000, pendingOut: 50 });
    expect(await room.balance(second)).toEqual({ available: 0, pendingOut: 300 });
    const { rows } = await database.db.query<{ n: number }>('select count(*)::int as n from balances');
    const report = await room.checkInvariant();
    expect(report).toEqual({ balancesChecked: rows[0]!.n, violations: [] });
    expect(toInvariantReportView(report)).toMatchObject({ ok: true, violations: [] });
  });

  it('checkInvariant reports a balance that no longer matches its movements', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    await room.debit(merchant, 250);
    expect((await room.checkInvariant()).violations).toEqual([]);

    await database.db.query('update balances set available_centavos = available_centavos + 1 where business_code = $1::bigint', [merchant]);
    try {
      const report = await room.checkInvariant();
      expect(report.violations).toEqual([{
        business_code: merchant,
        available_centavos: 751,
        pending_out_centavos: 250,
        expected_available_centavos: 750,
        expected_pending_out_centavos: 250,
      }]);
      expect(toInvariantReportView(report)).toMatchObject({
        ok: false,
        violations: [{ business_code: merchant, available: 7.51, expected_available: 7.5, pending_out: 2.5, expected_pending_out: 2.5 }],
      });
    } finally {
      await database.db.query('update balances set available_centavos = available_centavos - 1 where business_code = $1::bigint', [merchant]);
    }
    expect((await room.checkInvariant()).violations).toEqual([]);
  });

  it('checkInvariant reports a pending_out that no longer matches the open transfers', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    await room.debit(merchant, 250);
    await database.db.query('update balances set pending_out_centavos = 0 where business_code = $1::bigint', [merchant]);
    try {
      const { violations } = await room.checkInvariant();
      expect(violations).toEqual([expect.objectContaining({ business_code: merchant, pending_out_centavos: 0, expected_pending_out_centavos: 250 })]);
    } finally {
      await database.db.query('update balances set pending_out_centavos = 250 where business_code = $1::bigint', [merchant]);
    }
    expect((await room.checkInvariant()).violations).toEqual([]);
  });

  it('a rolled-back transaction leaves no movement, no counter change, no balance change and no event', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    const before = {
      balance: await room.balance(merchant),
      movements: await room.movements(merchant),
      counters: await room.counters(merchant),
      events: await room.eventCount(merchant),
    };
    const boom = new Error('the caller failed after the ledger work');
    const error = await rejectionOf(database.db.transaction(async (tx: Transaction) => {
      const credited = await ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(400), reference: null, snapshot: PAYER, now: T1 });
      const debited = await ledger.debit(tx, { businessCode: merchant, amountCentavos: centavos(900), reference: null, snapshot: DESTINATION, now: T1 });
      await ledger.settle(tx, { businessCode: merchant, movementId: debited.id, status: 'FAILED', now: T1 });
      await events.emit(tx, { kind: 'merchant', businessCode: merchant }, 'simple_qr.payment_received', { movement_id: credited.id }, T1);
      throw boom;
    }));
    expect(error).toBe(boom);
    expect(await room.balance(merchant)).toEqual(before.balance);
    expect(await room.movements(merchant)).toEqual(before.movements);
    expect(await room.counters(merchant)).toEqual(before.counters);
    expect(await room.eventCount(merchant)).toBe(before.events);
  });
});

describeOnPostgres('ledger under concurrency on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterAll(() => database.drop());
  const room = ledgerRoom(() => database.db);

  it('30 concurrent debits of 1.00 against 10.00 let exactly 10 through and never overdraw', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    // A second pool, so more transactions overlap than one pool's connections allow.
    const otherPool = await database.openAnother();
    const observedAvailable: number[] = [];
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) =>
      (i % 2 === 0 ? database.db : otherPool).transaction(async (tx) => {
        await ledger.debit(tx, { businessCode: merchant, amountCentavos: centavos(100), reference: `debit ${i}`, snapshot: DESTINATION, now: T0 });
        const balance = await ledger.getBalance(tx, merchant);
        observedAvailable.push(balance!.available_centavos);
        await tx.query('select pg_sleep(0.02)'); // keep the row lock a moment, so the others queue on it
      })));

    const succeeded = outcomes.filter((o) => o.status === 'fulfilled');
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(succeeded).toHaveLength(10);
    for (const failure of failed) {
      expect(failure.reason).toBeInstanceOf(ApiError);
      expect(failure.reason).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    }
    expect(Math.min(...observedAvailable)).toBeGreaterThanOrEqual(0);
    expect(observedAvailable.sort((a, b) => a - b)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
    expect(await room.balance(merchant)).toEqual({ available: 0, pendingOut: 1_000 });
    expect((await room.movements(merchant)).filter((m) => m.type === 'transfer')).toHaveLength(10);
    expect(await room.counters(merchant)).toEqual({ payment: 1, transfer: 10 });
    expect((await room.checkInvariant()).violations).toEqual([]);
  });

  it('two transactions failing the same movement at once return its funds exactly once', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    const debited = await room.debit(merchant, 600);
    const otherPool = await database.openAnother();
    const outcomes = await Promise.allSettled([database.db, otherPool].map((db) =>
      db.transaction(async (tx) => {
        const settled = await ledger.settle(tx, { businessCode: merchant, movementId: debited.id, status: 'FAILED', now: T1 });
        await tx.query('select pg_sleep(0.1)');
        return settled;
      })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(rejected?.reason).toBeInstanceOf(LedgerError);
    expect(await room.balance(merchant)).toEqual({ available: 1_000, pendingOut: 0 });
    expect((await room.checkInvariant()).violations).toEqual([]);
  });
});
