// The owner's money pages in headless Chromium (Debian's /usr/bin/chromium) at 360 px, in Spanish and in
// English (docs/console.md#movements-statement-and-transfers): movements, a month's statement and its CSV
// download (Playwright's download event; the file's header row is the export's), a bad month, the transfers
// list with the payout schedule, a new transfer with its field errors, its confirmation, the transfer made
// and cancelled, a transfer the balance does not cover, and a business without transfers. On every page and
// state: axe-core finds no WCAG 2.1 A/AA violation, nothing scrolls sideways at 360 px, one h1, no script
// error, nothing loaded from elsewhere. Runs on PGlite (the HTTP tests cover both databases).
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { clickAndWait, describeInChromium, expectCleanPage, launchChromium, NARROW, watchedPhone } from '../helpers/browser.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';
import { newOwner } from './helpers.ts';

const LANGS = [
  { lang: 'es', locale: 'es-BO', tag: 'es-BO', confirm: 'Confirmar y debitar', pending: 'Pendiente', canceled: 'Cancelada' },
  { lang: 'en', locale: 'en-US', tag: 'en', confirm: 'Confirm and debit', pending: 'Pending', canceled: 'Cancelled' },
] as const;
const PAYER = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
const CSV_HEADER = 'entry_id,posted_at,kind,amount,balance_after,currency,reference,external_reference,counterparty_bank,counterparty_account,counterparty_name,qr_id,payment_id,transfer_id,refund_id,business_date';
/** axe on a dozen pages, twice; on a loaded machine, several times the ~30 s it takes alone. */
const TOUR_TIMEOUT_MS = 300_000;

