// The hosted onboarding flow over HTTP (docs/api-reference.md#hosted-onboarding-flow): the form with server-side validation and CSRF, the
// activation payment through the QR purpose hook, the fee-0 path, the done page's key shown once, cancel,
// the 410s, and the partner's events carrying the metadata.
import { sandboxPayer } from '../../src/rails/sandbox/pay-in.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revealAccountNumber } from '../../src/masking.ts';
import { findPayoutAccount } from '../../src/merchants/service.ts';
import * as onboarding from '../../src/onboarding/service.ts';
import * as qrs from '../../src/qr/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { FlowBrowser, newIntent, tokenOf, VALID_FORM, type Partner } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

const MINUTE = 60_000;

describe.each(databaseKinds())('hosted onboarding flow over HTTP on %s', (kind) => {
  let t: TestApp;
  let free: TestApp; // ONBOARDING_ACTIVATION_FEE=0 on the same database
  let partner: Partner;
  beforeAll(async () => {
    // Each with its own default price plan: a completed registration gets the plan of the service that completed it.
    t = await startTestApp({ kind, env: { FEE_QR: '2.5%+0.20', FEE_TRANSFER: '1.00' } });
    free = await startTestApp({ kind, database: t.database, clock: t.clock, env: { ONBOARDING_ACTIVATION_FEE: '0', FEE_QR: '1%+0', FEE_TRANSFER: '0.40' } });
    partner = await t.createPartner('Partner A');
  });
  afterAll(async () => {
    await free?.close();
    await t?.close();
  });

  const readIntent = (code: string) => t.request('GET', `/api/v2/onboarding/intent/${code}`, { apiKey: partner.masterKey });
  const partnerEvents = async (code: string) =>
    (await eventsOfOwner(t.db, { kind: 'partner', partnerId: partner.partnerId })).filter((e) => e.data.code === code);
  const keyOf = (text: string) => /data-field="api-key">([^<]+)</.exec(text)?.[1];

  it('shows the form with a label for every input, a flow cookie and security headers', async () => {
    const intent = await newIntent(t, partner);
    const browser = new FlowBrowser(t, tokenOf(intent));
    const page = await browser.get();
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const cookie = page.headers.get('set-cookie')!;
    expect(cookie).toMatch(new RegExp(`^mps_onboarding=[0-9A-Za-z]{32}; Path=/onboarding/${tokenOf(intent)}; Max-Age=7200; HttpOnly; SameSite=Lax$`));
    const ids = [...page.text.matchAll(/<(?:input|select) id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids.length).toBe(10);
    for (const id of ids) expect(page.text).toContain(`<label for="${id}">`);
    expect(page.text).toContain('value="La Paz"');
    expect(page.text).toContain('Banco Nacional de Bolivia');
    expect(page.text.replace(/\u00a0/g, ' ')).toContain('Bs 10,00');
    expect(page.text).toContain('Razón social');
    expect(page.text).toContain('<html lang="es-BO">');
    // a second visit keeps the same cookie
    expect((await browser.get()).headers.get('set-cookie')).toBeNull();
  });

  it('answers 404 for an unknown token', async () => {
    for (const token of ['A'.repeat(32), 'short']) {
      const page = await new FlowBrowser(t, token).get();
      expect(page.status).toBe(404);
      expect(page.text).toContain('No encontramos este enlace de registro');
    }
  });

  it('validates on the server with clear messages and keeps the values, escaped', async () => {
    const intent = await newIntent(t, partner);
    const browser = new FlowBrowser(t, tokenOf(intent));
    await browser.get();
    const page = await browser.post('', {
      ...VALID_FORM, legal_name: '<script>x</script>', trade_name: '', tax_id: '12a', email: 'nope', phone: '12',
      bank_code: '999', account_number: 'abc', mcc: '58', account_holder: ' ',
    });
    expect(page.status).toBe(422);
    expect(page.text).toContain('Escribe el nombre comercial.');
    expect(page.text).toContain('Escribe el NIT solo con dígitos');
    expect(page.text).toContain('Escribe un correo electrónico');
    expect(page.text).toContain('Escribe un teléfono');
    expect(page.text).toContain('Elige el banco de la cuenta.');
    expect(page.text).toContain('Escribe el número de cuenta');
    expect(page.text).toContain('El código de rubro tiene 4 dígitos');
    expect(page.text).toContain('Escribe el nombre del titular');
    expect(page.text).toContain('value="&lt;script&gt;x&lt;/script&gt;"');
    expect(page.text).not.toContain('<script>x');
    expect(page.text).toContain('value="Cochabamba"');
    expect(page.text).toContain('aria-invalid="true"');
    expect(page.text).toContain('Corrige los 8 campos marcados abajo.');
    // The same form in English (?lang=en), kept on the form's action; still nothing stored.
    const english = await browser.post('?lang=en', { ...VALID_FORM, trade_name: '', legal_name: 'x'.repeat(201) });
    expect(english.status).toBe(422);
    expect(english.text).toContain('<html lang="en">');
    expect(english.text).toContain('Enter the trade name.');
    expect(english.text).toContain('The legal name can have at most 200 characters.');
    expect(english.text).toContain('Please correct the 2 fields marked below.');
    expect(english.text).toContain(`action="/onboarding/${tokenOf(intent)}?lang=en"`);
    const one = await browser.post('', { ...VALID_FORM, city: 'a\u0000b' });
    expect(one.text).toContain('Corrige el campo marcado abajo.');
    expect(one.text).toContain('Quita los caracteres de control invisibles');
    expect((await readIntent(intent.code)).body.status).toBe('open');
  });

  it('refuses a POST without the flow cookie or with a wrong CSRF field (403) and stores nothing', async () => {
    const intent = await newIntent(t, partner);
    const browser = new FlowBrowser(t, tokenOf(intent));
    await browser.get();
    const stranger = new FlowBrowser(t, tokenOf(intent));
    stranger.csrf = browser.csrf; // knows the field, not the cookie
    expect((await stranger.post('', VALID_FORM)).status).toBe(403);
    const forged = new FlowBrowser(t, tokenOf(intent));
    forged.cookie = browser.cookie;
    forged.csrf = 'forged';
    expect((await forged.post('', VALID_FORM)).status).toBe(403);
    expect((await forged.post('/cancel')).status).toBe(403);
    const stored = await onboarding.findIntentByToken(t.db, tokenOf(intent));
    expect(stored!.submitted_at).toBeNull();
    expect(stored!.status).toBe('open');
  });

  it('fee 0: submitting creates the merchant at once; the done page shows the key once; every URL is 410 after', async () => {
    const intent = await newIntent(free, partner, { success_url: 'https://partner.example/ok?from=mps', metadata: { customer: 'cus_0' } });
    const browser = new FlowBrowser(free, tokenOf(intent));
    const submitted = await browser.register();
    expect(submitted.status).toBe(303);
    expect(submitted.location).toBe(`/onboarding/${tokenOf(intent)}/done`);
    // The form sent again (a double click whose twin completed the intent first) follows it to the done page.
    const twice = await browser.post('', VALID_FORM);
    expect(twice.status).toBe(303);
    expect(twice.location).toBe(`/onboarding/${tokenOf(intent)}/done`);
    const read = await readIntent(intent.code);
    expect(read.body).toMatchObject({ status: 'completed', completed_at: t.clock.now().toISOString(), metadata: { customer: 'cus_0' } });
    expect(read.body.business_code).toBeGreaterThan(1000);
    const done = await browser.get('/done');
    expect(done.status).toBe(200);
    const apiKey = keyOf(done.text)!;
    expect(apiKey).toMatch(/^mk_test_/);
    expect(done.text).toContain(`href="https://partner.example/ok?from=mps&amp;code=${intent.code}"`);
    expect(done.text).toContain(String(read.body.business_code));
    // No language switch on the page that shows the key once: reading it again would be a 410.
    expect(done.text).not.toContain('hreflang');
    const balance = await t.request('GET', '/api/v2/balance', { apiKey });
    expect(balance.status).toBe(200);
    expect(balance.body.business_code).toBe(read.body.business_code);
    const merchant = await t.request('GET', `/admin/v1/merchants/${read.body.business_code}`);
    expect(merchant.body).toMatchObject({
      name: 'Café Pérez', city: 'Cochabamba', mcc: '5812', ach_enabled: false, partner_id: partner.partnerId,
      pricing: { qr_percent: 1, qr_fixed: 0, transfer_fixed: 0.4 },
    });
    const payout = await findPayoutAccount(t.db, read.body.business_code);
    expect({ ...payout, accountNumber: revealAccountNumber(payout!.accountNumber) }).toEqual({ bankCode: 1001, accountNumber: '1000-2000-3456', accountHolder: 'Ana Pérez' });
    // It starts with a manual payout schedule to that account (docs/payouts.md), which keeps the full number too.
    const schedule = await t.request('GET', `/admin/v1/merchants/${read.body.business_code}/payout-schedule`);
    expect(schedule.body).toMatchObject({
      interval: 'manual', weekday: null, minimum: 10, keep: 0, effective_from: null, last_run: null, updated_at: t.clock.now().toISOString(),
      destination: { type: 'bank_account', bank_code: 1001, account_number: '**********3456', account_titular: 'Ana Pérez' },
    });
    const { rows: [stored] } = await t.db.query<{ account_number: string }>('select account_number from payout_schedules where business_code = $1::bigint', [read.body.business_code]);
    expect(stored!.account_number).toBe('1000-2000-3456');
    // the intent's own copy is masked once the flow is over; the merchant's payout account keeps the full number
    const closed = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
    expect({ full: closed.payout_account_number, masked: closed.payout_account_masked }).toEqual({ full: null, masked: '**********3456' });
    for (const again of [await browser.get('/done'), await browser.get(), await browser.post('/cancel')]) {
      expect(again.status).toBe(410);
      expect(again.text).toContain('ya fue usado');
    }
    const events = await partnerEvents(intent.code);
    expect(events.map((e) => e.type)).toEqual(['onboarding_intent.completed']);
    expect(events[0]!.data).toEqual(read.body);
  });

  it('the done page of a browser that did not submit the form answers 410 and leaves the key to the submitter', async () => {
    const intent = await newIntent(free, partner);
    const browser = new FlowBrowser(free, tokenOf(intent));
    await browser.register();
    expect((await new FlowBrowser(free, tokenOf(intent)).get('/done')).status).toBe(410);
    const done = await browser.get('/done');
    expect(done.status).toBe(200);
    expect(keyOf(done.text)).toMatch(/^mk_test_/);
    expect(done.text).not.toContain('continue-link'); // no success_url
  });

  it('with a fee: the payment step shows the QR and the masked account; the sandbox payment completes the intent', async () => {
    const intent = await newIntent(t, partner, { success_url: 'https://partner.example/ok', metadata: { customer: 'cus_1', plan: 'pro' } });
    const browser = new FlowBrowser(t, tokenOf(intent));
    const submitted = await browser.register();
    expect(submitted.status).toBe(303);
    expect(submitted.location).toBe(`/onboarding/${tokenOf(intent)}`);
    expect((await browser.get('/done')).location).toBe(`/onboarding/${tokenOf(intent)}`); // not paid yet
    const payment = await browser.get();
    expect(payment.status).toBe(200);
    expect(payment.text).toContain('Pago de activación');
    expect(payment.text).toContain('data:image/png;base64,');
    expect(payment.text).toContain('**********3456');
    expect(payment.text).not.toContain('1000-2000-3456');
    expect(payment.text).toContain('Simular pago');
    expect((await browser.get('/status')).text).toBe('{"status":"open"}');
    const stored = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
    const qr = (await qrs.findQrById(t.db, stored.activation_qr_id!))!.qr;
    expect(qr).toMatchObject({ business_code: 1000, amount_centavos: 1000, is_multi_use: false, purpose: 'onboarding_activation' });
    const platformBefore = await platformAvailable();
    const paid = await browser.post('/simulate-payment');
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`/onboarding/${tokenOf(intent)}/done`);
    expect(await platformAvailable()).toBe(platformBefore + 1000);
    expect((await browser.get('/status')).status).toBe(410);
    const read = await readIntent(intent.code);
    expect(read.body.status).toBe('completed');
    const done = await browser.get('/done');
    expect(done.status).toBe(200);
    expect((await t.request('GET', '/api/v2/balance', { apiKey: keyOf(done.text)! })).body.business_code).toBe(read.body.business_code);
    // Created by the activation payment's purpose handler, with the default plan of the service that recorded it.
    const merchant = await t.request('GET', `/admin/v1/merchants/${read.body.business_code}`);
    expect(merchant.body.pricing).toEqual({ qr_percent: 2.5, qr_fixed: 0.2, transfer_fixed: 1 });
    expect((await browser.get('/done')).status).toBe(410);
    const events = await partnerEvents(intent.code);
    expect(events.map((e) => e.type)).toEqual(['onboarding_intent.completed']);
    expect(events[0]!.data).toEqual({ ...read.body });
    expect(events[0]!.data.metadata).toEqual({ customer: 'cus_1', plan: 'pro' });
  });

  const platformAvailable = async () => {
    const { rows } = await t.db.query<{ available: number }>('select available_centavos as available from balances where business_code = 1000');
    return Number(rows[0]!.available);
  };

  it('a double submit stores the registration once and creates one activation QR', async () => {
    const intent = await newIntent(t, partner);
    const browser = new FlowBrowser(t, tokenOf(intent));
    await browser.register();
    const first = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
    const again = await browser.post('', { ...VALID_FORM, trade_name: 'Other' });
    expect(again.status).toBe(303);
    const second = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
    expect(second.activation_qr_id).toBe(first.activation_qr_id);
    expect(second.trade_name).toBe('Café Pérez');
  });

  it('cancel from the form: cancelled, redirected to cancel_url, the link is dead, event with metadata', async () => {
    const intent = await newIntent(t, partner, { cancel_url: 'https://partner.example/cancelled', metadata: { customer: 'cus_2' } });
    const browser = new FlowBrowser(t, tokenOf(intent));
    await browser.get();
    const page = await browser.get();
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://partner.example;");
    const cancelled = await browser.post('/cancel');
    expect(cancelled.status).toBe(303);
    expect(cancelled.location).toBe('https://partner.example/cancelled');
    const read = await readIntent(intent.code);
    expect(read.body).toMatchObject({ status: 'cancelled', cancelled_at: t.clock.now().toISOString(), business_code: null });
    for (const again of [await browser.get(), await browser.post('', VALID_FORM), await browser.get('/done'), await browser.post('/cancel')]) {
      expect(again.status).toBe(410);
      expect(again.text).toContain('fue cancelado');
    }
    const events = await partnerEvents(intent.code);
    expect(events.map((e) => e.type)).toEqual(['onboarding_intent.cancelled']);
    expect(events[0]!.data).toEqual(read.body);
  });

  it('cancel on the payment step cancels the activation QR: no payment is accepted after', async () => {
    const intent = await newIntent(t, partner);
    const browser = new FlowBrowser(t, tokenOf(intent));
    await browser.register();
    await browser.get();
    const cancelled = await browser.post('/cancel');
    expect(cancelled.status).toBe(200); // no cancel_url: a page says so
    expect(cancelled.text).toContain('Registro cancelado');
    // Its language switch reads the flow's page (a GET), never the POST-only cancel URL.
    expect(cancelled.text).toContain(`href="/onboarding/${tokenOf(intent)}?lang=en"`);
    const stored = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
    const qr = (await qrs.findQrById(t.db, stored.activation_qr_id!))!.qr;
    expect(qr.status).toBe('CANCELED');
    expect({ full: stored.payout_account_number, masked: stored.payout_account_masked }).toEqual({ full: null, masked: '**********3456' });
    await expect(onboarding.simulateActivationPayment(t.context, sandboxPayer, stored, t.clock.now())).rejects.toMatchObject({ code: 'QR_NOT_PAYABLE' });
    expect((await browser.post('/simulate-payment')).status).toBe(410);
  });

  it('after expiry every page is 410 and the activation payment is refused; no merchant is created', async () => {
    const intent = await newIntent(t, partner, { metadata: { customer: 'cus_3' } });
    const browser = new FlowBrowser(t, tokenOf(intent));
    await browser.register();
    const stored = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
    const platformBefore = await platformAvailable();
    t.clock.advance(120 * MINUTE);
    for (const page of [await browser.get(), await browser.post('/simulate-payment'), await browser.post('/cancel'), await browser.get('/done')]) {
      expect(page.status).toBe(410);
      expect(page.text).toContain('venció');
    }
    await expect(onboarding.simulateActivationPayment(t.context, sandboxPayer, stored, t.clock.now())).rejects.toMatchObject({ code: 'QR_NOT_PAYABLE' });
    // even a payment reaching a QR that outlives the intent by rounding is refused by the purpose handler
    await expect(onboarding.simulateActivationPayment(t.context, sandboxPayer, stored, new Date(stored.expires_at.getTime() + 1))).rejects.toMatchObject({ code: 'QR_NOT_PAYABLE' });
    expect(await platformAvailable()).toBe(platformBefore);
    expect((await readIntent(intent.code)).body).toMatchObject({ status: 'expired', business_code: null });
    await onboarding.sweepExpiredIntents(t.db, t.clock.now(), 1000);
    const expired = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
    expect({ status: expired.status, full: expired.payout_account_number, masked: expired.payout_account_masked }).toEqual({ status: 'expired', full: null, masked: '**********3456' });
  });

  it('in live mode there is no simulate control and no simulate endpoint', async () => {
    const live = await startLiveApp({ kind, database: t.database, clock: t.clock });
    try {
      // Keys work only in the mode they were made in: a live partner for the live service.
      const intent = await newIntent(live, await live.createPartner());
      const browser = new FlowBrowser(live, tokenOf(intent));
      await browser.register();
      const page = await browser.get();
      expect(page.text).not.toContain('Simular pago');
      expect((await browser.post('/simulate-payment')).status).toBe(404);
    } finally {
      await live.close();
    }
  });
});
