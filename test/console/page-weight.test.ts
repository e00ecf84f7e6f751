// The console's weight budget (docs/console.md): every page's HTML answer — its inline CSS and script
// included, images not — under 50 KB. An owner and a cashier sign in; every console page the nav and the
// home link to is fetched (so a section added to layout.ts's SECTIONS is measured without touching this
// test), as is the terminal's QR screen and the sign-in page. The merchant has a page of QRs and payments
// first, so the lists are full. A failure names each page over budget and its size; nothing is printed.
// On PGlite only: a page's weight does not depend on the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_PER_PAGE } from '../../src/console/pages/lists.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';
import { ConsoleBrowser, newCashier, newOwner } from './helpers.ts';

const BUDGET_BYTES = 50 * 1024;

describe('the console\'s page weight', () => {
  let t: TestApp;
  let owner: ConsoleBrowser;
  let cashier: ConsoleBrowser;
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    const merchant = await t.createMerchant({ name: 'Salteñería Doña Rosa, Sucursal Sopocachi' });
    for (let i = 0; i < CONSOLE_PER_PAGE + 1; i++) {
      const qr = await createQr(t, merchant, { amount: 10 + i, description: `Salteñas y refrescos, pedido ${i}` });
      if (i % 2 === 0) await pay(t, merchant, qr.id);
    }
    owner = await newOwner(t, merchant.businessCode, 'owner.weight@example.com');
    cashier = (await newCashier(owner, t, 'cashier.weight@example.com')).browser;
  }, 120_000);
  afterAll(() => t?.close());

  /** The console pages `html` links to (GET links only: the sign-out is a form), without their fragments. */
  const consoleLinks = (html: string) => [...html.matchAll(/<a\b[^>]*\shref="([^"]+)"/g)]
    .map((match) => match[1]!.replace(/&amp;/g, '&').split('#')[0]!)
    .filter((href) => href.startsWith('/console') && !href.startsWith('/console/icons/') && !href.includes('manifest'));

  /** Every page linked from `browser`'s home (its nav and its list of sections), and the home, into `sizes` as "role path" → bytes. */
  const crawl = async (browser: ConsoleBrowser, role: string, sizes: Map<string, number>) => {
    const home = await browser.get('/console');
    expect(home.status).toBe(200);
    const pages = new Set(['/console', ...consoleLinks(home.text)]);
    for (const path of pages) {
      const page = path === '/console' ? home : await browser.get(path);
      expect(page.status, path).toBe(200);
      sizes.set(`${role} ${path}`, Buffer.byteLength(page.text));
    }
    return pages;
  };

  it('keeps every page an owner or a cashier can reach under 50 KB of HTML', async () => {
    const sizes = new Map<string, number>();
    const ownerPages = await crawl(owner, 'owner', sizes);
    const cashierPages = await crawl(cashier, 'cashier', sizes);
    // The crawl found the sections: the owner's include the users page and the terminal, the cashier's the terminal.
    expect(ownerPages).toContain('/console/users');
    expect(ownerPages).toContain('/console/terminal');
    expect(cashierPages).toContain('/console/terminal');
    expect(cashierPages).not.toContain('/console/users');

    // The terminal's QR screen, a charge made from the keypad.
    const keypad = await cashier.get('/console/terminal');
    const key = /name="idempotency_key" value="([^"]+)"/.exec(keypad.text)![1]!;
    const charged = await cashier.post('/console/terminal', { amount: '12.50', description: 'Dos salteñas', idempotency_key: key });
    expect(charged.status).toBe(303);
    const qrScreen = await cashier.get(charged.location!);
    expect(qrScreen.status).toBe(200);
    sizes.set(`cashier ${charged.location!}`, Buffer.byteLength(qrScreen.text));

    const signIn = await new ConsoleBrowser(t).get('/console/sign-in');
    sizes.set('/console/sign-in', Buffer.byteLength(signIn.text));

    const over = [...sizes].filter(([, bytes]) => bytes >= BUDGET_BYTES).map(([path, bytes]) => `${path}: ${(bytes / 1024).toFixed(1)} KB`);
    expect(over, 'pages over the 50 KB budget').toEqual([]);
  });
});
