// Headless Chromium for the hosted-page tests: Debian's /usr/bin/chromium driven by playwright-core (no
// browser is ever downloaded), and the screenshots the docs show.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { CHROMIUM, hasChromium } from './chromium.ts';

// Without the background-networking flags Chromium keeps dialling Google's hosts, which this network refuses.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SCREENSHOTS = path.resolve('docs/screenshots');

/**
 * `describe` for suites that drive the browser: without Chromium (global-setup fails the run in CI) their tests are reported as skipped (and
 * the run ends with a notice), so `npm test` on a machine without it still says what it did not test.
 */
export function describeInChromium(name: string, suite: () => void): void {
  (hasChromium() ? describe : describe.skip)(name, suite);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Takes a full-page screenshot (a blank render fails the test) and writes it to
 * docs/screenshots/<name>.png only when UPDATE_SCREENSHOTS=1: tokens and times differ on every run, so
 * writing them always would modify tracked files on each `npm test`.
 *   UPDATE_SCREENSHOTS=1 npx vitest run test/pages/hosted-pages.browser.test.ts
 */
export async function writeScreenshot(page: Page, name: string): Promise<void> {
  const image = await page.screenshot({ fullPage: true });
  expect(image.length).toBeGreaterThan(1000);
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  writeFileSync(path.join(SCREENSHOTS, `${name}.png`), image);
}

/** How far the page reaches past the right edge of the viewport (0: no sideways scrolling). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth));
}
