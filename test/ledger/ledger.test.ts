// The ledger core on a real database (docs/journal.md, docs/api-reference.md#balance-invariant): credit,
// debit and close inside the caller's transaction, each as one balanced journal entry; what the database
// itself refuses; and the ledger check, which must catch each kind of corruption made on purpose.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Transaction } from '../../src/db/database.ts';
import { databaseErrorOf } from '../../src/db/database.ts';
import * as events from '../../src/events/service.ts';
import { ApiError } from '../../src/kernel/errors.ts';
import * as ledger from '../../src/ledger/service.ts';
import { LedgerError, type MovementRow } from '../../src/ledger/service.ts';
import { toLedgerReportView } from '../../src/ledger/views.ts';
import { FullAccountNumber } from '../../src/masking.ts';
import { createMerchant } from '../../src/merchants/service.ts';
import { centavos, type Centavos } from '../../src/money.ts';
import * as transferStore from '../../src/transfers/store.ts';
import { createTestDatabase, databaseKinds, describeOnPostgres, type TestDatabase } from '../helpers/databases.ts';
import { backendWaitingForLock } from '../helpers/row-locks.ts';

const T0 = new Date('2026-11-22T16:00:00.000Z');
const T1 = new Date('2026-11-22T16:05:00.000Z');

const PAYER = { details: { source_bank: 'Banco Union', account_number: '******5678', account_titular: 'Ana Rojas' } };
const DESTINATION = { destination: { type: 'bank_account', bank_code: 1014, account_number: '**********5678', account_titular: 'Juan Perez' } };

interface Posting { kind: string; account: string; amount: number; balance_after: number }

