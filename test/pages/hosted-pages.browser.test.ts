// Every hosted page and state, in Spanish and in English, in headless Chromium (Debian's
// /usr/bin/chromium): axe-core finds no WCAG 2.1 A/AA violation, the page fits 360 px and a desktop
// without sideways scrolling, it loads nothing from elsewhere, and it weighs under 50 KB without its QR
// image. With UPDATE_SCREENSHOTS=1 the tour writes docs/screenshots/<page>.<lang>.png (360 px wide):
//   UPDATE_SCREENSHOTS=1 npx vitest run test/pages/hosted-pages.browser.test.ts
// The pages do not depend on the database kind (their HTTP tests run on both); this tour runs on PGlite.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { clickAndWait, describeInChromium, expectCleanPage, horizontalOverflow, launchChromium, NARROW, watchedPhone, writeScreenshot } from '../helpers/browser.ts';
import { newIntent, tokenOf as intentToken, VALID_FORM, type Partner } from '../onboarding/helpers.ts';
import { createQr, pay, type Merchant } from '../qr/qr-helpers.ts';

const LANGS = [{ lang: 'es', locale: 'es-BO', tag: 'es-BO' }, { lang: 'en', locale: 'en-US', tag: 'en' }] as const;
const DESKTOP = { width: 1280, height: 800 };
const WEIGHT_LIMIT_BYTES = 50 * 1024;
const qrToken = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;

/** A page state of the tour: `open` makes fresh data for it and brings `page` there. */
interface Stop {
  name: string;
  status: number;
  open(page: Page): Promise<void>;
}

