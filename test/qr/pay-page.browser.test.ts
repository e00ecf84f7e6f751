// The hosted pay page in headless Chromium (Debian's /usr/bin/chromium; never downloaded): live status
// without reload, the sandbox form, the payment received, and the canceled / expired / unknown pages, on
// both databases. Screenshots, accessibility and weight of every page: test/pages/hosted-pages.browser.test.ts.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeInChromium, launchChromium } from '../helpers/browser.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';

const tokenOf = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;

describeInChromium('hosted pay page in Chromium', () => describe.each(databaseKinds())('on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  let browser: Browser;
  const open = async (url: string) => {
    // A Bolivian payer's phone: Accept-Language es-BO (headless Chromium would say en-US).
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true, locale: 'es-BO' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));
    const response = await page.goto(url);
    return { page, problems, status: response?.status(), close: () => context.close() };
  };

  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant({ name: 'Café Pérez' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the QR and turns into a receipt without reload when the payment arrives', async () => {
    const qr = await createQr(t, merchant, { amount: 150.5, description: 'Order 42 — 2 empanadas, 1 api morado', qr_expiration: '+30m' });
    const { page, problems, status, close } = await open(`${t.baseUrl}/pay/${tokenOf(qr)}`);
    try {
      expect(status).toBe(200);
      await expect.poll(() => page.textContent('#status')).toBe('Esperando el pago');
      expect(await page.getAttribute('html', 'lang')).toBe('es-BO');
      expect(await page.$eval('img.qr', (img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
      expect((await page.getAttribute('img.qr', 'alt'))!.replace(/\u00a0/g, ' ')).toContain('Bs 150,50');
      // every form control has a visible label
      const unlabeled = await page.$$eval('input', (inputs) => inputs.filter((i) => !document.querySelector(`label[for="${i.id}"]`)).length);
      expect(unlabeled).toBe(0);
      await page.evaluate(() => { (window as unknown as { marker: number }).marker = 42; });
      expect((await pay(t, merchant, qr.id, { account_titular: 'Ana Pérez' })).status).toBe(201);
      await page.waitForSelector('#paid:not([hidden])', { timeout: 5_000 });
      expect(await page.textContent('#status')).toBe('Pagado, ¡gracias!');
      expect(await page.title()).toBe('Café Pérez — Pagado, ¡gracias!');
      expect(await page.isHidden('#pay-section')).toBe(true);
      expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42); // no reload
      expect((await page.textContent('[data-field="paid-amount"]'))!.replace(/\u00a0/g, ' ')).toBe('Bs 150,50');
      expect(await page.textContent('[data-field="paid-date"]')).toBe('22 de noviembre de 2026 a las 12:00');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('pays through the sandbox "Simulate payment" form with an editable amount', async () => {
    const qr = await createQr(t, merchant, { modify_amount: true, amount: 20, description: 'Propina / donación' });
    const { page, problems, close } = await open(`${t.baseUrl}/pay/${tokenOf(qr)}`);
    try {
      await page.fill('#sim-source_bank', 'Banco Unión');
      await page.fill('#sim-account_number', '10000123454321');
      await page.fill('#sim-account_titular', 'Ana Pérez');
      await page.fill('#sim-amount', '25,50');
      await Promise.all([page.waitForURL(`${t.baseUrl}/pay/${tokenOf(qr)}`), page.click('button[type="submit"]')]);
      await page.waitForSelector('#paid:not([hidden])');
      expect((await page.textContent('[data-field="paid-amount"]'))!.replace(/\u00a0/g, ' ')).toBe('Bs 25,50');
      const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey });
      expect(payments.body.data[0]).toMatchObject({ amount: 25.5, payer: { source_bank: 'Banco Unión', account_titular: 'Ana Pérez' } });
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows form errors next to their fields', async () => {
    const qr = await createQr(t, merchant, { modify_amount: true, amount: undefined });
    const { page, close } = await open(`${t.baseUrl}/pay/${tokenOf(qr)}`);
    try {
      await page.fill('#sim-account_number', '12ab');
      await page.fill('#sim-amount', '');
      await page.click('button[type="submit"]');
      await page.waitForSelector('#sim-account_number[aria-invalid="true"]');
      expect(await page.textContent('#sim-account_number-error')).toBe('Escribe de 4 a 30 dígitos.');
    } finally {
      await close();
    }
  });

  it('switches to the expired page live when the QR expires while open', async () => {
    const qr = await createQr(t, merchant, { amount: 9.9, description: 'Kiosk 7: water', qr_expiration: '+5m' });
    const { page, close } = await open(`${t.baseUrl}/pay/${tokenOf(qr)}`);
    try {
      await expect.poll(() => page.textContent('#status')).toBe('Esperando el pago');
      t.clock.advance(5 * 60_000);
      await expect.poll(() => page.textContent('#status'), { timeout: 6_000 }).toBe('Este cobro venció');
      expect(await page.isHidden('#pay-section')).toBe(true);
    } finally {
      await close();
    }
  });

  it('shows clear pages for a canceled QR and an unknown token', async () => {
    const qr = await createQr(t, merchant, { amount: 30, description: 'Mesa 4' });
    await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
    const canceled = await open(`${t.baseUrl}/pay/${tokenOf(qr)}`);
    try {
      expect(canceled.status).toBe(200);
      expect(await canceled.page.textContent('#status')).toBe('El comercio anuló este cobro');
      expect(await canceled.page.textContent('[data-field="description"]')).toBe('Mesa 4');
    } finally {
      await canceled.close();
    }
    const unknown = await open(`${t.baseUrl}/pay/AAAAAAAAAAAAAAAAAAAAAA`);
    try {
      expect(unknown.status).toBe(404);
      expect(await unknown.page.textContent('h1')).toBe('No encontramos este cobro');
    } finally {
      await unknown.close();
    }
  });
}));
