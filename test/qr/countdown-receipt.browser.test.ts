// The pay page's countdown and the printable receipt in headless Chromium. The service runs on a test
// clock two days behind the browser's own: a countdown that trusted the device clock would show the QR
// long expired, so these tests also prove the countdown follows the server's time. The browser behaviour
// does not depend on the database kind; it runs on PGlite.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeInChromium, launchChromium } from '../helpers/browser.ts';
import { newIntent, tokenOf as intentToken, VALID_FORM } from '../onboarding/helpers.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';

const tokenOf = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;
/** Paper widths of thermal receipt printers, in CSS pixels (96 per inch). */
const PAPER = { '58mm': Math.floor((58 / 25.4) * 96), '80mm': Math.floor((80 / 25.4) * 96) };

describeInChromium('countdown and receipt in Chromium', () => {
  let t: TestApp;
  let merchant: Merchant;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    merchant = await t.createMerchant({ name: 'Kiosco San Miguel' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const openPage = async (url: string, locale = 'es-BO') => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(url);
    return { page, problems, close: () => context.close() };
  };

  it('counts down from the server\'s time, announces only milestones, and at zero turns to expired without a reload', async () => {
    const qr = await createQr(t, merchant, { amount: 5, description: 'Agua 600 ml', qr_expiration: '+1m' });
    t.clock.advance(48_000); // 12 s left by the server's clock; the browser's clock is two days ahead
    const { page, problems, close } = await openPage(`${t.baseUrl}/pay/${tokenOf(qr)}`);
    try {
      const opened = Date.now();
      await page.evaluate(() => {
        const w = window as unknown as { marker: number; announced: string[] };
        w.marker = 1;
        w.announced = [];
        new MutationObserver(() => w.announced.push(document.getElementById('countdown-announce')!.textContent!))
          .observe(document.getElementById('countdown-announce')!, { childList: true, characterData: true, subtree: true });
      });
      await expect.poll(() => page.textContent('#countdown')).toMatch(/^0:1[0-2]$/);
      expect(await page.getAttribute('#countdown', 'role')).toBe('timer');
      expect(await page.textContent('#status')).toBe('Esperando el pago');
      expect(await page.isVisible('img.qr')).toBe(true);

      await expect.poll(() => page.textContent('#status'), { timeout: 16_000, interval: 200 }).toBe('Este cobro venció');
      const elapsed = Date.now() - opened;
      expect(elapsed).toBeGreaterThan(9_000); // it ran its course: no early flip from the device's clock
      expect(await page.isHidden('#pay-section')).toBe(true);
      expect(await page.isHidden('img.qr')).toBe(true);
      expect(await page.isHidden('#expiry')).toBe(true);
      expect(await page.isHidden('#simulate')).toBe(true);
      expect(await page.title()).toBe('Kiosco San Miguel — Este cobro venció');
      const state = await page.evaluate(() => {
        const w = window as unknown as { marker?: number; announced: string[] };
        return { marker: w.marker, announced: w.announced };
      });
      expect(state.marker).toBe(1); // no reload
      // One announcement in 12 seconds (the 10-second milestone), not one per tick.
      expect(state.announced).toEqual(['Quedan 10 segundos para pagar']);
      // The page acted on its own countdown: the server's clock has not moved, and a payment still fails there once it has.
      expect((await t.request('GET', `/pay/${tokenOf(qr)}/status`)).body.status).toBe('ACTIVE');
      t.clock.advance(12_000);
      expect((await pay(t, merchant, qr.id)).status).toBe(409);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows hours and minutes for a long expiry, in English too', async () => {
    const qr = await createQr(t, merchant, { amount: 5, qr_expiration: '+2h' });
    const { page, close } = await openPage(`${t.baseUrl}/pay/${tokenOf(qr)}`, 'en-US');
    try {
      await expect.poll(() => page.textContent('#countdown')).toMatch(/^(2:00:00|1:59:5\d)$/);
      expect(await page.getAttribute('#countdown', 'aria-label')).toBe('Time left to pay');
    } finally {
      await close();
    }
  });

  it('counts down to the expiry of the onboarding activation payment and hides its QR at zero', async () => {
    const short = await startTestApp({ kind: 'pglite', database: t.database, clock: t.clock, env: { ONBOARDING_INTENT_TTL: '1m' } });
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'es-BO' });
    try {
      const partner = await short.createPartner('Partner K');
      const page = await context.newPage();
      await page.goto(`${short.baseUrl}/onboarding/${intentToken(await newIntent(short, partner))}`);
      for (const [name, value] of Object.entries(VALID_FORM)) {
        if (name === 'bank_code') await page.selectOption('#f-bank_code', value);
        else await page.fill(`#f-${name}`, value);
      }
      t.clock.advance(53_000); // the payment step opens with 7 s left
      await Promise.all([page.waitForNavigation(), page.click('#submit-button')]);
      expect(await page.textContent('h1')).toBe('Pago de activación');
      await expect.poll(() => page.textContent('#countdown')).toMatch(/^0:0[5-7]$/);
      expect(await page.isVisible('img.qr')).toBe(true);
      await expect.poll(() => page.textContent('#status'), { timeout: 10_000, interval: 200 }).toBe('Este enlace de registro venció');
      expect(await page.isHidden('img.qr')).toBe(true);
      expect(await page.isHidden('#simulate')).toBe(true);
    } finally {
      await context.close();
      await short.close();
    }
  });

  it('prints the receipt on 58 mm and 80 mm paper: one narrow column, no buttons, nothing cut off', async () => {
    const qr = await createQr(t, merchant, { amount: 1234.5, description: 'Pedido 42: 2 salteñas y 1 api morado con pastel' });
    await pay(t, merchant, qr.id, { account_titular: 'Ana Pérez', account_number: '10000123454321', source_bank: 'Banco Unión' });
    const { page, problems, close } = await openPage(`${t.baseUrl}/pay/${tokenOf(qr)}/receipt`);
    try {
      expect((await page.textContent('[data-field="amount"]'))!.replace(/\u00a0/g, ' ')).toBe('Bs 1.234,50');
      expect(await page.textContent('[data-field="payer-account"]')).toBe('**********4321');
      // The print button calls the browser's print dialog.
      await page.evaluate(() => { (window as unknown as { printed: number }).printed = 0; window.print = () => { (window as unknown as { printed: number }).printed += 1; }; });
      await page.click('#print-button');
      expect(await page.evaluate(() => (window as unknown as { printed: number }).printed)).toBe(1);

      await page.emulateMedia({ media: 'print' });
      for (const [paper, width] of Object.entries(PAPER)) {
        await page.setViewportSize({ width, height: 800 });
        expect(await page.isHidden('#print-button'), paper).toBe(true);
        expect(await page.isHidden('nav.lang'), paper).toBe(true);
        const layout = await page.evaluate(() => ({
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          rightmost: Math.max(...Array.from(document.querySelectorAll('dd, dt, h1, .amount')).map((e) => e.getBoundingClientRect().right)),
          // Each label above its value: one column.
          sideBySide: Array.from(document.querySelectorAll('.receipt dt')).filter((dt) => {
            const dd = dt.nextElementSibling!.getBoundingClientRect();
            return dd.top < dt.getBoundingClientRect().bottom - 1;
          }).length,
        }));
        expect(layout.overflow, paper).toBeLessThanOrEqual(0);
        expect(layout.rightmost, paper).toBeLessThanOrEqual(width);
        expect(layout.sideBySide, paper).toBe(0);
        // Printed on a roll of that width, the receipt is one page.
        const pdf = (await page.pdf({ width: paper, height: '297mm', printBackground: false })).toString('latin1');
        expect(pdf.match(/\/Type\s*\/Page\b/g)?.length, paper).toBe(1);
      }
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
