// The hosted onboarding flow in headless Chromium (Debian's /usr/bin/chromium; never downloaded): fill the
// form, pay the activation fee, get the key once, follow success_url; cancel; expiry. Screenshots,
// accessibility and weight of every page: test/pages/hosted-pages.browser.test.ts.
import { sandboxPayer } from '../../src/rails/sandbox/pay-in.ts';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as onboarding from '../../src/onboarding/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeInChromium, launchChromium } from '../helpers/browser.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { newIntent, tokenOf, VALID_FORM, type Partner } from './helpers.ts';

describeInChromium('hosted onboarding flow in Chromium', () => describe.each(databaseKinds())('on %s', (kind) => {
  let t: TestApp;
  let partner: Partner;
  let browser: Browser;
  const open = async (url: string) => {
    // An English-speaking browser (Accept-Language: en-US): the flow follows it on every page and redirect.
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true, hasTouch: true, locale: 'en-US' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => { // 422 (form errors) and 410 (closed links) are answers of the flow, which Chromium logs as failed loads
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text()); });
    page.on('pageerror', (error) => problems.push(error.message));
    const response = await page.goto(url);
    return { page, problems, status: response?.status(), close: () => context.close() };
  };
  const fillForm = async (page: Page, form: Record<string, string>) => {
    for (const [name, value] of Object.entries(form)) {
      if (name === 'bank_code') await page.selectOption('#f-bank_code', value);
      else await page.fill(`#f-${name}`, value);
    }
  };

  beforeAll(async () => {
    t = await startTestApp({ kind });
    partner = await t.createPartner('Partner A');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('fill, pay, get the key once, continue to success_url; the link is dead after', async () => {
    const intent = await newIntent(t, partner, { success_url: `${t.baseUrl}/healthz`, metadata: { customer: 'cus_42' } });
    const { page, problems, status, close } = await open(intent.url.replace(/^http:\/\/localhost:\d+/, t.baseUrl));
    try {
      expect(status).toBe(200);
      expect(await page.textContent('h1')).toBe('Register your business');
      const unlabeled = await page.$$eval('input:not([type="hidden"]), select', (controls) =>
        controls.filter((c) => !document.querySelector(`label[for="${c.id}"]`)).length);
      expect(unlabeled).toBe(0);
      expect(await page.inputValue('#f-city')).toBe('La Paz');

      await page.fill('#f-legal_name', 'Empanadas <Pérez>');
      await page.fill('#f-tax_id', '12-34');
      await Promise.all([page.waitForNavigation(), page.click('#submit-button')]);
      expect(await page.getAttribute('#f-tax_id', 'aria-invalid')).toBe('true');
      expect(await page.textContent('#f-tax_id-error')).toContain('digits only');
      expect(await page.inputValue('#f-legal_name')).toBe('Empanadas <Pérez>');

      await fillForm(page, VALID_FORM);
      await Promise.all([page.waitForNavigation(), page.click('#submit-button')]);
      expect(await page.textContent('h1')).toBe('Activation payment');
      expect((await page.textContent('[data-field="fee"]'))!.replace(/\u00a0/g, ' ')).toBe('Bs 10.00');
      expect(await page.getAttribute('html', 'lang')).toBe('en');
      expect(await page.textContent('[data-field="account"]')).toBe('**********3456');
      expect(await page.$eval('img.qr', (img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);

      await Promise.all([page.waitForURL(/\/done$/), page.click('#simulate-button')]);
      expect(await page.textContent('h1')).toBe('Your merchant account is ready');
      const apiKey = (await page.textContent('#api-key'))!.trim();
      expect(apiKey).toMatch(/^mk_test_[0-9A-Za-z]{32}$/);
      const balance = await t.request('GET', '/api/v2/balance', { apiKey });
      expect(balance.status).toBe(200);
      const read = await t.request('GET', `/api/v2/onboarding/intent/${intent.code}`, { apiKey: partner.masterKey });
      expect(read.body).toMatchObject({ status: 'completed', business_code: balance.body.business_code, metadata: { customer: 'cus_42' } });

      await Promise.all([page.waitForURL(/\/healthz\?code=/), page.click('#continue-link')]);
      expect(new URL(page.url()).searchParams.get('code')).toBe(intent.code);

      const revisit = await page.goto(`${t.baseUrl}/onboarding/${tokenOf(intent)}/done`);
      expect(revisit?.status()).toBe(410);
      expect(await page.textContent('h1')).toBe('This registration link was already used');
      expect((await page.goto(`${t.baseUrl}/onboarding/${tokenOf(intent)}`))?.status()).toBe(410);
      expect(problems, problems.join('\n')).toEqual([]);
    } finally {
      await close();
    }
  });

  it('the payment step moves on by itself when the payment arrives from the payer\'s bank', async () => {
    const intent = await newIntent(t, partner);
    const { page, close } = await open(`${t.baseUrl}/onboarding/${tokenOf(intent)}`);
    try {
      await fillForm(page, { ...VALID_FORM, trade_name: 'Librería Sucre' });
      await Promise.all([page.waitForNavigation(), page.click('#submit-button')]);
      expect(await page.textContent('h1')).toBe('Activation payment');
      const stored = (await onboarding.findIntentByToken(t.db, tokenOf(intent)))!;
      await onboarding.simulateActivationPayment(t.context, sandboxPayer, stored, t.clock.now());
      await page.waitForURL(/\/done$/, { timeout: 8_000 });
      expect(await page.textContent('#api-key')).toMatch(/^mk_test_/);
    } finally {
      await close();
    }
  });

  it('cancel from the payment step goes to cancel_url; the link answers 410 after', async () => {
    const intent = await newIntent(t, partner, { cancel_url: `${t.baseUrl}/healthz?cancelled=1` });
    const { page, close } = await open(`${t.baseUrl}/onboarding/${tokenOf(intent)}`);
    try {
      await fillForm(page, VALID_FORM);
      await Promise.all([page.waitForNavigation(), page.click('#submit-button')]);
      await Promise.all([page.waitForURL(/\/healthz\?cancelled=1$/), page.click('#cancel-button')]);
      const read = await t.request('GET', `/api/v2/onboarding/intent/${intent.code}`, { apiKey: partner.masterKey });
      expect(read.body.status).toBe('cancelled');
      const again = await page.goto(`${t.baseUrl}/onboarding/${tokenOf(intent)}`);
      expect(again?.status()).toBe(410);
      expect(await page.textContent('h1')).toBe('This registration was cancelled');
    } finally {
      await close();
    }
  });

  it('an expired link shows the expiry page (410)', async () => {
    const intent = await newIntent(t, partner);
    t.clock.advance(120 * 60_000);
    const { page, status, close } = await open(`${t.baseUrl}/onboarding/${tokenOf(intent)}`);
    try {
      expect(status).toBe(410);
      expect(await page.textContent('h1')).toBe('This registration link has expired');
    } finally {
      await close();
    }
  });
}));
