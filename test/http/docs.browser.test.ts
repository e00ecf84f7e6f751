// /docs (swagger-ui) in headless Chromium (Debian's /usr/bin/chromium): it renders the document under its
// Content-Security-Policy without the browser refusing anything — no CSP error in the console, no
// `securitypolicyviolation` event — on load and with an operation opened, and lists the merchant API
// before the operator API, and names the headers every answer carries once rather than under each response.
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

  it('shows an opened operation without the headers every answer carries under each response: they are said once, in the introduction', async () => {
    const { page, close } = await openDocs();
    try {
      const operation = page.locator('#operations-transfers-post_api_v2_transfers');
      await operation.locator('.opblock-summary').first().click();
      await operation.locator('.responses-table').first().waitFor({ timeout: 20_000 });
      const { height, headerTables, responses } = await operation.evaluate((element) => ({
        height: Math.round(element.getBoundingClientRect().height),
        headerTables: element.querySelectorAll('.headers-wrapper').length,
        responses: element.querySelectorAll('.responses-table tr.response').length,
      }));
      process.stdout.write(`[docs] POST /api/v2/transfers opened: ${height} px, ${responses} responses, ${headerTables} header tables\n`);
      expect(responses).toBeGreaterThanOrEqual(6);
      // The request-id and rate-limit headers every answer carries are said once, in the introduction; a
      // response lists only its own: Idempotent-Replayed (201, 400) and Retry-After (429, 503). They drew
      // 11 tables and 6,272 px here before; 4 tables and 4,074 px after (1280 × 800 viewport).
      expect(headerTables).toBe(4);
      await expect(page.locator('.info .description').textContent()).resolves.toMatch(/Headers on every answer.*X-Request-Id.*RateLimit-Limit/s);
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