describeInChromium('every hosted page in both languages', () => {
  let t: TestApp;
  /** The same service two hours later: what a link looks like once it has expired. */
  let later: TestApp;
  let merchant: Merchant;
  let partner: Partner;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    const laterClock = new TestClock();
    laterClock.advance(2 * 3_600_000);
    later = await startTestApp({ kind: 'pglite', database: t.database, clock: laterClock });
    merchant = await t.createMerchant({ name: 'Café Pérez' });
    partner = await t.createPartner('Partner A');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await later?.close();
    await t?.close();
  });

  /** Runs `test` on a page of a new browser context that asks for Spanish, closed after. */
  const inSpanishBrowser = async (test: (page: Page) => Promise<void>) => {
    const context = await browser.newContext({ viewport: NARROW, locale: 'es-BO' });
    try {
      await test(await context.newPage());
    } finally {
      await context.close();
    }
  };
  /** A new registration link, on this test's server. */
  const openIntentUrl = async () => `${t.baseUrl}/onboarding/${intentToken(await newIntent(t, partner))}`;
  const fillRegistration = async (page: Page) => {
    for (const [name, value] of Object.entries(VALID_FORM)) {
      if (name === 'bank_code') await page.selectOption('#f-bank_code', value);
      else await page.fill(`#f-${name}`, value);
    }
  };
  const submit = clickAndWait;

  const STOPS: Stop[] = [
    { name: 'pay-active', status: 200, async open(page) {
      const qr = await createQr(t, merchant, { amount: 1234.5, description: 'Pedido 42: 2 salteñas, 1 api morado', qr_expiration: '+30m' });
      await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}`);
    } },
    { name: 'pay-editable', status: 200, async open(page) {
      const qr = await createQr(t, merchant, { modify_amount: true, is_multi_use: true, amount: 20, min_amount: 5, max_amount: 500, description: 'Propina' });
      await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}`);
    } },
    { name: 'pay-form-errors', status: 422, async open(page) {
      const qr = await createQr(t, merchant, { modify_amount: true, amount: undefined });
      await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}`);
      await page.fill('#sim-account_number', '12x');
      await submit(page, '#simulate button[type="submit"]');
    } },
    { name: 'pay-paid', status: 200, async open(page) {
      const qr = await createQr(t, merchant, { amount: 75, description: 'Mesa 4' });
      await pay(t, merchant, qr.id, { account_titular: 'Ana Pérez' });
      await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}`);
    } },
    { name: 'pay-canceled', status: 200, async open(page) {
      const qr = await createQr(t, merchant, { amount: 30, description: 'Mesa 4' });
      await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
      await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}`);
    } },
    { name: 'pay-expired', status: 200, async open(page) {
      const qr = await createQr(t, merchant, { amount: 9.9, description: 'Kiosco 7: agua', qr_expiration: '+5m' });
      await page.goto(`${later.baseUrl}/pay/${qrToken(qr)}`);
    } },
    { name: 'pay-not-found', status: 404, async open(page) {
      await page.goto(`${t.baseUrl}/pay/AAAAAAAAAAAAAAAAAAAAAA`);
    } },
    { name: 'receipt', status: 200, async open(page) {
      const qr = await createQr(t, merchant, { amount: 1234.5, description: 'Pedido 42' });
      await pay(t, merchant, qr.id, { account_titular: 'Ana Pérez', source_bank: 'Banco Unión' });
      await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}/receipt`);
    } },
    { name: 'receipt-none', status: 404, async open(page) {
      const qr = await createQr(t, merchant, { amount: 5 });
      await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}/receipt`);
    } },
    { name: 'onboarding-form', status: 200, async open(page) {
      await page.goto(await openIntentUrl());
    } },
    { name: 'onboarding-form-errors', status: 422, async open(page) {
      await page.goto(await openIntentUrl());
      await page.fill('#f-tax_id', '12a');
      await submit(page, '#submit-button');
    } },
    { name: 'onboarding-payment', status: 200, async open(page) {
      await page.goto(await openIntentUrl());
      await fillRegistration(page);
      await submit(page, '#submit-button');
    } },
    { name: 'onboarding-done', status: 200, async open(page) {
      await page.goto(await openIntentUrl());
      await fillRegistration(page);
      await submit(page, '#submit-button');
      await submit(page, '#simulate-button');
    } },
    { name: 'onboarding-used', status: 410, async open(page) {
      const url = await openIntentUrl();
      await page.goto(url);
      await fillRegistration(page);
      await submit(page, '#submit-button');
      await submit(page, '#simulate-button');
      await page.goto(url);
    } },
    { name: 'onboarding-cancelled', status: 200, async open(page) {
      await page.goto(await openIntentUrl());
      await submit(page, '#cancel-button');
    } },
    { name: 'onboarding-expired', status: 410, async open(page) {
      const intent = await newIntent(t, partner);
      await page.goto(`${later.baseUrl}/onboarding/${intentToken(intent)}`);
    } },
    { name: 'onboarding-not-found', status: 404, async open(page) {
      await page.goto(`${t.baseUrl}/onboarding/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
    } },
    { name: 'onboarding-cookie', status: 403, async open(page) {
      await page.goto(await openIntentUrl());
      await page.context().clearCookies();
      await submit(page, '#submit-button');
    } },
  ];

  for (const stop of STOPS) {
    it.each(LANGS)(`${stop.name} in %s: no axe violation, fits 360 px and a desktop, nothing from elsewhere, under 50 KB`, async ({ lang, locale, tag }) => {
      // A phone 360 px wide; the expired link's page is served by the later server, the one other origin allowed.
      const { context, page, foreign, problems, status } = await watchedPhone(browser, t.baseUrl, { locale, viewport: NARROW });
      try {
        await stop.open(page);
        expect(status()).toBe(stop.status);
        expect((await page.title()).length).toBeGreaterThan(0);
        // Its lang, one h1, no axe-core WCAG 2.1 A/AA violation, nothing sideways at 360 px; the screenshot.
        await expectCleanPage(page, { lang: tag, name: stop.name, screenshot: `${stop.name}.${lang}` });

        const weight = await page.evaluate(() => {
          const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
          const assets = (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
            .filter((entry) => entry.initiatorType !== 'fetch') // the status polls are data, not the page's assets
            .reduce((sum, entry) => sum + entry.encodedBodySize, 0);
          const qrImage = document.querySelector('img.qr')?.getAttribute('src')?.length ?? 0;
          return { document: navigation.encodedBodySize, assets, qrImage };
        });
        expect(weight.document).toBeGreaterThan(1000);
        expect(weight.document - weight.qrImage + weight.assets).toBeLessThan(WEIGHT_LIMIT_BYTES);

        await page.setViewportSize(DESKTOP);
        expect(await horizontalOverflow(page)).toBe(0);
        if (stop.name === 'pay-active' || stop.name === 'onboarding-form') await writeScreenshot(page, `${stop.name}.${lang}.desktop`);
        expect(foreign.filter((url) => new URL(url).origin !== new URL(later.baseUrl).origin)).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }

  it('switches language from the page itself and keeps it through the form', () => inSpanishBrowser(async (page) => {
    const qr = await createQr(t, merchant, { modify_amount: true, amount: undefined });
    await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}`);
    expect(await page.textContent('#status')).toBe('Esperando el pago');
    await submit(page, 'nav.lang a[hreflang="en"]');
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await page.textContent('#status')).toBe('Waiting for payment');
    await page.fill('#sim-amount', '12.50');
    await submit(page, '#simulate button[type="submit"]');
    expect(page.url()).toBe(`${t.baseUrl}/pay/${qrToken(qr)}?lang=en`);
    expect(await page.textContent('#status')).toBe('Paid — thank you');
    await submit(page, '#receipt-link');
    expect(await page.textContent('h1')).toBe('Payment receipt');
  }));

  it('works with the keyboard alone: every control is reached by Tab, shows its focus, and Enter pays', () => inSpanishBrowser(async (page) => {
    const qr = await createQr(t, merchant, { modify_amount: true, amount: 20 });
    await page.goto(`${t.baseUrl}/pay/${qrToken(qr)}`);
    const reached: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement;
        const style = getComputedStyle(element);
        return { id: element.id || element.getAttribute('hreflang') || element.tagName, outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
      });
      reached.push(focused.id);
      expect(focused.outline, focused.id).not.toBe('none');
      expect(focused.width, focused.id).toBeGreaterThanOrEqual(2);
      if (focused.id === 'sim-amount') break;
    }
    expect(reached).toEqual(['en', 'save-qr', 'sim-source_bank', 'sim-account_number', 'sim-account_titular', 'sim-amount']);
    await page.keyboard.press('Control+A');
    await page.keyboard.type('30,00');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(await page.textContent('#status')).toBe('Pagado, ¡gracias!');
    const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey });
    expect(payments.body.data[0].amount).toBe(30);

    // The registration form: every field in order, then submit, then cancel.
    await page.goto(await openIntentUrl());
    const order: string[] = [];
    for (let i = 0; i < 16; i += 1) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('hreflang') || ''));
    }
    expect(order.slice(0, 14)).toEqual(['en', 'f-legal_name', 'f-trade_name', 'f-tax_id', 'f-city', 'f-mcc', 'f-email', 'f-phone',
      'f-bank_code', 'f-account_number', 'f-account_holder', 'submit-button', 'cancel-button', '']);
  }));
});
