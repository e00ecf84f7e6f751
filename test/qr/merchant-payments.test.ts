// The QR capability's merchant-wide payment reads (qr/service.ts getPaymentOfMerchant, listPaymentsOfMerchant),
// and paymentIdsOfMovements, which the console's pages use: newest recorded first, paged, and only the merchant's own —
// another merchant's payment is not found. On PGlite, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/kernel/errors.ts';
import { getPaymentOfMerchant, listPaymentsOfMerchant, paymentIdsOfMovements } from '../../src/qr/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay } from './qr-helpers.ts';

describe.each(databaseKinds())('a merchant\'s payments on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ kind }); });
  afterAll(() => t?.close());

  it('lists every payment of the merchant newest first, paged, with its fee; another merchant\'s are neither listed nor found', async () => {
    const a = await t.createMerchant();
    const b = await t.createMerchant();
    const paid: number[] = [];
    for (const amount of [10, 20, 30]) {
      const qr = await createQr(t, a, { amount });
      const payment = await pay(t, a, qr.id, { account_number: '10000123454321', account_titular: 'Ana Pérez' });
      expect(payment.status).toBe(201);
      paid.push(payment.body.id);
    }
    const other = await pay(t, b, (await createQr(t, b, { amount: 5 })).id);
    expect(other.status).toBe(201);

    const first = await listPaymentsOfMerchant(t.db, a.businessCode, { page: 1, perPage: 2 });
    expect(first.total).toBe(3);
    expect(first.items.map((p) => p.id)).toEqual([paid[2], paid[1]]);
    expect(first.items[0]!.account_number.masked).toBe('**********4321');
    expect(first.items[0]!.amount_centavos).toBe(3000);
    const second = await listPaymentsOfMerchant(t.db, a.businessCode, { page: 2, perPage: 2 });
    expect(second).toMatchObject({ total: 3, items: [{ id: paid[0] }] });
    expect((await listPaymentsOfMerchant(t.db, a.businessCode, { page: 9, perPage: 2 })).items).toEqual([]);

    expect((await getPaymentOfMerchant(t.db, a.businessCode, paid[1]!)).amount_centavos).toBe(2000);
    for (const [code, id] of [[a.businessCode, other.body.id], [b.businessCode, paid[0]], [a.businessCode, 9_000_000_000]] as const) {
      const refused = await getPaymentOfMerchant(t.db, code, id).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('NOT_FOUND');
    }
  });

  it('maps a page of movements to the merchant\'s own payments only', async () => {
    const a = await t.createMerchant();
    const b = await t.createMerchant();
    const mine = await pay(t, a, (await createQr(t, a, { amount: 7 })).id);
    const theirs = await pay(t, b, (await createQr(t, b, { amount: 8 })).id);
    const movementOf = async (paymentId: number) =>
      Number((await t.db.query<{ movement_id: number }>('select movement_id from qr_payments where id = $1', [paymentId])).rows[0]!.movement_id);
    const [myMovement, theirMovement] = [await movementOf(mine.body.id), await movementOf(theirs.body.id)];
    const found = await paymentIdsOfMovements(t.db, a.businessCode, [myMovement, theirMovement, 9_000_000_000]);
    expect([...found]).toEqual([[myMovement, mine.body.id]]);
    expect(await paymentIdsOfMovements(t.db, a.businessCode, [])).toEqual(new Map());
  });
});
