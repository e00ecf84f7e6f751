// /docs (swagger-ui) in headless Chromium (Debian's /usr/bin/chromium): it renders the document under its
// Content-Security-Policy without the browser refusing anything — no CSP error in the console, no
// `securitypolicyviolation` event — on load and with an operation opened, and lists the merchant API
// before the operator API.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeInChromium, launchChromium } from '../helpers/browser.ts';

describeInChromium('/docs in a browser', () => {
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

  /** Opens /docs and collects what the browser refused: console errors about the policy and violation events. */
  async function openDocs(): Promise<{ page: Page; refused: string[]; close: () => Promise<void> }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy|Content-Security-Policy/i.test(message.text())) refused.push(message.text());
    });
    page.on('pageerror', (error) => refused.push(`page error: ${error.message}`));
    await page.exposeFunction('reportViolation', (text: string) => refused.push(text));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        (window as unknown as { reportViolation(text: string): void }).reportViolation(
          `violation of ${event.effectiveDirective}: ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
      });
    });
    const response = await page.goto(`${t.baseUrl}/docs`, { waitUntil: 'networkidle' });
    expect(response?.status()).toBe(200);
    // A real policy, not a disabled one: nothing inline but what it names by hash.
    const policy = await response?.headerValue('content-security-policy');
    expect(policy).toMatch(/script-src 'self' ?;/);
    expect(policy).not.toContain('unsafe-inline');
    await page.waitForSelector('.opblock-tag', { timeout: 20_000 });
    return { page, refused, close: () => context.close() };
  }

  it('renders with nothing refused by its Content-Security-Policy, also once an operation is opened', async () => {
    const { page, refused, close } = await openDocs();
    try {
      await page.locator('#operations-transfers-post_api_v2_transfers .opblock-summary').first().click();
      await page.locator('#operations-transfers-post_api_v2_transfers .responses-table').first().waitFor({ timeout: 20_000 });
      await page.waitForLoadState('networkidle');
      expect(refused).toEqual([]);
    } finally {
      await close();
    }
  });

  it('lists the merchant API first and the operator API last', async () => {
    const { page, close } = await openDocs();
    try {
      const tags = await page.locator('.opblock-tag').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-tag')));
      expect(tags[0]).toBe('balance');
      expect(tags.slice(-2)).toEqual(['operations', 'operator']);
    } finally {
      await close();
    }
  });
});
