// The rail of each QR and payment, and the bank's id of each (docs/rails.md): a bank's payment reaches the
// service by its callback, the status poll and the daily list, and must be recorded once — the database
// refuses a second payment with the same (rail, rail_reference), in the transaction that would credit it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FullAccountNumber } from '../../src/masking.ts';
import { receivePayment, receivePaymentIn } from '../../src/qr/service.ts';
import { RailPaymentRecordedError } from '../../src/qr/store.ts';
import type { PaymentNotice } from '../../src/rails/pay-in.ts';
import { centavos } from '../../src/money.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay } from './qr-helpers.ts';

const bankNotice = (qrId: string, transactionId: string): PaymentNotice => ({
  qrId,
  businessCode: null,
  amountCentavos: centavos(2_500),
  payer: { sourceBank: 'Banco Unión', accountNumber: new FullAccountNumber('20000123451913'), accountTitular: 'Ana Pérez' },
  rail: 'baneco',
  railReference: transactionId,
  paidAt: null,
});

describe.each(databaseKinds())('rails of QRs and payments on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t?.close());

  it('shows the sandbox rail, with no bank id, on a QR, its payment and its events', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 10 });
    expect(qr).toMatchObject({ rail: 'sandbox', rail_reference: null });
    const payment = await pay(t, merchant, qr.id);
    expect(payment.body).toMatchObject({ rail: 'sandbox', rail_reference: null });
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.body).toMatchObject({ rail: 'sandbox', rail_reference: null, last_payment: { rail: 'sandbox', rail_reference: null } });
  });

  it('records a bank transaction once when the same one arrives many times at once', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 25, is_multi_use: true });
    const attempts = await Promise.allSettled(Array.from({ length: 8 }, () => receivePayment(t.context, bankNotice(qr.id, 'TX-77'), t.clock.now())));
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(1);
    for (const refused of attempts.filter((a) => a.status === 'rejected')) {
      expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(RailPaymentRecordedError);
    }
    const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey });
    expect(payments.body.data).toEqual([expect.objectContaining({ rail: 'baneco', rail_reference: 'TX-77', amount: 25 })]);
    expect((await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available).toBe(25);
    // Another transaction of the same bank is another payment.
    await receivePayment(t.context, bankNotice(qr.id, 'TX-78'), t.clock.now());
    expect((await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available).toBe(50);
  });

  it('refuses a late payment whose bank transaction is recorded already, leaving nothing behind', async () => {
    const merchant = await t.createMerchant();
    const qr = await createQr(t, merchant, { amount: 25 });
    await receivePayment(t.context, bankNotice(qr.id, 'TX-90'), t.clock.now());
    const before = (await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available;
    // The QR is paid: the same transaction again would be a late payment; it is the same money, so refused.
    await expect(t.db.transaction((tx) => receivePaymentIn(tx, t.context, bankNotice(qr.id, 'TX-90'), t.clock.now(), { whenNotPayable: 'record' })))
      .rejects.toBeInstanceOf(RailPaymentRecordedError);
    expect((await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available).toBe(before);
  });
});
