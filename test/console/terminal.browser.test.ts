// The console's POS terminal in headless Chromium (Debian's /usr/bin/chromium), on a phone held in one hand
// (390 × 844), in Spanish and in English: a cashier's whole sale — keypad taps, the QR screen (its image
// decoded is the QR's payload), the payment through the sandbox API, "Pagado" in place, the receipt, a new
// charge; a network blip while the QR waits (offline for 3 s, paid meanwhile: "Pagado" still comes); a
// cancel. "Guardar QR" on the QR screen: the named PNG downloaded (headless Chromium has no Web Share), or
// shared as a File where the browser can (stubbed; the pay page's own control, test/pages/save-qr.browser.test.ts).
// On every page: axe-core finds no WCAG 2.1 A/AA violation, nothing scrolls sideways at 360 px,
// one h1, no script error, nothing loaded from elsewhere. Runs on PGlite (the HTTP tests cover both databases).
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { clickAndWait, describeInChromium, expectCleanPage, launchChromium, stubWebShare, watchedPhone, type Shared } from '../helpers/browser.ts';
import { decodeQrImage } from '../qr/qr-helpers.ts';
import { newCashier, newOwner } from './helpers.ts';

const LANGS = [
  { lang: 'es', locale: 'es-BO', tag: 'es-BO', paid: 'Pagado', amount: /Bs\s12,50/ },
  { lang: 'en', locale: 'en-US', tag: 'en', paid: 'Paid', amount: /Bs\s12\.50/ },
] as const;

