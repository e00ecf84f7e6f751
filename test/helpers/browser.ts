// Headless Chromium for the hosted-page tests: Debian's /usr/bin/chromium driven by playwright-core (no
// browser is ever downloaded), and the screenshots the docs show.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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

/** Phone-sized viewports of the hosted pages' tests: a phone held in one hand, and the narrowest screen the pages must not scroll sideways on. */
export const PHONE = { width: 390, height: 844 };
export const NARROW = { width: 360, height: 740 };

/** A page in a new browser context, with a record of what it should never do: load from another origin, throw a script error. */
export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Requests to any origin but `origin` (data: URLs aside). */
  foreign: string[];
  /** Uncaught script errors. */
  problems: string[];
  /** The status of the last navigation's answer. */
  status(): number;
}

export interface WatchedPageOptions {
  /** The browser's language (Accept-Language and navigator.language), e.g. `es-BO`. */
  locale: string;
  viewport?: { width: number; height: number };
  /** Cookies to start with (a console session signed in over HTTP), as name → value, for `origin`. */
  cookies?: ReadonlyMap<string, string>;
}

/** A phone (touch, mobile) browsing `origin` in `locale`, watched; close its `context` when done. */
export async function watchedPhone(browser: Browser, origin: string, { locale, viewport = PHONE, cookies }: WatchedPageOptions): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, isMobile: true, hasTouch: true, locale });
  if (cookies) await context.addCookies([...cookies].map(([name, value]) => ({ name, value, url: origin })));
  const page = await context.newPage();
  const foreign: string[] = [];
  const problems: string[] = [];
  let status = 0;
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.origin !== new URL(origin).origin) foreign.push(request.url());
  });
  page.on('response', (response) => { if (response.request().isNavigationRequest()) status = response.status(); });
  page.on('pageerror', (error) => problems.push(error.message));
  return { context, page, foreign, problems, status: () => status };
}

/**
 * The checks every hosted page passes in every state: its `lang`, one h1, no WCAG 2.1 A/AA violation that
 * axe-core finds, nothing scrolling sideways at 360 px (the page is put back to its viewport after), and a
 * screenshot `screenshot` for the docs.
 */
export async function expectCleanPage(page: Page, { lang, name, screenshot }: { lang: string; name: string; screenshot: string }): Promise<void> {
  expect(await page.getAttribute('html', 'lang'), name).toBe(lang);
  expect(await page.locator('h1').count(), name).toBe(1);
  const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  expect(axe.violations.map((v) => `${name} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  await writeScreenshot(page, screenshot);
  const viewport = page.viewportSize();
  if (viewport && viewport.width !== NARROW.width) await page.setViewportSize(NARROW);
  expect(await horizontalOverflow(page), `${name} at 360 px`).toBe(0);
  if (viewport && viewport.width !== NARROW.width) await page.setViewportSize(viewport);
}

/** Clicks `selector` and waits for the navigation it starts (a link, a form's button). */
export function clickAndWait(page: Page, selector: string): Promise<unknown> {
  return Promise.all([page.waitForNavigation(), page.click(selector)]);
}

/** A file the stubbed Web Share API was given (stubWebShare): its name, type, how many files, its bytes. */
export interface Shared { name: string; type: string; count: number; base64: string }

/**
 * For `context.addInitScript(stubWebShare, failWith)`: replaces the Web Share API before the page's script runs
 * (headless Chromium has none): canShare says yes to files, share records them in `window.shared` (or fails with
 * the DOMException named `failWith`). The "Guardar QR" tests of the pay page and the terminal use it.
 */
export function stubWebShare(failWith: string | null) {
  const recorder = window as unknown as { shared: unknown[] };
  recorder.shared = [];
  Object.defineProperty(Navigator.prototype, 'canShare', {
    configurable: true, value: (data?: { files?: File[] }) => Array.isArray(data?.files) && data.files.length > 0,
  });
  Object.defineProperty(Navigator.prototype, 'share', {
    configurable: true,
    value: async (data: { files: File[] }) => {
      const file = data.files[0]!;
      const bytes = new Uint8Array(await file.arrayBuffer());
      let binary = '';
      for (const byte of bytes) binary += String.fromCharCode(byte);
      recorder.shared.push({ name: file.name, type: file.type, count: data.files.length, base64: btoa(binary) });
      if (failWith) throw new DOMException('refused', failWith);
    },
  });
}
