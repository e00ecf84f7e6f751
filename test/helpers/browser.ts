// Headless Chromium for the hosted-page tests: Debian's /usr/bin/chromium driven by playwright-core (no
// browser is ever downloaded), and the screenshots the docs show.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { DatabaseKind } from './databases.ts';

const CHROMIUM = '/usr/bin/chromium';
// Without the background-networking flags Chromium keeps dialling Google's hosts, which this network refuses.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SCREENSHOTS = path.resolve('docs/screenshots');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Takes a full-page screenshot of every step (a blank render fails the test). It is written to
 * docs/screenshots/<name>.png only by the PGlite run with UPDATE_SCREENSHOTS=1: tokens and times differ on
 * every run, so writing them always would modify tracked files on each `npm test`.
 *   UPDATE_SCREENSHOTS=1 npx vitest run test/qr/pay-page.browser.test.ts test/onboarding/flow.browser.test.ts
 */
export async function screenshot(page: Page, kind: DatabaseKind, name: string): Promise<void> {
  const image = await page.screenshot({ fullPage: true });
  expect(image.length).toBeGreaterThan(1000);
  if (kind !== 'pglite' || process.env.UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  writeFileSync(path.join(SCREENSHOTS, `${name}.png`), image);
}