describeInChromium('the console\'s POS terminal in Chromium, in both languages', () => {
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

  /** A signed-in cashier of a new merchant on a phone asking for `locale`, watched for foreign requests and script errors. */
  const cashierPhone = async (locale: string, lang: string) => {
    const merchant = await t.createMerchant({ name: 'Salteñería Doña Rosa, Sucursal Sopocachi' });
    const owner = await newOwner(t, merchant.businessCode, `owner.terminal.${lang}@example.com`);
    const cashier = (await newCashier(owner, t, `cashier.terminal.${lang}@example.com`)).browser;
    return { merchant, ...(await watchedPhone(browser, t.baseUrl, { locale, cookies: cashier.cookies })) };
  };
  const checkPage = (page: Page, lang: string, name: string) => expectCleanPage(page, { lang, name, screenshot: `terminal-${name}` });
  const tap = async (page: Page, keys: string[]) => { for (const key of keys) await page.click(`[data-key="${key}"]`); };
  const submit = clickAndWait;
  const qrIdOf = (url: string) => /\/console\/terminal\/qrs\/([0-9a-f-]{36})/.exec(url)![1]!;
  const payload = async (id: string) => (await t.db.query<{ qr_payload: string; status: string }>('select qr_payload, status from simple_qrs where id = $1', [id])).rows[0]!;
  const pay = async (apiKey: string, id: string) => {
    const paid = await t.request('POST', `/api/v2/sandbox/simple-qrs/${id}/payments`, { apiKey, body: {} });
    expect(paid.status).toBe(201);
  };

  for (const { lang, locale, tag, paid, amount } of LANGS) {
    it(`${lang}: a cashier's sale, a network blip, a cancel; every page clean`, async () => {
      const phone = await cashierPhone(locale, lang);
      const contexts: BrowserContext[] = [phone.context];
      const { page, merchant } = phone;
      try {
        // The keypad: taps fill the amount, the number field is hidden behind the keys.
        await page.goto(`${t.baseUrl}/console/terminal`);
        await checkPage(page, tag, `keypad.${lang}`);
        expect(await page.isVisible('#f-amount')).toBe(false);
        await tap(page, ['1', '2', '5', '0', '0', 'back']);
        expect(await page.textContent('#amount-display')).toMatch(amount);
        const keyBox = (await page.locator('[data-key="5"]').boundingBox())!;
        expect(Math.min(keyBox.width, keyBox.height)).toBeGreaterThanOrEqual(48);
        await page.fill('#f-description', 'Dos salteñas');
        await submit(page, '#charge-button');

        // The QR screen: its image is the QR's payload.
        const id = qrIdOf(page.url());
        await checkPage(page, tag, `qr.${lang}`);
        expect(decodeQrImage((await page.getAttribute('#qr-image', 'src'))!)).toBe((await payload(id)).qr_payload);
        expect(await page.textContent('#qr-amount')).toMatch(amount);
        await page.waitForSelector('#countdown:not([hidden])');
        expect(await page.textContent('#countdown')).toMatch(/^[45]:\d\d$/);

        // Paid through the sandbox API: "Pagado" in place, without a reload.
        await pay(merchant.apiKey, id);
        await page.waitForSelector('#paid:not([hidden])', { timeout: 15_000 });
        expect(await page.textContent('#paid-heading')).toBe(paid);
        expect(await page.textContent('#paid-amount')).toMatch(amount);
        expect(await page.isVisible('#waiting')).toBe(false);
        await checkPage(page, tag, `paid.${lang}`);

        // The receipt, then back, and a new charge.
        await submit(page, '#receipt-link');
        expect(new URL(page.url()).pathname).toMatch(/^\/pay\/[0-9A-Za-z]{22}\/receipt$/);
        expect(await page.textContent('body')).toMatch(amount);
        await page.goBack();
        await page.waitForSelector('#paid:not([hidden])');
        await submit(page, '#new-charge-paid');
        expect(new URL(page.url()).pathname).toBe('/console/terminal');

        // A network blip while the QR waits: offline 3 s, paid meanwhile; back online, "Pagado" still comes.
        await tap(page, ['5', '0', '0']);
        await submit(page, '#charge-button');
        const blipped = qrIdOf(page.url());
        await page.waitForTimeout(500); // the long poll is in flight
        await phone.context.setOffline(true);
        // The poll fails (the one in flight, or the next): the screen says it is retrying, and keeps the QR.
        await page.waitForSelector('#offline:not([hidden])', { timeout: 5_000 });
        expect(await page.isVisible('#qr-image')).toBe(true);
        await pay(merchant.apiKey, blipped);
        await page.waitForTimeout(2_000);
        expect(await page.isVisible('#paid')).toBe(false); // offline: the screen cannot know yet
        await phone.context.setOffline(false);
        await page.waitForSelector('#paid:not([hidden])', { timeout: 30_000 });
        expect(await page.isVisible('#offline')).toBe(false);

        // Cancel: the QR is cancelled and the keypad comes back.
        await submit(page, '#new-charge-paid');
        await tap(page, ['7', '0', '0']);
        await submit(page, '#charge-button');
        const cancelled = qrIdOf(page.url());
        await submit(page, '#cancel-button');
        expect(new URL(page.url()).pathname).toBe('/console/terminal');
        expect((await payload(cancelled)).status).toBe('CANCELED');

        // Today's QRs: the three, each linking to its screen.
        await page.goto(`${t.baseUrl}/console/terminal/today`);
        expect(await page.locator('#today-qrs li').count()).toBe(3);
        await checkPage(page, tag, `today.${lang}`);
        await submit(page, `a[href^="/console/terminal/qrs/${cancelled}"]`);
        await page.waitForSelector('#closed:not([hidden])');
        await checkPage(page, tag, `closed.${lang}`);

        expect(phone.foreign).toEqual([]);
        expect(phone.problems).toEqual([]);
      } finally {
        for (const context of contexts) await context.close();
      }
    }, 120_000);
  }
  it('"Guardar QR" on the QR screen: the named PNG downloaded, or shared where the browser can; gone once paid', async () => {
    const phone = await cashierPhone('es-BO', 'save');
    const { page, context, merchant } = phone;
    const fileName = 'QR-Salteneria-Dona-Rosa-Sucursal-Sopocachi-Bs-12.50.png';
    try {
      await page.goto(`${t.baseUrl}/console/terminal`);
      await tap(page, ['1', '2', '5', '0']);
      await submit(page, '#charge-button');
      const id = qrIdOf(page.url());
      const image = (await page.getAttribute('#qr-image', 'src'))!;
      expect(await page.textContent('#save-qr')).toBe('Guardar QR');
      expect(await page.evaluate(() => 'share' in navigator)).toBe(false);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-qr')]);
      expect(download.suggestedFilename()).toBe(fileName);
      const png = await readFile((await download.path())!);
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(`data:image/png;base64,${png.toString('base64')}`).toBe(image);
      expect(decodeQrImage(image)).toBe((await payload(id)).qr_payload);
      expect(new URL(page.url()).pathname).toBe(`/console/terminal/qrs/${id}`); // still on the QR screen

      // Where the browser can share files: the same PNG as a named File, and no download.
      await context.addInitScript(stubWebShare, null);
      const downloads: unknown[] = [];
      page.on('download', (d) => downloads.push(d));
      await page.reload();
      await page.click('#save-qr');
      await page.waitForFunction(() => (window as unknown as { shared: unknown[] }).shared.length === 1);
      const [shared] = await page.evaluate(() => (window as unknown as { shared: Shared[] }).shared);
      expect(shared).toEqual({ name: fileName, type: 'image/png', count: 1, base64: png.toString('base64') });
      await page.waitForTimeout(300);
      expect(downloads).toEqual([]);

      // Paid: the control goes with the QR.
      await pay(merchant.apiKey, id);
      await page.waitForSelector('#paid:not([hidden])', { timeout: 15_000 });
      expect(await page.isHidden('#save-qr')).toBe(true);
      expect(phone.foreign).toEqual([]);
      expect(phone.problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