describeInChromium('the owner\'s money pages in Chromium, in both languages', () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    t.clock.set('2026-11-18T15:00:00.000Z');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const checkPage = (page: Page, lang: string, name: string) => expectCleanPage(page, { lang, name, screenshot: `console-${name}` });
  const submit = clickAndWait;

  for (const { lang, locale, tag, confirm, pending, canceled } of LANGS) {
    it(`${lang}: movements, statement and its CSV, a transfer through its confirmation, cancelled; every page and state clean`, async () => {
      const merchant = await t.createMerchant({ name: 'Salteñería Doña Rosa, Sucursal Sopocachi', ach_enabled: true });
      expect((await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { pricing: { qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 1.5 } } })).status).toBe(200);
      for (const amount of [350, 120.5]) {
        const qr = await createQr(t, merchant, { amount, external_reference: `pedido-${amount}` });
        expect((await pay(t, merchant, qr.id, PAYER)).status).toBe(201);
      }
      expect((await t.request('PUT', `/admin/v1/merchants/${merchant.businessCode}/payout-schedule`, {
        body: { interval: 'weekly', weekday: 5, minimum: 50, keep: 100, destination: { type: 'bank_account', bank_code: 1007, account_number: '30012345678', account_titular: 'Rosa Quispe' } },
      })).status).toBe(200);
      const owner = await newOwner(t, merchant.businessCode, `money.browser.${lang}@example.com`);
      const phone = await watchedPhone(browser, t.baseUrl, { locale, viewport: NARROW, cookies: owner.cookies });
      const contexts: BrowserContext[] = [phone.context];
      const { page } = phone;
      try {
        // A transfer through its form, its field errors and its confirmation.
        await page.goto(`${t.baseUrl}/console/transfers`);
        expect(phone.status()).toBe(200);
        await checkPage(page, tag, `transfers.${lang}`);
        await submit(page, '#new-transfer');
        await checkPage(page, tag, `transfer-new.${lang}`);
        await page.fill('#f-amount', '0,01');
        await page.fill('#f-account_number', '12ab');
        await submit(page, '#review-button');
        expect(phone.status()).toBe(422);
        await checkPage(page, tag, `transfer-errors.${lang}`);
        await page.fill('#f-amount', lang === 'es' ? '100,25' : '100.25');
        await page.selectOption('#f-bank_code', '1003');
        await page.fill('#f-account_number', '2015-0123455678');
        await page.fill('#f-account_titular', 'Juan Pérez');
        await page.fill('#f-reference', 'Alquiler noviembre');
        await submit(page, '#review-button');
        expect(phone.status()).toBe(200);
        expect(await page.textContent('#confirm-facts')).toContain('***********5678');
        expect(await page.textContent('#confirm-button')).toContain(confirm);
        await checkPage(page, tag, `transfer-confirm.${lang}`);
        await submit(page, '#confirm-button');
        expect(new URL(page.url()).pathname).toMatch(/^\/console\/transfers\/\d+$/);
        const id = Number(new URL(page.url()).pathname.split('/').pop());
        expect(await page.textContent('#transfer-facts')).toContain(pending);
        await checkPage(page, tag, `transfer.${lang}`);
        const api = (await t.request('GET', `/api/v2/transfers/${id}`, { apiKey: merchant.apiKey })).body;
        expect(api).toMatchObject({ amount: 100.25, fee: 1.5, status: 'PENDING', reference: 'Alquiler noviembre' });
        await submit(page, '#cancel-button');
        expect(await page.textContent('#transfer-facts')).toContain(canceled);
        await checkPage(page, tag, `transfer-canceled.${lang}`);
        expect((await t.request('GET', '/api/v2/transfers', { apiKey: merchant.apiKey })).body.data).toHaveLength(1);

        // More than the balance: the form's alert.
        await page.goto(`${t.baseUrl}/console/transfers/new${lang === 'en' ? '?lang=en' : ''}`);
        await page.fill('#f-amount', '20000');
        await page.selectOption('#f-bank_code', '1003');
        await page.fill('#f-account_number', '2015-0123455678');
        await page.fill('#f-account_titular', 'Juan Pérez');
        await submit(page, '#review-button');
        await submit(page, '#confirm-button');
        expect(phone.status()).toBe(400);
        expect(await page.isVisible('#form-alert')).toBe(true);
        await checkPage(page, tag, `transfer-insufficient.${lang}`);

        // Movements, and the statement with its CSV.
        await page.goto(`${t.baseUrl}/console/movements${lang === 'en' ? '?lang=en' : ''}`);
        expect(await page.locator('[data-movement]').count()).toBe(6); // two payments and their fees, the transfer and its fee (its return is the statement's)
        await checkPage(page, tag, `movements.${lang}`);
        await page.goto(`${t.baseUrl}/console/statement${lang === 'en' ? '?lang=en' : ''}`);
        expect(phone.status()).toBe(200);
        await checkPage(page, tag, `statement.${lang}`);
        const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv-link')]);
        expect(download.suggestedFilename()).toBe('salteneria-dona-rosa-sucursal-sopocachi-2026-11.csv');
        const csv = await readFile((await download.path())!, 'utf8');
        const lines = csv.split('\r\n');
        expect(lines[0]).toBe(CSV_HEADER);
        expect(lines.filter((line) => line !== '').length).toBeGreaterThan(4);
        await page.goto(`${t.baseUrl}/console/statement?month=2027-01${lang === 'en' ? '&lang=en' : ''}`);
        expect(phone.status()).toBe(422);
        await checkPage(page, tag, `statement-refused.${lang}`);

        // A business without the ACH module: the form says so.
        const other = await t.createMerchant({ name: 'Kiosco sin transferencias' });
        const otherOwner = await newOwner(t, other.businessCode, `money.browser.noach.${lang}@example.com`);
        const noAch = await watchedPhone(browser, t.baseUrl, { locale, viewport: NARROW, cookies: otherOwner.cookies });
        contexts.push(noAch.context);
        await noAch.page.goto(`${t.baseUrl}/console/transfers`);
        expect(await noAch.page.isVisible('#no-transfers')).toBe(true);
        await checkPage(noAch.page, tag, `transfers-no-module.${lang}`);
        await noAch.page.goto(`${t.baseUrl}/console/transfers/new`);
        expect(noAch.status()).toBe(403);
        await checkPage(noAch.page, tag, `transfer-no-module.${lang}`);
        expect(noAch.foreign).toEqual([]);
        expect(noAch.problems).toEqual([]);

        expect(phone.foreign).toEqual([]);
        expect(phone.problems).toEqual([]);
      } finally {
        for (const context of contexts) await context.close();
      }
    }, TOUR_TIMEOUT_MS);
  }
});
