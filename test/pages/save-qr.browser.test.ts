// "Guardar QR" in headless Chromium (docs/qr.md#save-the-qr): without a share sheet the click downloads
// the named PNG, which decodes to the QR's payload; with one (stubbed: headless Chromium has no Web Share,
// so navigator.canShare/share are replaced by recorders — the server stays real) the click shares the same
// PNG as a File and downloads nothing, a failed share falls back to the download, and the link goes with
// the pay section once the QR is paid. The HTTP side: save-qr.test.ts.
import { readFile } from 'node:fs/promises';
import type { Browser, Download, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeInChromium, launchChromium, stubWebShare, type Shared } from '../helpers/browser.ts';
import { createQr, decodeQrImage, pay, type Merchant } from '../qr/qr-helpers.ts';

const tokenOf = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;
const dataUriOf = (bytes: Buffer) => `data:image/png;base64,${bytes.toString('base64')}`;

describeInChromium('"Guardar QR" in Chromium', () => {
  let t: TestApp;
  let merchant: Merchant;
  let browser: Browser;

  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    merchant = await t.createMerchant({ name: 'Tienda Doña Rosa' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** A phone in Spanish on the pay page of a new QR, with the Web Share stub when `share` says how it answers. */
  const onPayPage = async (body: Record<string, unknown>, test: (page: Page, qr: any, downloads: Download[]) => Promise<void>, share?: { failWith: string | null }) => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, locale: 'es-BO', acceptDownloads: true });
    try {
      if (share) await context.addInitScript(stubWebShare, share.failWith);
      const page = await context.newPage();
      const problems: string[] = [];
      const downloads: Download[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('download', (download) => downloads.push(download));
      const qr = await createQr(t, merchant, body);
      await page.goto(`${t.baseUrl}/pay/${tokenOf(qr)}`);
      await test(page, qr, downloads);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  };
  const downloadedPng = async (download: Download) => readFile((await download.path())!);

  it('downloads the QR as a named PNG that decodes to the QR\'s payload', () => onPayPage({ amount: 25.5 }, async (page, qr) => {
    expect(await page.evaluate(() => 'share' in navigator)).toBe(false); // headless Chromium: the download path
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-qr')]);
    expect(download.suggestedFilename()).toBe('QR-Tienda-Dona-Rosa-Bs-25.50.png');
    const png = await downloadedPng(download);
    expect(dataUriOf(png)).toBe(await page.getAttribute('img.qr', 'src'));
    expect(decodeQrImage(dataUriOf(png))).toBe(qr.qr_payload);
  }));

  it('names an open-amount QR by its merchant alone', () => onPayPage({ is_multi_use: true, modify_amount: true, amount: undefined }, async (page) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-qr')]);
    expect(download.suggestedFilename()).toBe('QR-Tienda-Dona-Rosa.png');
  }));

  it('shares the same PNG as a named File where the browser can share files, and downloads nothing', () => onPayPage({ amount: 25.5 }, async (page, qr, downloads) => {
    await page.click('#save-qr');
    await page.waitForFunction(() => (window as unknown as { shared: unknown[] }).shared.length === 1);
    const [shared] = await page.evaluate(() => (window as unknown as { shared: Shared[] }).shared);
    expect(shared).toMatchObject({ name: 'QR-Tienda-Dona-Rosa-Bs-25.50.png', type: 'image/png', count: 1 });
    expect(`data:image/png;base64,${shared!.base64}`).toBe(qr.qr_image);
    expect(decodeQrImage(`data:image/png;base64,${shared!.base64}`)).toBe(qr.qr_payload);
    await page.waitForTimeout(300);
    expect(downloads).toEqual([]);
    expect(page.url()).toBe(`${t.baseUrl}/pay/${tokenOf(qr)}`);
  }, { failWith: null }));

  it('downloads nothing when the payer closes the share sheet, and downloads the PNG when the share fails', async () => {
    await onPayPage({ amount: 7 }, async (page, _qr, downloads) => {
      await page.click('#save-qr');
      await page.waitForFunction(() => (window as unknown as { shared: unknown[] }).shared.length === 1);
      await page.waitForTimeout(300);
      expect(downloads).toEqual([]);
    }, { failWith: 'AbortError' });
    await onPayPage({ amount: 7 }, async (page, qr) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#save-qr')]);
      expect(download.suggestedFilename()).toBe('QR-Tienda-Dona-Rosa-Bs-7.00.png');
      expect(decodeQrImage(dataUriOf(await downloadedPng(download)))).toBe(qr.qr_payload);
    }, { failWith: 'NotAllowedError' });
  });

  it('goes away with the QR once it is paid, without reload', () => onPayPage({ amount: 12 }, async (page, qr) => {
    expect(await page.isVisible('#save-qr')).toBe(true);
    await pay(t, merchant, qr.id);
    await page.waitForSelector('#paid:not([hidden])', { timeout: 5_000 });
    expect(await page.isHidden('#save-qr')).toBe(true);
  }));
});
