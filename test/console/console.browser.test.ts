// The merchant console in headless Chromium (Debian's /usr/bin/chromium), in Spanish and in English: an
// owner accepts the operator's invitation, signs out and in again, invites a cashier; the cashier accepts and
// cannot open the users page; the refusals (a lockout, a forged CSRF field, another business's payment). On
// every page: axe-core finds no WCAG 2.1 A/AA violation, nothing scrolls sideways at 360 px, one h1, and
// nothing loads from elsewhere. The pages do not depend on the database kind
// (their HTTP tests run on both); this tour runs on PGlite.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { clickAndWait, describeInChromium, expectCleanPage, launchChromium, NARROW, watchedPhone, type WatchedPage } from '../helpers/browser.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';
import { inviteByOperator, newOwner } from './helpers.ts';

const LANGS = [{ lang: 'es', locale: 'es-BO', tag: 'es-BO' }, { lang: 'en', locale: 'en-US', tag: 'en' }] as const;
/** A tour takes ~17 s alone (axe on nine pages); on a loaded machine, several times that. */
const TOUR_TIMEOUT_MS = 180_000;

describeInChromium('the merchant console in Chromium, in both languages', () => {
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

  const phone = (locale: string) => watchedPhone(browser, t.baseUrl, { locale, viewport: NARROW });
  const checkPage = (page: Page, lang: string, name: string) => expectCleanPage(page, { lang, name, screenshot: `console-${name}` });
  const submit = clickAndWait;
  const pathOf = (url: string) => { const parsed = new URL(url); return `${parsed.pathname}${parsed.search}`; };

  for (const { lang, locale, tag } of LANGS) {
    it(`${lang}: an owner accepts, signs in, invites a cashier; the cashier cannot open the users page; every page clean`, async () => {
      const ownerEmail = `owner.${lang}@example.com`;
      const cashierEmail = `cashier.${lang}@example.com`;
      // A business of its own per language: the sessions page lists the business's sessions only.
      const businessCode = (await t.createMerchant({ name: 'Salteñería Doña Rosa, Sucursal Sopocachi' })).businessCode;
      const owner = await phone(locale);
      let cashier: WatchedPage | undefined;
      const contexts: BrowserContext[] = [owner.context];
      try {
        const { page } = owner;
        // The invitation page, with its errors.
        await page.goto(`${t.baseUrl}/console/invitations/${await inviteByOperator(t, businessCode, ownerEmail)}`);
        expect(owner.status()).toBe(200);
        await checkPage(page, tag, `invitation.${lang}`);
        await page.fill('#f-password', 'short');
        await page.fill('#f-password_confirmation', 'short');
        await submit(page, '#invitation-button');
        expect(owner.status()).toBe(422);
        await checkPage(page, tag, `invitation-errors.${lang}`);
        await page.fill('#f-password', 'owner password one');
        await page.fill('#f-password_confirmation', 'owner password one');
        await submit(page, '#invitation-button');
        expect(pathOf(page.url())).toBe('/console');
        expect(await page.textContent('h1')).toBe('Salteñería Doña Rosa, Sucursal Sopocachi');
        expect(await page.textContent('#signed-in-as')).toContain(ownerEmail);
        await checkPage(page, tag, `home-owner.${lang}`);

        // Out, and in again through the sign-in form (a wrong password first).
        await submit(page, '#sign-out-button');
        expect(pathOf(page.url())).toBe('/console/sign-in');
        await checkPage(page, tag, `sign-in.${lang}`);
        await page.fill('#f-email', ownerEmail);
        await page.fill('#f-password', 'not the password');
        await submit(page, '#sign-in-button');
        expect(owner.status()).toBe(401);
        await checkPage(page, tag, `sign-in-refused.${lang}`);
        await page.fill('#f-password', 'owner password one');
        await submit(page, '#sign-in-button');
        expect(pathOf(page.url())).toBe('/console');

        // The users page: invite a cashier, read the link once.
        await submit(page, '[data-section="/console/users"]');
        expect(owner.status()).toBe(200);
        await checkPage(page, tag, `users.${lang}`);
        await page.fill('#f-email', cashierEmail);
        await submit(page, '#invite-button');
        expect(owner.status()).toBe(201);
        await checkPage(page, tag, `users-invited.${lang}`);
        const link = (await page.textContent('#invitation-link'))!.trim();
        expect(link).toMatch(/\/console\/invitations\/[0-9A-Za-z]{43}$/);

        // The cashier, on their own phone.
        cashier = await phone(locale);
        contexts.push(cashier.context);
        await cashier.page.goto(`${t.baseUrl}${pathOf(link)}`);
        await cashier.page.fill('#f-password', 'cashier password one');
        await cashier.page.fill('#f-password_confirmation', 'cashier password one');
        await submit(cashier.page, '#invitation-button');
        expect(pathOf(cashier.page.url())).toBe('/console');
        expect(await cashier.page.locator('[data-section="/console/terminal"]').count()).toBe(1);
        expect(await cashier.page.locator('a[href^="/console/users"]').count()).toBe(0);
        await checkPage(cashier.page, tag, `home-cashier.${lang}`);
        await cashier.page.goto(`${t.baseUrl}/console/users`);
        expect(cashier.status()).toBe(403);
        await checkPage(cashier.page, tag, `forbidden.${lang}`);

        // The owner sees both sessions and the cashier in the list.
        await page.goto(`${t.baseUrl}/console/sessions`);
        expect(await page.locator('#sessions li').count()).toBe(2);
        await checkPage(page, tag, `sessions.${lang}`);
        await page.goto(`${t.baseUrl}/console/users`);
        expect(await page.textContent('#users')).toContain(cashierEmail);

        for (const { foreign, problems } of [owner, cashier]) {
          expect(foreign).toEqual([]);
          expect(problems).toEqual([]);
        }
      } finally {
        for (const context of contexts) await context.close();
      }
    }, TOUR_TIMEOUT_MS);
  }

  it('refusals in the browser: ten wrong passwords lock the account, a form whose CSRF field was tampered with changes nothing, another business\'s payment is not found', async () => {
    const mine = await t.createMerchant({ name: 'Kiosco Propio' });
    const theirs = await t.createMerchant({ name: 'Kiosco Ajeno' });
    const theirPayment = await pay(t, theirs, (await createQr(t, theirs, { amount: 15 })).id, { account_number: '10000123454321', account_titular: 'Ana Pérez' });
    expect(theirPayment.status).toBe(201);
    const owner = await newOwner(t, mine.businessCode, 'refusals.owner@example.com', 'refusals password 1');
    const { context, page, foreign, problems, status } = await phone('es-BO');
    try {
      // The lockout: the tenth wrong password locks, and then even the right one is refused.
      await page.goto(`${t.baseUrl}/console/sign-in`);
      for (let i = 0; i < 10; i++) {
        await page.fill('#f-email', 'refusals.owner@example.com');
        await page.fill('#f-password', `wrong guess ${i}`);
        await submit(page, '#sign-in-button');
      }
      await page.fill('#f-email', 'refusals.owner@example.com');
      await page.fill('#f-password', 'refusals password 1');
      await submit(page, '#sign-in-button');
      expect(pathOf(page.url())).toBe('/console/sign-in');
      expect(await page.textContent('#form-alert')).toContain('esta cuenta está bloqueada');
      await checkPage(page, 'es-BO', 'sign-in-locked.es');

      // Signed in (the owner's session from the invitation), a form whose CSRF field is not this session's.
      await context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: t.baseUrl })));
      await page.goto(`${t.baseUrl}/console/users`);
      const invitations = async () => (await t.db.query<{ n: number }>('select count(*)::int as n from console_invitations')).rows[0]!.n;
      const before = await invitations();
      await page.fill('#f-email', 'tampered@example.com');
      await page.evaluate(() => { document.querySelector<HTMLInputElement>('#invite-form input[name="csrf_token"]')!.value = 'forged'; });
      await submit(page, '#invite-button');
      expect(status()).toBe(403);
      expect(await page.textContent('h1')).toBe('No pudimos verificar este formulario');
      expect(await invitations()).toBe(before);
      await checkPage(page, 'es-BO', 'csrf.es');

      // Another business's payment, by its address: not found, never shown.
      await page.goto(`${t.baseUrl}/console/payments/${theirPayment.body.id}`);
      expect(status()).toBe(404);
      expect(await page.textContent('h1')).toBe('Pago no encontrado');
      expect(await page.content()).not.toContain('Kiosco Ajeno');
      await checkPage(page, 'es-BO', 'not-found.es');
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, TOUR_TIMEOUT_MS);

  it('the language switch keeps the chosen language through sign-in', async () => {
    const { context, page } = await phone('es-BO');
    try {
      await page.goto(`${t.baseUrl}/console/sign-in`);
      expect(await page.textContent('h1')).toBe('Ingresa a la consola de tu negocio');
      await submit(page, 'nav.lang a[hreflang="en"]');
      expect(await page.textContent('h1')).toBe('Sign in to your business console');
      await page.fill('#f-email', 'owner.en@example.com');
      await page.fill('#f-password', 'owner password one');
      await submit(page, '#sign-in-button');
      expect(pathOf(page.url())).toBe('/console?lang=en');
      expect(await page.getAttribute('html', 'lang')).toBe('en');
    } finally {
      await context.close();
    }
  }, TOUR_TIMEOUT_MS);
});