/** Helpers bound to one test database. */
function ledgerRoom(getDb: () => Database) {
  const db = () => getDb();
  /** A debit as transfers make it: the movement and the transfer row whose status it mirrors. */
  async function debitIn(tx: Transaction, businessCode: number, amountCentavos: number, now: Date, fee = 0): Promise<MovementRow> {
    const feeCentavos = fee as Centavos;
    const movement = await ledger.debit(tx, { businessCode, amountCentavos: amountCentavos as Centavos, feeCentavos, reference: null, snapshot: DESTINATION, now });
    await transferStore.insertTransfers(tx, [{
      businessCode, movementId: movement.id, amountCentavos: amountCentavos as Centavos, reference: null, bankCode: 1014,
      accountNumber: new FullAccountNumber('10000123455678'), accountTitular: 'Juan Perez', feeCentavos, origin: 'api', now,
    }]);
    return movement;
  }
  async function transferOf(tx: Transaction, movementId: number) {
    const { rows } = await tx.query<{ id: number; business_code: number }>('select id, business_code from transfers where movement_id = $1::bigint', [movementId]);
    return rows[0]!;
  }
  return {
    async newMerchant(): Promise<number> {
      return (await createMerchant(db(), { name: 'Ledger Shop' }, 'sandbox', T0)).merchant.business_code;
    },
    credit(businessCode: number, amountCentavos: number, now = T0, fee = 0): Promise<MovementRow> {
      return db().transaction((tx) => ledger.credit(tx, {
        businessCode, amountCentavos: amountCentavos as Centavos, feeCentavos: fee as Centavos, reference: null, snapshot: PAYER, now,
      }));
    },
    debit(businessCode: number, amountCentavos: number, now = T0, fee = 0): Promise<MovementRow> {
      return db().transaction((tx) => debitIn(tx, businessCode, amountCentavos, now, fee));
    },
    debitIn,
    /** The transfer of `movementId` fails (or is canceled): its status and the return entry, together. */
    returnTransfer(movementId: number, now = T1, how: 'FAILED' | 'CANCELED' = 'FAILED'): Promise<void> {
      return db().transaction(async (tx) => {
        const transfer = await transferOf(tx, movementId);
        if (how === 'FAILED') await transferStore.markTransferFailed(tx, transfer.business_code, transfer.id, { failureCode: 'ACCOUNT_CLOSED', failureMessage: null, railReference: null }, now);
        else await transferStore.cancelPendingTransfer(tx, transfer.business_code, transfer.id, now);
        await ledger.close(tx, { businessCode: transfer.business_code, movementId, kind: 'transfer_return', now });
      });
    },
    /** The transfer of `movementId` settles: IN_TRANSIT, COMPLETED and the settlement entry. */
    settleTransfer(movementId: number, now = T1): Promise<void> {
      return db().transaction(async (tx) => {
        const transfer = await transferOf(tx, movementId);
        await transferStore.markTransferInTransit(tx, transfer.business_code, transfer.id, 'rail-1', now);
        await transferStore.markTransferCompleted(tx, transfer.business_code, transfer.id, null, now);
        await ledger.close(tx, { businessCode: transfer.business_code, movementId, kind: 'transfer_settlement', now });
      });
    },
    close(businessCode: number, movementId: number, kind: ledger.Closing, now = T1): Promise<void> {
      return db().transaction((tx) => ledger.close(tx, { businessCode, movementId, kind, now }));
    },
    async balance(businessCode: number): Promise<{ available: number; pendingOut: number }> {
      const row = await ledger.getBalance(db(), businessCode);
      return { available: row.available_centavos, pendingOut: row.pending_out_centavos };
    },
    async clearing(businessCode: number): Promise<{ qr: number; ach: number }> {
      const { rows } = await db().query<{ qr: number; ach: number }>(
        'select qr_clearing_centavos as qr, ach_clearing_centavos as ach from balances where business_code = $1::bigint', [businessCode]);
      return rows[0]!;
    },
    async revenue(businessCode: number): Promise<number> {
      const { rows } = await db().query<{ revenue: number }>('select revenue_centavos as revenue from balances where business_code = $1::bigint', [businessCode]);
      return rows[0]!.revenue;
    },
    /** The merchant's statement buckets summed: what its statement counts in each column. */
    async buckets(businessCode: number): Promise<Record<string, number>> {
      const { rows } = await db().query<Record<string, number>>(
        `select sum(transfers_count)::int8 as transfers_count, sum(transfers_centavos)::int8 as transfers, sum(fees_count)::int8 as fees_count,
                sum(fees_centavos)::int8 as fees, sum(returns_count)::int8 as returns_count, sum(returns_centavos)::int8 as returns,
                sum(payments_centavos)::int8 as payments, sum(revenue_count)::int8 as revenue_count, sum(revenue_centavos)::int8 as revenue
           from ledger_buckets where business_code = $1::bigint`, [businessCode]);
      return rows[0]!;
    },
    async movements(businessCode: number): Promise<MovementRow[]> {
      const { rows } = await db().query<MovementRow>(
        `select id, business_code, type, amount_centavos, currency, status, reference, snapshot, created_at, fee_centavos, charged_on, charged_on_id
           from movement_history where business_code = $1::bigint order by id`,
        [businessCode],
      );
      return rows;
    },
    async postings(businessCode: number): Promise<Posting[]> {
      const { rows } = await db().query<Posting>(
        `select e.kind, p.account, p.amount_centavos as amount, p.balance_after_centavos as balance_after
           from journal_postings p join journal_entries e on e.id = p.entry_id
          where p.business_code = $1::bigint order by p.entry_id, p.account`,
        [businessCode],
      );
      return rows;
    },
    /** The merchant's movement counts by type: its per-day counts (movement_days) summed over the days. */
    async counters(businessCode: number): Promise<Record<string, number>> {
      const { rows } = await db().query<{ type: string; movement_count: number }>(
        'select type, sum(movement_count)::int8 as movement_count from movement_days where business_code = $1::bigint group by type',
        [businessCode],
      );
      return Object.fromEntries(rows.map((r) => [r.type, r.movement_count]));
    },
    /** The merchant's per-day counts as `type day count` lines, days as UTC dates. */
    async days(businessCode: number): Promise<string[]> {
      const { rows } = await db().query<{ line: string }>(
        `select format('%s %s %s', type, to_char(day at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI'), movement_count) as line
           from movement_days where business_code = $1::bigint order by day, type`,
        [businessCode],
      );
      return rows.map((r) => r.line);
    },
    async eventCount(businessCode: number): Promise<number> {
      const { rows } = await db().query<{ n: number }>(
        "select count(*)::int as n from events where owner_kind = 'merchant' and owner_id = $1::bigint",
        [businessCode],
      );
      return rows[0]!.n;
    },
    check() {
      return ledger.checkLedger(db());
    },
    /** Runs `sql` with triggers off (session_replication_role = replica): how corruption gets past the guards. */
    async corrupt(sql: string, params: unknown[] = []): Promise<void> {
      await db().transaction(async (tx) => {
        await tx.query('set local session_replication_role = replica');
        await tx.query(sql, params);
      });
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

  it('a credit adds to available, writes a COMPLETED payment movement and a balanced payment entry', async () => {
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
      fee_centavos: 0,
      charged_on: null,
      charged_on_id: null,
    });
    expect(await room.movements(merchant)).toEqual([movement]);
    expect(await room.balance(merchant)).toEqual({ available: 10_050, pendingOut: 0 });
    expect(await room.postings(merchant)).toEqual([
      { kind: 'payment', account: 'available', amount: 10_050, balance_after: 10_050 },
      { kind: 'payment', account: 'qr_clearing', amount: -10_050, balance_after: -10_050 },
    ]);
  });

  it('every kind of change posts the entry its shape says, with each account\'s balance after it', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 5_000);
    const toFail = await room.debit(merchant, 1_234);
    const toSettle = await room.debit(merchant, 1_000);
    await room.returnTransfer(toFail.id);
    await room.settleTransfer(toSettle.id);

    expect(await room.postings(merchant)).toEqual([
      { kind: 'payment', account: 'available', amount: 5_000, balance_after: 5_000 },
      { kind: 'payment', account: 'qr_clearing', amount: -5_000, balance_after: -5_000 },
      { kind: 'transfer', account: 'available', amount: -1_234, balance_after: 3_766 },
      { kind: 'transfer', account: 'pending_out', amount: 1_234, balance_after: 1_234 },
      { kind: 'transfer', account: 'available', amount: -1_000, balance_after: 2_766 },
      { kind: 'transfer', account: 'pending_out', amount: 1_000, balance_after: 2_234 },
      { kind: 'transfer_return', account: 'available', amount: 1_234, balance_after: 4_000 },
      { kind: 'transfer_return', account: 'pending_out', amount: -1_234, balance_after: 1_000 },
      { kind: 'transfer_settlement', account: 'ach_clearing', amount: 1_000, balance_after: 1_000 },
      { kind: 'transfer_settlement', account: 'pending_out', amount: -1_000, balance_after: 0 },
    ]);
    expect(await room.balance(merchant)).toEqual({ available: 4_000, pendingOut: 0 });
    expect(await room.clearing(merchant)).toEqual({ qr: -5_000, ach: 1_000 });
    // Movements never change: the transfers' statuses come from the transfers.
    expect((await room.movements(merchant)).map((m) => [m.type, m.status, m.amount_centavos])).toEqual([
      ['payment', 'COMPLETED', 5_000],
      ['transfer', 'FAILED', -1_234],
      ['transfer', 'COMPLETED', -1_000],
    ]);
    expect(await room.counters(merchant)).toEqual({ payment: 1, transfer: 2 });
  });

  describe('fees (docs/fees.md)', () => {
    it('a payment\'s fee is its own COMPLETED movement and entry, from available to revenue, in the payment\'s statement', async () => {
      const merchant = await room.newMerchant();
      const payment = await room.credit(merchant, 10_000, T0, 180);
      expect(payment).toMatchObject({ type: 'payment', amount_centavos: 10_000, fee_centavos: 180 });
      expect(await room.postings(merchant)).toEqual([
        { kind: 'payment', account: 'available', amount: 10_000, balance_after: 10_000 },
        { kind: 'payment', account: 'qr_clearing', amount: -10_000, balance_after: -10_000 },
        { kind: 'fee', account: 'available', amount: -180, balance_after: 9_820 },
        { kind: 'fee', account: 'revenue', amount: 180, balance_after: 180 },
      ]);
      const movements = await room.movements(merchant);
      expect(movements.map((m) => [m.type, m.status, m.amount_centavos, m.charged_on])).toEqual([
        ['payment', 'COMPLETED', 10_000, null],
        ['fee', 'COMPLETED', -180, 'payment'],
      ]);
      expect(await room.balance(merchant)).toEqual({ available: 9_820, pendingOut: 0 });
      expect(await room.revenue(merchant)).toBe(180);
      expect(await room.counters(merchant)).toEqual({ payment: 1, fee: 1 });
      expect(await room.buckets(merchant)).toMatchObject({ payments: 10_000, fees_count: 1, fees: -180, revenue_count: 1, revenue: 180 });
      expect((await room.check()).problems).toEqual([]);
    });

    it('a transfer needs its amount and its fee: refused with both, having written nothing, when available covers only the amount', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000);
      expect(await rejectionOf(room.debit(merchant, 1_000, T0, 150))).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
      expect(await room.balance(merchant)).toEqual({ available: 1_000, pendingOut: 0 });
      expect((await room.movements(merchant)).map((m) => m.type)).toEqual(['payment']);
      expect(await room.revenue(merchant)).toBe(0);
      await room.debit(merchant, 850, T0, 150);
      expect(await room.balance(merchant)).toEqual({ available: 0, pendingOut: 850 });
      expect(await room.revenue(merchant)).toBe(150);
      expect((await room.check()).problems).toEqual([]);
    });

    it('a canceled transfer gives its fee back with its amount, in one return entry; a settled one keeps it', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 5_000);
      const canceled = await room.debit(merchant, 1_000, T0, 150);
      const settled = await room.debit(merchant, 2_000, T0, 150);
      await room.returnTransfer(canceled.id, T1, 'CANCELED');
      await room.settleTransfer(settled.id);
      const returns = (await room.postings(merchant)).filter((p) => p.kind === 'transfer_return');
      expect(returns).toEqual([
        { kind: 'transfer_return', account: 'available', amount: 1_150, balance_after: 2_850 },
        { kind: 'transfer_return', account: 'pending_out', amount: -1_000, balance_after: 2_000 },
        { kind: 'transfer_return', account: 'revenue', amount: -150, balance_after: 150 },
      ]);
      expect((await room.movements(merchant)).map((m) => [m.type, m.status, m.amount_centavos])).toEqual([
        ['payment', 'COMPLETED', 5_000],
        ['transfer', 'CANCELED', -1_000],
        ['fee', 'CANCELED', -150],
        ['transfer', 'COMPLETED', -2_000],
        ['fee', 'COMPLETED', -150],
      ]);
      expect(await room.balance(merchant)).toEqual({ available: 2_850, pendingOut: 0 });
      expect(await room.revenue(merchant)).toBe(150);
      // The contract's example: a 10.00 transfer with a 1.50 fee, canceled — transfers 10.00, fees 1.50, returns 11.50.
      expect(await room.buckets(merchant)).toMatchObject({
        transfers_count: 2, transfers: -3_000, fees_count: 2, fees: -300, returns_count: 1, returns: 1_150, revenue_count: 1, revenue: 150,
      });
      expect((await room.check()).problems).toEqual([]);
    });

  });

  it('a debit beyond available throws INSUFFICIENT_FUNDS and writes nothing: no movement, no entry', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 500);
    const error = await rejectionOf(room.debit(merchant, 501));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'INSUFFICIENT_FUNDS', status: 400 });
    expect(await room.balance(merchant)).toEqual({ available: 500, pendingOut: 0 });
    expect((await room.movements(merchant)).map((m) => m.type)).toEqual(['payment']);
    expect(await room.postings(merchant)).toHaveLength(2);
    expect(await room.counters(merchant)).toEqual({ payment: 1 });
  });

  it('a debit of exactly the available amount succeeds and leaves zero', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 700);
    await room.debit(merchant, 700);
    expect(await room.balance(merchant)).toEqual({ available: 0, pendingOut: 700 });
  });

  it('after INSUFFICIENT_FUNDS the same transaction can still commit other work', async () => {
    const merchant = await room.newMerchant();
    await database.db.transaction(async (tx) => {
      await ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(500), reference: null, snapshot: PAYER, now: T0 });
      const error = await rejectionOf(room.debitIn(tx, merchant, 600, T0));
      expect(error).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
      await ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(100), reference: null, snapshot: PAYER, now: T0 });
      await room.debitIn(tx, merchant, 550, T0);
    });
    expect(await room.balance(merchant)).toEqual({ available: 50, pendingOut: 550 });
    expect((await room.movements(merchant)).map((m) => m.amount_centavos)).toEqual([500, 100, -550]);
    expect((await room.check()).problems).toEqual([]);
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

  it('a movement is closed at most once: a second return or settlement is refused by the database', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 2_000);
    const debited = await room.debit(merchant, 800);
    await room.debit(merchant, 900); // still pending: pending_out could pay for a second return
    await room.returnTransfer(debited.id);
    for (const kind of ['transfer_return', 'transfer_settlement'] as const) {
      const error = await rejectionOf(room.close(merchant, debited.id, kind));
      expect(databaseErrorOf(error), kind).toMatchObject({ code: '23505', constraint: 'journal_entries_one_closing' });
    }
    expect(await room.balance(merchant)).toEqual({ available: 1_100, pendingOut: 900 });
  });

  it('a payment movement cannot be closed, nor another merchant\'s movement', async () => {
    const owner = await room.newMerchant();
    const stranger = await room.newMerchant();
    const payment = await room.credit(owner, 1_000);
    await room.credit(stranger, 1_000);
    const debited = await room.debit(owner, 400);
    expect(await rejectionOf(room.close(owner, payment.id, 'transfer_return'))).toBeInstanceOf(LedgerError);
    expect(await rejectionOf(room.close(owner, debited.id, 'refund_return'))).toBeInstanceOf(LedgerError);
    expect(await rejectionOf(room.close(stranger, debited.id, 'transfer_return'))).toBeInstanceOf(LedgerError);
    expect(await room.balance(owner)).toEqual({ available: 600, pendingOut: 400 });
    expect(await room.balance(stranger)).toEqual({ available: 1_000, pendingOut: 0 });
  });

  it('a transfer that fails a day later is a return entry dated that day; the day of the debit is not edited', async () => {
    const merchant = await room.newMerchant();
    const monday = new Date('2026-11-23T14:00:00.000Z');
    const wednesday = new Date('2026-11-25T15:30:00.000Z');
    await room.credit(merchant, 1_000, monday);
    const debited = await room.debit(merchant, 300, monday);
    await room.returnTransfer(debited.id, wednesday);
    const { rows } = await database.db.query<{ kind: string; posted_at: Date }>(
      'select kind, posted_at from journal_entries where business_code = $1::bigint order by id', [merchant]);
    expect(rows).toEqual([
      { kind: 'payment', posted_at: monday },
      { kind: 'transfer', posted_at: monday },
      { kind: 'transfer_return', posted_at: wednesday },
    ]);
  });

  it('counts each movement in the UTC day of its date, also when dates go backwards', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000, new Date('2026-11-23T23:59:59.999Z'));
    await room.credit(merchant, 1_000, new Date('2026-11-24T00:00:00.000Z'));
    await room.debit(merchant, 100, new Date('2026-11-24T03:59:00.000Z')); // 23:59 the day before in La Paz: still the 24th in UTC
    await room.credit(merchant, 1_000, new Date('2026-11-20T12:00:00.000Z')); // a clock days behind: the posting is not, the movement's date is
    expect(await room.days(merchant)).toEqual([
      'payment 2026-11-20T00:00 1',
      'payment 2026-11-23T00:00 1',
      'payment 2026-11-24T00:00 1',
      'transfer 2026-11-24T00:00 1',
    ]);
    expect((await room.check()).problems).toEqual([]);
  });

  it('posting times never go backwards for a merchant, even when the caller\'s clock does', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 100, T1);
    await room.credit(merchant, 100, T0); // an instance whose clock is five minutes behind
    const { rows } = await database.db.query<{ posted_at: Date }>(
      'select posted_at from journal_entries where business_code = $1::bigint order by id', [merchant]);
    expect(rows.map((r) => r.posted_at)).toEqual([T1, T1]);
  });

  it('several debits of one merchant in one statement are taken in request order while available covers each', async () => {
    const [shop, kiosk, cafe] = [await room.newMerchant(), await room.newMerchant(), await room.newMerchant()];
    await room.credit(shop, 10_000, T0);
    await room.credit(kiosk, 2_000, T0);
    await room.credit(cafe, 500, T0);
    // Interleaved as a group-commit batch delivers them. The shop can pay 60 and 40 but not the 50 between
    // them (a refusal leaves its running balance alone) nor the 10 after; the kiosk's first is too big, its
    // second fits; the cafe's two fit exactly.
    const requests: Array<[number, number, Date]> = [
      [shop, 6_000, T1], [kiosk, 3_000, T1], [shop, 5_000, T1], [cafe, 300, T1],
      [shop, 4_000, T0], [kiosk, 500, T1], [shop, 1_000, T1], [cafe, 200, T1],
    ];
    const results = await database.db.transaction(async (tx) => {
      const movements = await ledger.debitEach(tx, requests.map(([businessCode, amount, now]) => (
        { businessCode, amountCentavos: amount as Centavos, reference: `${businessCode}:${amount}`, snapshot: DESTINATION, now })));
      const taken = movements.flatMap((movement, i) => (movement ? [{ movement, request: requests[i]! }] : []));
      await transferStore.insertTransfers(tx, taken.map(({ movement, request: [businessCode, amount, now] }) => ({
        businessCode, movementId: movement.id, amountCentavos: amount as Centavos, reference: null, bankCode: 1014,
        accountNumber: new FullAccountNumber('10000123455678'), accountTitular: 'Juan Perez', feeCentavos: 0 as Centavos, origin: 'api', now,
      })));
      return movements;
    });
    expect(results.map((movement) => movement?.reference ?? null)).toEqual([
      `${shop}:6000`, null, null, `${cafe}:300`, `${shop}:4000`, `${kiosk}:500`, null, `${cafe}:200`,
    ]);
    // Movement ids follow the request order.
    const ids = results.flatMap((movement) => (movement ? [movement.id] : []));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(await room.balance(shop)).toEqual({ available: 0, pendingOut: 10_000 });
    expect(await room.balance(kiosk)).toEqual({ available: 1_500, pendingOut: 500 });
    expect(await room.balance(cafe)).toEqual({ available: 0, pendingOut: 500 });
    // Each posting carries its account's running balance, in entry order.
    expect((await room.postings(shop)).map((p) => `${p.kind} ${p.account} ${p.amount} ${p.balance_after}`)).toEqual([
      'payment available 10000 10000', 'payment qr_clearing -10000 -10000',
      'transfer available -6000 4000', 'transfer pending_out 6000 6000',
      'transfer available -4000 0', 'transfer pending_out 4000 10000',
    ]);
    // A later entry's earlier clock does not date it before the one ahead of it.
    const { rows: posted } = await database.db.query<{ posted_at: Date }>(
      "select posted_at from journal_entries where business_code = $1::bigint and kind = 'transfer' order by id", [shop]);
    expect(posted.map((r) => r.posted_at)).toEqual([T1, T1]);
    // The statement bucket counts both and closes at the last one's balance; the day counts both movements.
    const { rows: buckets } = await database.db.query<{ transfers_count: number; transfers_centavos: number; closing_centavos: number }>(
      'select transfers_count, transfers_centavos, closing_centavos from ledger_buckets where business_code = $1::bigint and transfers_count > 0',
      [shop]);
    expect(buckets).toEqual([{ transfers_count: 2, transfers_centavos: -10_000, closing_centavos: 0 }]);
    expect(await room.counters(shop)).toEqual({ payment: 1, transfer: 2 });
    expect(await room.counters(cafe)).toEqual({ payment: 1, transfer: 2 });
    expect(await room.check()).toMatchObject({ violations: [], problems: [] });
  });

  describe('what the database refuses', () => {
    it('a negative available balance (CHECK balances_available_nonnegative)', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 100);
      const error = await rejectionOf(database.db.query('update balances set available_centavos = -1 where business_code = $1::bigint', [merchant]));
      expect(databaseErrorOf(error)).toEqual({ code: '23514', constraint: 'balances_available_nonnegative' });
    });

    it.each([
      ['UPDATE journal_postings', 'update journal_postings set amount_centavos = amount_centavos + 1 where business_code = $1::bigint'],
      ['DELETE journal_postings', 'delete from journal_postings where business_code = $1::bigint'],
      ['UPDATE journal_entries', 'update journal_entries set posted_at = posted_at - interval \'1 day\' where business_code = $1::bigint'],
      ['DELETE journal_entries', 'delete from journal_entries where business_code = $1::bigint'],
      ['UPDATE movements', 'update movements set amount_centavos = amount_centavos + 1 where business_code = $1::bigint'],
      ['DELETE movements', 'delete from movements where business_code = $1::bigint'],
    ])('%s', async (_label, sql) => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 100);
      const error = await rejectionOf(database.db.query(sql, [merchant]));
      expect(databaseErrorOf(error)?.code).toBe('55000');
      expect(String((error as Error).message)).toMatch(/append-only/);
      expect(await room.postings(merchant)).toHaveLength(2);
    });

    it('an entry whose postings never come; postings added to an older entry; a posting for another merchant\'s entry', async () => {
      const merchant = await room.newMerchant();
      const other = await room.newMerchant();
      const payment = await room.credit(merchant, 100);
      const alone = await rejectionOf(database.db.transaction((tx) => tx.query(
        `insert into journal_entries (business_code, kind, movement_id, posted_at) values ($1::bigint, 'refund_return', $2::bigint, date_trunc('milliseconds', now()))`,
        [merchant, payment.id])));
      expect(databaseErrorOf(alone)?.code).toBe('23514');
      expect(String((alone as Error).message)).toMatch(/without balanced postings/);
      const { rows } = await database.db.query<{ id: number }>('select id from journal_entries where movement_id = $1::bigint', [payment.id]);
      const foreign = await rejectionOf(database.db.query(
        `insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
         values ($1::bigint, $2::bigint, 'pending_out', 1, 1, date_trunc('milliseconds', now())), ($1::bigint, $2::bigint, 'ach_clearing', -1, -1, date_trunc('milliseconds', now()))`,
        [rows[0]!.id, other]));
      expect(databaseErrorOf(foreign)).toMatchObject({ code: '23503', constraint: 'journal_postings_entry_fkey' });
      const appended = await rejectionOf(database.db.query(
        `insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
         values ($1::bigint, $2::bigint, 'pending_out', 1, 1, date_trunc('milliseconds', now())), ($1::bigint, $2::bigint, 'ach_clearing', -1, -1, date_trunc('milliseconds', now()))`,
        [rows[0]!.id, merchant]));
      expect(databaseErrorOf(appended)?.code).toBe('23514');
      expect(String((appended as Error).message)).toMatch(/had postings already/);
      expect(await room.postings(merchant)).toHaveLength(2);
    });

    it('a posting time finer than a millisecond', async () => {
      const merchant = await room.newMerchant();
      const payment = await room.credit(merchant, 100);
      const error = await rejectionOf(database.db.query(
        `insert into journal_entries (business_code, kind, movement_id, posted_at) values ($1::bigint, 'refund_return', $2::bigint, timestamptz '2026-11-22 16:00:00.000500+00')`,
        [merchant, payment.id]));
      expect(databaseErrorOf(error)).toMatchObject({ code: '23514', constraint: 'journal_entries_posted_at_milliseconds' });
    });

    it.each(['journal_postings', 'journal_entries'])('truncate %s', async (table) => {
      const error = await rejectionOf(database.db.query(`truncate ${table} cascade`));
      expect(databaseErrorOf(error)?.code).toBe('55000');
    });

    it('an unbalanced entry, or one with a single posting', async () => {
      const merchant = await room.newMerchant();
      const payment = await room.credit(merchant, 100);
      // The entry and its postings in one statement, as postEntries writes them.
      const attempt = (legs: Array<[string, number]>) => database.db.query(
        `with entry as (
           insert into journal_entries (business_code, kind, movement_id, posted_at)
           values ($1::bigint, 'refund_return', $2::bigint, date_trunc('milliseconds', now())) returning id
         )
         insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
         select entry.id, $1::bigint, account, amount, 0, date_trunc('milliseconds', now())
           from entry, unnest($3::text[], $4::bigint[]) as l(account, amount)`,
        [merchant, payment.id, legs.map((l) => l[0]), legs.map((l) => l[1])]);
      for (const legs of [[['available', 100], ['qr_clearing', -99]], [['available', 100]]] as Array<Array<[string, number]>>) {
        const error = await rejectionOf(attempt(legs));
        expect(databaseErrorOf(error)?.code).toBe('23514');
        expect(String((error as Error).message)).toMatch(/not balanced|without balanced postings/);
      }
      expect(await room.postings(merchant)).toHaveLength(2);
    });
  });

  describe('the ledger check', () => {
    it('passes after a mix of every kind of change, and counts what it checked', async () => {
      const first = await room.newMerchant();
      const second = await room.newMerchant();
      await room.credit(first, 10_000);
      await room.credit(second, 300);
      const toFail = await room.debit(first, 1_000);
      const toCancel = await room.debit(first, 2_000);
      const toSettle = await room.debit(first, 500);
      await room.debit(second, 300);
      await room.returnTransfer(toFail.id);
      await room.returnTransfer(toCancel.id, T1, 'CANCELED');
      await room.settleTransfer(toSettle.id);

      const report = await room.check();
      const { rows } = await database.db.query<{ balances: number; entries: number }>(
        'select (select count(*) from balances)::int8 as balances, (select count(*) from journal_entries)::int8 as entries');
      expect(report).toEqual({ balancesChecked: rows[0]!.balances, entriesChecked: rows[0]!.entries, violations: [], problems: [] });
      expect(toLedgerReportView(report)).toMatchObject({ ok: true, violations: [], problems: [] });
    });

    it('catches a fee that did not come back with its transfer', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 5_000);
      const debited = await room.debit(merchant, 1_000, T0, 150);
      await room.returnTransfer(debited.id);
      // The return entry gives back only the amount: the family of the transfer and its fee no longer matches.
      const sql = `update journal_postings set amount_centavos = amount_centavos + $2::bigint
                    where business_code = $1::bigint and account = 'available'
                      and entry_id = (select max(id) from journal_entries where business_code = $1::bigint and kind = 'transfer_return')`;
      await room.corrupt(sql, [merchant, -150]);
      try {
        const { problems } = await room.check();
        expect(problems).toContainEqual(expect.objectContaining({ check: 'movement_journal', business_code: merchant }));
      } finally {
        await room.corrupt(sql, [merchant, 150]);
      }
      expect((await room.check()).problems).toEqual([]);
    });

    // Each corruption is made with triggers off, checked, and undone, so the next test starts clean.
    it('catches an unbalanced entry', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000);
      const sql = `update journal_postings set amount_centavos = amount_centavos + $2::bigint
                    where business_code = $1::bigint and account = 'qr_clearing'`;
      await room.corrupt(sql, [merchant, 1]);
      try {
        const { problems } = await room.check();
        expect(problems).toContainEqual(expect.objectContaining({ check: 'entry_balanced', business_code: merchant }));
      } finally {
        await room.corrupt(sql, [merchant, -1]);
      }
      expect((await room.check()).problems).toEqual([]);
    });

    it('catches a balance head that is not the sum of its postings, and the broken invariant', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000);
      await room.debit(merchant, 250);
      await database.db.query('update balances set available_centavos = available_centavos + 1 where business_code = $1::bigint', [merchant]);
      try {
        const report = await room.check();
        expect(report.violations).toEqual([{
          business_code: merchant, available_centavos: 751, pending_out_centavos: 250, expected_available_centavos: 750, expected_pending_out_centavos: 250,
        }]);
        expect(report.problems).toContainEqual({ check: 'account_balance', business_code: merchant, detail: expect.stringMatching(/available is 751/) });
        expect(toLedgerReportView(report)).toMatchObject({
          ok: false,
          violations: [{ business_code: merchant, available: 7.51, expected_available: 7.5, pending_out: 2.5, expected_pending_out: 2.5 }],
        });
      } finally {
        await database.db.query('update balances set available_centavos = available_centavos - 1 where business_code = $1::bigint', [merchant]);
      }
      expect(await room.check()).toMatchObject({ violations: [], problems: [] });
    });

    it('catches a posting whose balance_after is not its running balance', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000);
      await room.credit(merchant, 500);
      const sql = `update journal_postings set balance_after_centavos = balance_after_centavos + $2::bigint
                    where business_code = $1::bigint and account = 'available' and balance_after_centavos = $3::bigint`;
      await room.corrupt(sql, [merchant, 7, 1_000]);
      try {
        expect((await room.check()).problems).toEqual([expect.objectContaining({ check: 'running_balance', business_code: merchant })]);
      } finally {
        await room.corrupt(sql, [merchant, -7, 1_007]);
      }
      expect((await room.check()).problems).toEqual([]);
    });

    it('catches a movement the journal does not agree with: an edited amount, a status changed without its entry', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000);
      const debited = await room.debit(merchant, 300);
      const amount = 'update movements set amount_centavos = amount_centavos + $2::bigint where id = $1::bigint';
      await room.corrupt(amount, [debited.id, -1]);
      try {
        const report = await room.check();
        expect(report.problems).toContainEqual(expect.objectContaining({ check: 'movement_journal', business_code: merchant }));
        expect(report.violations).toContainEqual(expect.objectContaining({ business_code: merchant }));
      } finally {
        await room.corrupt(amount, [debited.id, 1]);
      }
      // A transfer marked FAILED whose funds never came back: the movement says 0 on available, the journal -300.
      await database.db.query("update transfers set status = 'FAILED', failure_code = 'ACCOUNT_CLOSED' where movement_id = $1::bigint", [debited.id]);
      try {
        expect((await room.check()).problems).toContainEqual(expect.objectContaining({
          check: 'movement_journal', business_code: merchant, detail: expect.stringMatching(/transfer movement \d+ \(FAILED\)/),
        }));
      } finally {
        await database.db.query("update transfers set status = 'PENDING', failure_code = null where movement_id = $1::bigint", [debited.id]);
      }
      expect(await room.check()).toMatchObject({ violations: [], problems: [] });
    });

    it('catches a statement bucket that does not match its postings', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000);
      await database.db.query('update ledger_buckets set payments_count = payments_count + 1 where business_code = $1::bigint', [merchant]);
      try {
        expect((await room.check()).problems).toEqual([expect.objectContaining({ check: 'statement_bucket', business_code: merchant })]);
      } finally {
        await database.db.query('update ledger_buckets set payments_count = payments_count - 1 where business_code = $1::bigint', [merchant]);
      }
      expect((await room.check()).problems).toEqual([]);
    });

    it('catches a movement state that does not fit its movement: a transfer without one, a fee with its own, a payment\'s of the wrong kind, one transfer recorded twice', async () => {
      const merchant = await room.newMerchant();
      const paid = await room.credit(merchant, 1_000, T0, 30);
      const debited = await room.debit(merchant, 300);
      const other = await room.debit(merchant, 200);
      const { rows: [fee] } = await database.db.query<{ id: number }>('select id from movements where fee_of = $1::bigint', [paid.id]);
      const transferOfMovement = async (movementId: number) => (await database.db.query<{ id: number }>(
        'select transfer_id as id from movement_states where movement_id = $1::bigint', [movementId])).rows[0]!.id;
      const transfer = { id: await transferOfMovement(debited.id) };
      const otherTransfer = await transferOfMovement(other.id);
      const problemsOf = async () => (await room.check()).problems.filter((problem) => problem.check === 'movement_states');
      const cases: Array<{ corrupt: string; undo: string; params: unknown[]; undoParams: unknown[]; detail: string }> = [
        {
          corrupt: 'delete from movement_states where movement_id = $1::bigint',
          undo: "insert into movement_states (movement_id, status, transfer_id) values ($1::bigint, 'PENDING', $2::bigint)",
          params: [debited.id],
          undoParams: [debited.id, transfer.id],
          detail: `transfer movement ${debited.id} has no state`,
        },
        {
          corrupt: "insert into movement_states (movement_id, status, payment_id) values ($1::bigint, 'COMPLETED', 1)",
          undo: 'delete from movement_states where movement_id = $1::bigint',
          params: [fee!.id],
          undoParams: [fee!.id],
          detail: `fee movement ${fee!.id} is a fee with a state of its own`,
        },
        {
          corrupt: "insert into movement_states (movement_id, status, transfer_id) values ($1::bigint, 'COMPLETED', $2::bigint)",
          undo: 'delete from movement_states where movement_id = $1::bigint',
          params: [paid.id, transfer.id],
          undoParams: [paid.id],
          detail: `payment movement ${paid.id} has the state of a transfer`,
        },
        {
          corrupt: 'update movement_states set transfer_id = $2::bigint where movement_id = $1::bigint',
          undo: 'update movement_states set transfer_id = $2::bigint where movement_id = $1::bigint',
          params: [other.id, transfer.id],
          undoParams: [other.id, otherTransfer],
          detail: `transfer movement ${other.id} records transfer ${transfer.id}, as another movement does`,
        },
      ];
      for (const { corrupt, undo, params, undoParams, detail } of cases) {
        await room.corrupt(corrupt, params);
        try {
          expect(await problemsOf()).toContainEqual({ check: 'movement_states', business_code: merchant, detail });
        } finally {
          await room.corrupt(undo, undoParams);
        }
      }
      expect((await room.check()).problems).toEqual([]);
    });

    it('keeps a transfer\'s movement state with its transfer\'s status, a bulk UPDATE of many transfers in one statement too', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000);
      const debits = [await room.debit(merchant, 100), await room.debit(merchant, 200)];
      await database.db.query("update transfers set status = 'IN_TRANSIT' where business_code = $1::bigint", [merchant]);
      const statuses = async () => (await room.movements(merchant)).filter(({ type }) => type === 'transfer').map(({ status }) => status);
      expect(await statuses()).toEqual(['IN_TRANSIT', 'IN_TRANSIT']);
      await room.returnTransfer(debits[0]!.id);
      expect(await statuses()).toEqual(['FAILED', 'IN_TRANSIT']);
      // an update that leaves the status alone leaves the state alone
      await database.db.query("update transfers set rail_reference = 'X-1' where business_code = $1::bigint", [merchant]);
      expect(await statuses()).toEqual(['FAILED', 'IN_TRANSIT']);
      await database.db.query("update transfers set status = 'PENDING' where business_code = $1::bigint and status = 'IN_TRANSIT'", [merchant]);
      expect((await room.check()).problems).toEqual([]);
    });

    it('catches a per-day movement count that does not match the movements of its day', async () => {
      const merchant = await room.newMerchant();
      await room.credit(merchant, 1_000, new Date('2026-11-23T10:00:00.000Z'));
      await room.credit(merchant, 1_000, new Date('2026-11-24T10:00:00.000Z'));
      const problemsOf = async () => (await room.check()).problems;
      // A day counted once too often.
      await database.db.query(
        "update movement_days set movement_count = movement_count + 1 where business_code = $1::bigint and day = '2026-11-24T00:00:00Z'", [merchant]);
      try {
        expect(await problemsOf()).toEqual([{
          check: 'movement_days', business_code: merchant, detail: 'payment movements on 2026-11-24: movement_days says 2, the movements are 1',
        }]);
      } finally {
        await database.db.query(
          "update movement_days set movement_count = movement_count - 1 where business_code = $1::bigint and day = '2026-11-24T00:00:00Z'", [merchant]);
      }
      // A day's movements without their row, and a row for a day without movements.
      await database.db.query(
        "update movement_days set day = '2026-11-25T00:00:00Z' where business_code = $1::bigint and day = '2026-11-23T00:00:00Z'", [merchant]);
      try {
        expect(await problemsOf()).toEqual([
          { check: 'movement_days', business_code: merchant, detail: 'payment movements on 2026-11-23: movement_days says 0, the movements are 1' },
          { check: 'movement_days', business_code: merchant, detail: 'payment movements on 2026-11-25: movement_days says 1, the movements are 0' },
        ]);
      } finally {
        await database.db.query(
          "update movement_days set day = '2026-11-23T00:00:00Z' where business_code = $1::bigint and day = '2026-11-25T00:00:00Z'", [merchant]);
      }
      expect((await room.check()).problems).toEqual([]);
    });
  });

  it('a rolled-back transaction leaves no movement, entry, counter, balance or event', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    const before = {
      balance: await room.balance(merchant),
      movements: await room.movements(merchant),
      postings: await room.postings(merchant),
      counters: await room.counters(merchant),
      events: await room.eventCount(merchant),
    };
    const boom = new Error('the caller failed after the ledger work');
    const error = await rejectionOf(database.db.transaction(async (tx: Transaction) => {
      const credited = await ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(400), reference: null, snapshot: PAYER, now: T1 });
      const debited = await room.debitIn(tx, merchant, 900, T1);
      await ledger.close(tx, { businessCode: merchant, movementId: debited.id, kind: 'transfer_return', now: T1 });
      await events.emit(tx, { kind: 'merchant', businessCode: merchant }, 'simple_qr.payment_received', { movement_id: credited.id }, T1);
      throw boom;
    }));
    expect(error).toBe(boom);
    expect(await room.balance(merchant)).toEqual(before.balance);
    expect(await room.movements(merchant)).toEqual(before.movements);
    expect(await room.postings(merchant)).toEqual(before.postings);
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

  it('30 concurrent debits of 1.00 against 10.00 let exactly 10 through, never overdraw, and the books close', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    // A second pool, so more transactions overlap than one pool's connections allow.
    const otherPool = await database.openAnother();
    const observedAvailable: number[] = [];
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) =>
      (i % 2 === 0 ? database.db : otherPool).transaction(async (tx) => {
        await room.debitIn(tx, merchant, 100, T0);
        const balance = await ledger.getBalance(tx, merchant);
        observedAvailable.push(balance.available_centavos);
        await tx.query('select pg_sleep(0.02)'); // keep the row lock a moment, so the others queue on it
      })));

    const succeeded = outcomes.filter((o) => o.status === 'fulfilled');
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(succeeded).toHaveLength(10);
    for (const failure of failed) {
      expect(failure.reason).toBeInstanceOf(ApiError);
      expect(failure.reason).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    }
    expect(observedAvailable.sort((a, b) => a - b)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
    expect(await room.balance(merchant)).toEqual({ available: 0, pendingOut: 1_000 });
    // Running balances in entry order: 1000 then 900, 800, … 0 — the lock orders the entries.
    expect((await room.postings(merchant)).filter((p) => p.account === 'available').map((p) => p.balance_after))
      .toEqual([1_000, 900, 800, 700, 600, 500, 400, 300, 200, 100, 0]);
    expect(await room.counters(merchant)).toEqual({ payment: 1, transfer: 10 });
    await otherPool.close();
    expect(await room.check()).toMatchObject({ violations: [], problems: [] });
  });

  it('debits that waited behind a credit start from the credited balance, not from the balance when their statement began', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 1_000);
    const otherPool = await database.openAnother();
    const observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
    try {
      // A payment of 50.00 holds the balance, uncommitted, while a batch of two debits (30.00 and 0.01)
      // waits for it: neither fits the 10.00 of the batch's snapshot, both fit once the payment commits.
      let commitPayment!: () => void;
      const paymentHeld = new Promise<void>((resolve) => { commitPayment = resolve; });
      const payment = database.db.transaction(async (tx) => {
        await ledger.credit(tx, { businessCode: merchant, amountCentavos: centavos(5_000), reference: null, snapshot: PAYER, now: T0 });
        await paymentHeld;
      });
      await waitUntil(async () => (await room.balance(merchant)).available === 1_000 && await creditIsHeld(observer, merchant));
      const batch = otherPool.transaction((tx) => ledger.debitEach(tx, [3_000, 1].map((amount) => (
        { businessCode: merchant, amountCentavos: amount as Centavos, reference: `waited ${amount}`, snapshot: DESTINATION, now: T1 }))));
      await backendWaitingForLock(observer);
      commitPayment();
      await payment;
      const debited = await batch;
      expect(debited.map((movement) => movement?.reference ?? null)).toEqual(['waited 3000', 'waited 1']);
      expect(await room.balance(merchant)).toEqual({ available: 2_999, pendingOut: 3_001 });
      expect((await room.postings(merchant)).filter((p) => p.account === 'available').map((p) => p.balance_after))
        .toEqual([1_000, 6_000, 3_000, 2_999]);
    } finally {
      await observer.end();
      await otherPool.close();
    }
  });

  it('two transactions returning the same transfer at once return its funds exactly once', async () => {
    const merchant = await room.newMerchant();
    await room.credit(merchant, 2_000);
    const debited = await room.debit(merchant, 600);
    await room.debit(merchant, 900); // still pending: pending_out could pay for a second return
    const otherPool = await database.openAnother();
    const outcomes = await Promise.allSettled([database.db, otherPool].map((db) =>
      db.transaction(async (tx) => {
        await ledger.close(tx, { businessCode: merchant, movementId: debited.id, kind: 'transfer_return', now: T1 });
        await tx.query('select pg_sleep(0.1)');
      })));
    await otherPool.close();
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(databaseErrorOf(rejected?.reason)).toMatchObject({ code: '23505', constraint: 'journal_entries_one_closing' });
    expect(await room.balance(merchant)).toEqual({ available: 1_100, pendingOut: 900 });
  });
});

/** Polls `condition` every 20 ms for up to 5 s. */
async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 250; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('condition not met within 5 s');
}

/** True once a transaction holds the merchant's balance row locked (a credit in progress). */
async function creditIsHeld(observer: pg.Client, businessCode: number): Promise<boolean> {
  const { rows } = await observer.query<{ locked: boolean }>(
    `select not exists (select 1 from balances where business_code = $1::bigint for update skip locked) as locked`, [businessCode]);
  return rows[0]!.locked;
}
