// The hosted onboarding flow on the Banco Económico rail, through HTTP against the bank simulator: the
// activation-fee QR is the bank's, issued after the registration's transaction and never inside one; a payer
// pays it at the bank and the intent completes. A bank that refuses or does not answer loses nothing: the
// payment step says so and its reload issues the QR; two retries racing attach one QR, and a bank QR that
// is not attached (the race's loser, an intent cancelled meanwhile) goes to the cancel queue.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as onboarding from '../../src/onboarding/service.ts';
import * as qrs from '../../src/qr/service.ts';
import { isRailCancelPending } from '../../src/rails/cancels.ts';
import { eventually, POLL_MS, runJob, startBankedApp, watchBankCalls, type BankCall, type BankedApp } from '../bank/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { decodeQrImage } from '../qr/qr-helpers.ts';
import { FlowBrowser, newIntent, tokenOf, VALID_FORM, type Partner } from './helpers.ts';

type BankQr = { qrId: string; transactionId: string; status: string; payload: string } & Record<string, unknown>;

describe.each(databaseKinds())('hosted onboarding on the Banco Económico rail on %s', (kind) => {
  let s: BankedApp;
  let partner: Partner;
  let bankCalls: BankCall[];
  beforeAll(async () => {
    s = await startBankedApp(kind);
    bankCalls = watchBankCalls(s.t);
    partner = await s.t.createPartner();
  });
  afterEach(() => {
    s.bank.setKnobs({ faults: { generateQR: null }, delays: { generateQR: null } });
  });
  afterAll(async () => {
    await s?.close();
  });

  const bankQrs = () => s.bank.state().qrs as BankQr[];
  const bankQrOf = (qrId: string) => bankQrs().find((qr) => qr.transactionId === qrId);
  const storedIntent = async (t: TestApp, token: string) => (await onboarding.findIntentByToken(t.db, token))!;
  const activationQrCount = async (t: TestApp) => Number((await t.db.query<{ n: string }>(
    `select count(*) as n from simple_qrs where purpose = 'onboarding_activation'`)).rows[0]!.n);
  const imageOf = (html: string) => /<img class="qr" src="([^"]+)"/.exec(html)?.[1]?.replace(/&#39;|&quot;|&gt;|&lt;|&amp;/g, (e) => ({ '&#39;': "'", '&quot;': '"', '&gt;': '>', '&lt;': '<', '&amp;': '&' })[e]!);
  /** A registration the bank's refusal left without its activation QR (the 503 payment step). */
  const registeredWithoutQr = async () => {
    s.bank.setKnobs({ faults: { generateQR: { kind: 'refuse', message: 'Servicio en mantenimiento' } } });
    const intent = await newIntent(s.t, partner);
    const browser = new FlowBrowser(s.t, tokenOf(intent));
    const posted = await browser.register();
    expect(posted.status).toBe(503);
    return { intent, browser, posted };
  };

  it('issues the activation QR at the bank; the page shows the bank\'s image; the payer pays at the bank and the intent completes', async () => {
    const intent = await newIntent(s.t, partner, { metadata: { customer: 'cus_bank' } });
    const browser = new FlowBrowser(s.t, tokenOf(intent));
    const submitted = await browser.register();
    expect(submitted.status).toBe(303);
    expect(submitted.location).toBe(`/onboarding/${tokenOf(intent)}`);
    const stored = await storedIntent(s.t, tokenOf(intent));
    const { qr } = (await qrs.findQrById(s.t.db, stored.activation_qr_id!))!;
    expect(qr).toMatchObject({ business_code: 1000, amount_centavos: 1000, is_multi_use: false, purpose: 'onboarding_activation', rail: 'baneco', status: 'ACTIVE' });
    // Its expiry follows the intent's, rounded up to the minute.
    const lapse = qr.expires_at!.getTime() - stored.expires_at.getTime();
    expect(lapse >= 0 && lapse < 60_000).toBe(true);
    const issued = bankQrOf(qr.id)!;
    expect(issued).toMatchObject({ qrId: qr.rail_reference, amount: 10, singleUse: true, modifyAmount: false, status: 'active' });

    // The payment step: the bank's image (it draws the bank's payload), no sandbox "simulate payment".
    const page = await browser.get();
    expect(page.status).toBe(200);
    expect(imageOf(page.text)).toBe(qr.qr_image);
    expect(decodeQrImage(imageOf(page.text)!)).toBe(issued.payload);
    expect(page.text).not.toContain('id="simulate"');
    expect(page.text).not.toContain('/simulate-payment');
    expect(page.text).not.toContain('Simular pago');
    expect((await browser.post('/simulate-payment')).status).toBe(404);

    s.bank.pay(qr.rail_reference!, { senderName: 'ANA PEREZ' });
    const read = await eventually(async () => {
      const answer = await s.t.request('GET', `/api/v2/onboarding/intent/${intent.code}`, { apiKey: partner.masterKey });
      return answer.body.status === 'completed' && answer;
    });
    expect(read.body.business_code).toBeGreaterThan(1000);
    const payments = await s.t.db.query<{ rail: string; late: boolean }>('select rail, late from qr_payments where qr_id = $1::uuid', [qr.id]);
    expect(payments.rows).toEqual([{ rail: 'baneco', late: false }]);
    const done = await browser.get('/done');
    expect(done.status).toBe(200);
    const apiKey = /data-field="api-key">([^<]+)</.exec(done.text)![1]!;
    expect((await s.t.request('GET', '/api/v2/balance', { apiKey })).body.business_code).toBe(read.body.business_code);
    const events = (await eventsOfOwner(s.t.db, { kind: 'partner', partnerId: partner.partnerId })).filter((e) => e.data.code === intent.code);
    expect(events.map((e) => e.type)).toEqual(['onboarding_intent.completed']);
    expect(events[0]!.data.metadata).toEqual({ customer: 'cus_bank' });
  });

  it('records a bank payment the expired link can no longer take as a late payment, refunded in full, never refused', async () => {
    const intent = await newIntent(s.t, partner);
    const browser = new FlowBrowser(s.t, tokenOf(intent));
    expect((await browser.register()).status).toBe(303);
    const stored = await storedIntent(s.t, tokenOf(intent));
    const { qr } = (await qrs.findQrById(s.t.db, stored.activation_qr_id!))!;
    // The payer's bank takes the money in time, but its callback is lost; we learn of it after the link expired.
    s.bank.setKnobs({ callbacks: { dropNext: 1 } });
    s.bank.pay(qr.rail_reference!, { senderName: 'ANA PEREZ' });
    (s.t.clock as import('../helpers/app.ts').TestClock).advance(stored.expires_at.getTime() - s.t.clock.now().getTime() + 5 * 60_000);
    await runJob(s.t, 'bank-qr-poll');
    const payments = await s.t.db.query<{ id: number; late: boolean; amount_refunded_centavos: number }>(
      'select id, late, amount_refunded_centavos from qr_payments where qr_id = $1::uuid', [qr.id]);
    expect(payments.rows).toEqual([{ id: expect.any(Number), late: true, amount_refunded_centavos: 1000 }]);
    const refunds = await s.t.db.query<{ status: string; amount_centavos: number; reason: string }>(
      'select status, amount_centavos, reason from refunds where payment_id = $1::bigint', [payments.rows[0]!.id]);
    // The bank offers no reversal: the refund waits for the operator (docs/rails.md).
    expect(refunds.rows).toEqual([{ status: 'PENDING', amount_centavos: 1000, reason: 'qr_not_payable' }]);
    const read = await s.t.request('GET', `/api/v2/onboarding/intent/${intent.code}`, { apiKey: partner.masterKey });
    expect(read.body.status).toBe('expired');
    // Known now: a second reading records nothing more.
    await runJob(s.t, 'bank-qr-poll');
    expect((await s.t.db.query('select 1 from qr_payments where qr_id = $1::uuid', [qr.id])).rows).toHaveLength(1);
  });

  it('keeps the registration when the bank refuses the QR: the page says so and offers to try again; the reload issues one QR', async () => {
    const before = await activationQrCount(s.t);
    const { intent, browser, posted } = await registeredWithoutQr();
    expect(posted.text).toContain('<html lang="es-BO">');
    expect(posted.text).toContain('No pudimos preparar el pago');
    expect(posted.text).toContain(`id="retry-link" href="/onboarding/${tokenOf(intent)}"`);
    expect(posted.text).not.toContain('<img class="qr"');
    expect(posted.text).toContain('**********3456'); // the registration, kept
    const kept = await storedIntent(s.t, tokenOf(intent));
    expect(kept).toMatchObject({ status: 'open', trade_name: 'Café Pérez', activation_qr_id: null });
    expect(kept.submitted_at).not.toBeNull();
    expect(await activationQrCount(s.t)).toBe(before);

    // The retry: the payment step opened again (the refusal hit one call only).
    const retried = await browser.get();
    expect(retried.status).toBe(200);
    const attached = await storedIntent(s.t, tokenOf(intent));
    const { qr } = (await qrs.findQrById(s.t.db, attached.activation_qr_id!))!;
    expect(imageOf(retried.text)).toBe(qr.qr_image);
    expect(bankQrOf(qr.id)).toMatchObject({ qrId: qr.rail_reference, status: 'active' });
    expect(retried.text).not.toContain('payment-unprepared');

    // Opened again, or the form sent again: the same QR, no further call to the bank.
    const issuedSoFar = bankQrs().length;
    expect(imageOf((await browser.get()).text)).toBe(qr.qr_image);
    expect((await browser.post('', VALID_FORM)).status).toBe(303);
    expect(bankQrs().length).toBe(issuedSoFar);
    expect(await activationQrCount(s.t)).toBe(before + 1);
  });

  it('loses nothing when the bank does not answer in time: the page says so (in English too), and the retry issues the QR', async () => {
    const quick = await startBankedApp(kind, { timeoutMs: 300 });
    try {
      const quickPartner = await quick.t.createPartner();
      // The bank does issue this one; only its answer never comes: unknown, so never attached nor shown.
      quick.bank.setKnobs({ faults: { generateQR: { kind: 'stall', processed: true } } });
      const intent = await newIntent(quick.t, quickPartner);
      const browser = new FlowBrowser(quick.t, tokenOf(intent));
      await browser.get('?lang=en');
      const posted = await browser.post('?lang=en', VALID_FORM);
      expect(posted.status).toBe(503);
      expect(posted.text).toContain('<html lang="en">');
      expect(posted.text).toContain('We could not prepare the payment');
      expect(posted.text).toContain(`id="retry-link" href="/onboarding/${tokenOf(intent)}?lang=en"`);
      const kept = await storedIntent(quick.t, tokenOf(intent));
      expect(kept).toMatchObject({ status: 'open', activation_qr_id: null, legal_name: 'Empanadas Pérez S.R.L.' });
      expect(await activationQrCount(quick.t)).toBe(0);
      expect(quick.bank.state().qrs as unknown[]).toHaveLength(1);

      const retried = await browser.get('?lang=en');
      expect(retried.status).toBe(200);
      expect(retried.text).toContain('Activation payment');
      const attached = await storedIntent(quick.t, tokenOf(intent));
      const { qr } = (await qrs.findQrById(quick.t.db, attached.activation_qr_id!))!;
      expect(imageOf(retried.text)).toBe(qr.qr_image);
      expect((quick.bank.state().qrs as BankQr[]).map((issued) => issued.transactionId)).toEqual([expect.any(String), qr.id]);
      expect(await activationQrCount(quick.t)).toBe(1);
    } finally {
      await quick.close();
    }
  });

  it('attaches one QR when two retries race; the loser\'s bank QR goes to the cancel queue and is cancelled at the bank', async () => {
    const { intent, browser } = await registeredWithoutQr();
    const before = await activationQrCount(s.t);
    const issuedBefore = bankQrs().length;
    s.bank.setKnobs({ delays: { generateQR: 300 } }); // both retries are at the bank at once
    const [first, second] = await Promise.all([browser.get(), browser.get()]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const issued = bankQrs().slice(issuedBefore);
    expect(issued).toHaveLength(2);
    const attached = await storedIntent(s.t, tokenOf(intent));
    const winner = issued.find((qr) => qr.transactionId === attached.activation_qr_id)!;
    const loser = issued.find((qr) => qr !== winner)!;
    expect(winner).toBeDefined();
    expect(await activationQrCount(s.t)).toBe(before + 1);
    expect(await qrs.findQrById(s.t.db, loser.transactionId)).toBeUndefined();
    expect(await isRailCancelPending(s.t.db, 'baneco', loser.qrId)).toBe(true);
    // Both pages show the QR that was attached.
    const { qr } = (await qrs.findQrById(s.t.db, winner.transactionId))!;
    expect([imageOf(first.text), imageOf(second.text)]).toEqual([qr.qr_image, qr.qr_image]);
    s.t.clock.advance(POLL_MS);
    await runJob(s.t, 'bank-qr-poll');
    expect(bankQrOf(loser.transactionId)!.status).toBe('cancelled');
    expect(bankQrOf(winner.transactionId)!.status).toBe('active');
  });

  it('cancels at the bank the QR issued for an intent that was cancelled meanwhile, and attaches nothing', async () => {
    const { intent, browser } = await registeredWithoutQr();
    const issuedBefore = bankQrs().length;
    s.bank.setKnobs({ delays: { generateQR: 500 } });
    const retry = browser.get();
    const issued = await eventually(() => bankQrs()[issuedBefore]); // issued at the bank; its answer is on its way
    const cancelled = await browser.post('/cancel');
    expect(cancelled.status).toBe(200);
    const page = await retry;
    expect(page.status).toBe(303);
    expect(page.location).toBe(`/onboarding/${tokenOf(intent)}`);
    expect((await browser.get()).status).toBe(410);
    expect((await storedIntent(s.t, tokenOf(intent)))).toMatchObject({ status: 'cancelled', activation_qr_id: null });
    expect(await qrs.findQrById(s.t.db, issued.transactionId)).toBeUndefined();
    expect(await isRailCancelPending(s.t.db, 'baneco', issued.qrId)).toBe(true);
  });

  it('calls the bank outside any database transaction, at the submission and at the retry', async () => {
    const from = bankCalls.length;
    const { browser } = await registeredWithoutQr();
    expect((await browser.get()).status).toBe(200);
    expect(bankCalls.slice(from)).toEqual([{ operation: 'issueQr', inTransaction: false }, { operation: 'issueQr', inTransaction: false }]);
    // and in every test of this file
    expect(bankCalls.length).toBeGreaterThan(from);
    expect(bankCalls.filter((call) => call.inTransaction)).toEqual([]);
  });
});
