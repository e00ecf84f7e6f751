// The owner's QRs, payments and refunds pages in headless Chromium (Debian's /usr/bin/chromium), in Spanish and
// in English, on a 360 px phone: the QR list and its filter, a QR's page and its cancel; the payments list, a
// payment's page, a refund refused for its amount, reviewed, confirmed and listed; a refund the balance does
// not cover (the fee is not given back); the refunds list. On every page and state: axe-core finds no WCAG 2.1
// A/AA violation, nothing scrolls sideways, one h1, nothing loads from elsewhere, no script error; a
// screenshot of each for the docs. The pages do not depend on the database kind (their HTTP tests run on both).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { clickAndWait, describeInChromium, expectCleanPage, launchChromium, NARROW, watchedPhone } from '../helpers/browser.ts';
import { newOwner } from './helpers.ts';

const LANGS = [{ lang: 'es', locale: 'es-BO', tag: 'es-BO' }, { lang: 'en', locale: 'en-US', tag: 'en' }] as const;
/** A tour runs axe on a dozen pages: ~20 s alone, several times that on a loaded machine. */
const TOUR_TIMEOUT_MS = 240_000;

describeInChromium('the owner\'s QRs, payments and refunds in Chromium, in both languages', () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const pathOf = (url: string) => { const parsed = new URL(url); return `${parsed.pathname}${parsed.search}`; };
  const plain = (text: string | null) => (text ?? '').replace(/\u00a0/g, ' ').replace(/\s+/g, ' ').trim();

  for (const { lang, locale, tag } of LANGS) {
    it(`${lang}: an owner filters the QRs, cancels one, refunds a payment from its page (refused, reviewed, confirmed); every page clean`, async () => {
      const check = (name: string) => expectCleanPage(page, { lang: tag, name: `${name}.${lang}`, screenshot: `console-${name}.${lang}` });
      // A business of its own per language, charging Bs 2.00 a payment (docs/fees.md).
      const merchant = await t.createMerchant({ name: 'Salteñería Doña Rosa, Sucursal Sopocachi', ach_enabled: true });
      expect((await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { pricing: { qr_percent: 0, qr_fixed: 2 } } })).status).toBe(200);
      const api = (method: string, path: string, body?: unknown) => t.request(method, path, { apiKey: merchant.apiKey, body });
      const qr = async (body: Record<string, unknown>) => (await api('POST', '/api/v2/simple-qrs', { business_code: merchant.businessCode, ...body })).body.id as string;
      await qr({ amount: 15, description: 'Salteñas x6', external_reference: 'PED-1001' });
      const open = await qr({ modify_amount: true, description: 'Propina', is_multi_use: true });
      const toCancel = await qr({ amount: 35.5, description: 'Empanadas para llevar' });
      const paidQr = await qr({ amount: 50, description: 'Torta de cumpleaños' });
      expect((await api('POST', `/api/v2/sandbox/simple-qrs/${paidQr}/payments`, { account_number: '10000123454321', account_titular: 'Ana Pérez Quispe' })).status).toBe(201);
      expect((await api('POST', `/api/v2/sandbox/simple-qrs/${open}/payments`, { amount: 5, account_number: '20000999887766', account_titular: 'Luis Mamani' })).status).toBe(201);
      const owner = await newOwner(t, merchant.businessCode, `tour.owner.${lang}@example.com`);
      const phone = await watchedPhone(browser, t.baseUrl, { locale, viewport: NARROW, cookies: owner.cookies });
      const { page } = phone;
      try {
        // The QRs: the list, filtered, a QR's page, its cancel.
        await page.goto(`${t.baseUrl}/console`);
        await clickAndWait(page, '[data-section="/console/qrs"]');
        expect(phone.status()).toBe(200);
        expect(await page.locator('#qrs li').count()).toBe(4);
        await check('qrs');
        await page.selectOption('#f-status', 'PAID');
        await clickAndWait(page, '#filter-form button');
        expect(pathOf(page.url())).toContain('status=PAID');
        expect(await page.locator('#qrs li').count()).toBe(1);
        await check('qrs-filtered');
        await page.goto(`${t.baseUrl}/console/qrs/${open}`);
        await check('qr-multi');
        await page.goto(`${t.baseUrl}/console/qrs/${toCancel}`);
        expect(await page.locator('#cancel-button').count()).toBe(1);
        await check('qr');
        await clickAndWait(page, '#cancel-button');
        expect(pathOf(page.url())).toBe(`/console/qrs/${toCancel}`);
        expect(await page.getAttribute('#qr-facts [data-field="status"]', 'data-state')).toBe('CANCELED');
        expect(await page.locator('#cancel-button').count()).toBe(0);
        expect((await api('GET', `/api/v2/simple-qrs/${toCancel}`)).body).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant' });
        await check('qr-canceled');

        // The payments, and a refund from the payment's page.
        await clickAndWait(page, 'nav.sections a[href^="/console/payments"]');
        expect(await page.locator('#payments li').count()).toBe(2);
        await check('payments');
        await clickAndWait(page, '#payments li:last-child .what a');
        expect(pathOf(page.url())).toMatch(/^\/console\/payments\/\d+$/);
        const paymentPath = pathOf(page.url());
        expect(plain(await page.textContent('[data-field="left"]'))).toBe(lang === 'es' ? 'Bs 50,00' : 'Bs 50.00');
        await check('payment');
        await page.fill('#f-amount', '60');
        await clickAndWait(page, '#refund-button');
        expect(phone.status()).toBe(422);
        expect(await page.locator('#f-amount-error').count()).toBe(1);
        await check('payment-errors');
        await page.fill('#f-amount', lang === 'es' ? '10,50' : '10.50');
        await page.selectOption('#f-reason', 'duplicate');
        await page.fill('#f-description', 'Cobrado dos veces');
        await clickAndWait(page, '#refund-button');
        expect(phone.status()).toBe(200);
        expect(plain(await page.textContent('h1'))).toBe(lang === 'es' ? '¿Devolver Bs 10,50 a Ana Pérez Quispe (**********4321)?' : 'Refund Bs 10.50 to Ana Pérez Quispe (**********4321)?');
        await check('refund-confirm');
        await clickAndWait(page, '#confirm-button');
        expect(pathOf(page.url())).toBe(paymentPath);
        expect(await page.locator('#payment-refunds li').count()).toBe(1);
        expect(plain(await page.textContent('[data-field="left"]'))).toBe(lang === 'es' ? 'Bs 39,50' : 'Bs 39.50');
        const refunds = (await api('GET', '/api/v2/refunds')).body.data;
        expect(refunds).toHaveLength(1);
        expect(refunds[0]).toMatchObject({ amount: 10.5, reason: 'duplicate', description: 'Cobrado dos veces', status: 'PENDING' });
        await check('payment-refunded');
        // Back from the confirmation keeps what was typed and makes nothing. The balance: 50 + 5 − 2 × 2.00 fees − 10.50.
        expect((await api('GET', '/api/v2/balance')).body.available).toBe(40.5);
        await page.fill('#f-amount', lang === 'es' ? '39,50' : '39.50');
        await clickAndWait(page, '#refund-button');
        await clickAndWait(page, '#back-button');
        expect(phone.status()).toBe(200);
        expect(await page.inputValue('#f-amount')).toBe(lang === 'es' ? '39,50' : '39.50');
        expect((await api('GET', '/api/v2/refunds')).body.data).toHaveLength(1);

        // A refund the balance does not cover: the other payment's fee is not given back.
        await page.goto(`${t.baseUrl}/console/payments`);
        await clickAndWait(page, '#payments li:first-child .what a');
        const smallPath = pathOf(page.url());
        // 5.00 paid, 2.00 fee kept: after a transfer leaves 3.00, its refund of 5.00 is not covered.
        const transfer = await t.request('POST', '/api/v2/transfers', {
          apiKey: merchant.apiKey, headers: { 'idempotency-key': crypto.randomUUID() },
          body: { business_code: merchant.businessCode, amount: 37.5, currency: 'BOB', destination: { type: 'bank_account', bank_code: 1014, account_number: '20150123455678', account_titular: 'Rosa Quispe' } },
        });
        expect(transfer.status).toBe(201);
        await clickAndWait(page, '#refund-button');
        await clickAndWait(page, '#confirm-button');
        expect(phone.status()).toBe(400);
        expect(pathOf(page.url())).toBe(`${smallPath}/refund/confirm`);
        expect(await page.locator('#form-alert').count()).toBe(1);
        await check('payment-refused');
        expect((await api('GET', '/api/v2/refunds')).body.data).toHaveLength(1);

        await clickAndWait(page, 'nav.sections a[href^="/console/refunds"]');
        expect(await page.locator('#refunds li').count()).toBe(1);
        await check('refunds');

        expect(phone.foreign).toEqual([]);
        expect(phone.problems).toEqual([]);
      } finally {
        await phone.context.close();
      }
    }, TOUR_TIMEOUT_MS);
  }
});
