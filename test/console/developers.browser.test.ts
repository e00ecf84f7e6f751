// The owner's API keys, webhooks and events pages in headless Chromium, in Spanish and in English, at 360 px:
// create a terminal key and read it once, revoke one after its confirmation; add a webhook endpoint (a refused
// URL first) and read its secret once, rotate it, confirm a delete; the events list, an event with its failed
// attempts, redeliver one, redeliver every failed one. On every page and state: axe-core finds no WCAG 2.1 A/AA
// violation, nothing scrolls sideways, one h1, nothing loads from elsewhere, no script error; screenshots for
// docs/console.md. The pages do not depend on the database kind (their HTTP tests run on both); this runs on PGlite.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { clickAndWait, describeInChromium, expectCleanPage, launchChromium, NARROW, watchedPhone } from '../helpers/browser.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, startReceiver, webhookJobs, type Receiver, type WebhookJobs } from '../webhooks/harness.ts';
import { newOwner } from './helpers.ts';

const LANGS = [{ lang: 'es', locale: 'es-BO', tag: 'es-BO' }, { lang: 'en', locale: 'en-US', tag: 'en' }] as const;
const TOUR_TIMEOUT_MS = 240_000;

describeInChromium('the owner\'s keys, webhooks and events in Chromium, in both languages', () => {
  let t: TestApp;
  let browser: Browser;
  let receiver: Receiver;
  let jobs: WebhookJobs;
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite', plugins: [fixtureRoutes], clock: new TestClock(new Date().toISOString()), env: { WEBHOOK_RETRY_SCHEDULE: '5s', WEBHOOK_TIMEOUT: '300ms' } });
    browser = await launchChromium();
    receiver = await startReceiver();
    jobs = webhookJobs(t);
  });
  afterAll(async () => {
    await jobs?.stop();
    await receiver?.close();
    await browser?.close();
    await t?.close();
  });

  const check = (page: Page, tag: string, name: string) => expectCleanPage(page, { lang: tag, name, screenshot: `console-${name}` });
  const pathOf = (url: string) => { const parsed = new URL(url); return `${parsed.pathname}${parsed.search}`; };

  for (const { lang, locale, tag } of LANGS) {
    it(`${lang}: keys, webhooks and events — every page and state clean at 360 px`, async () => {
      const merchant = await t.createMerchant({ name: 'Salteñería Doña Rosa, Sucursal Sopocachi' });
      const signedIn = await newOwner(t, merchant.businessCode, `devs.owner.${lang}@example.com`);
      const owner = await watchedPhone(browser, t.baseUrl, { locale, viewport: NARROW, cookies: signedIn.cookies });
      try {
        const { page } = owner;
        const go = async (path: string) => {
          await page.goto(`${t.baseUrl}${path}`);
          return owner.status();
        };

        // Keys: the list, a terminal key made and read once, the list again, a revoke confirmed.
        expect(await go('/console/keys')).toBe(200);
        await check(page, tag, `keys.${lang}`);
        await page.check('#f-kind-1');
        await clickAndWait(page, '#new-key-button');
        expect(owner.status()).toBe(201);
        const key = (await page.textContent('#new-key'))!.trim();
        expect(key).toMatch(/^tk_test_[0-9A-Za-z]{32}$/);
        await check(page, tag, `keys-made.${lang}`);
        expect((await t.request('POST', '/api/v2/simple-qrs', { apiKey: key, body: { business_code: merchant.businessCode, amount: 10 } })).status).toBe(201);
        await clickAndWait(page, '#keys-back');
        expect(await page.textContent('#keys')).not.toContain(key);
        await clickAndWait(page, `[data-key="${key.slice(0, 16)}"] a.danger`);
        await check(page, tag, `keys-revoke.${lang}`);
        await clickAndWait(page, '#revoke-button');
        expect(pathOf(page.url())).toBe('/console/keys');
        expect(await page.getAttribute(`[data-key="${key.slice(0, 16)}"] [data-field="state"]`, 'data-state')).toBe('revoked');
        expect((await t.request('GET', '/api/v2/simple-qrs', { apiKey: key })).status).toBe(401);

        // Webhooks: a refused URL, an endpoint that fails (500) and one that is fine, a secret read once, a rotation.
        expect(await go(lang === 'es' ? '/console/webhooks' : '/console/webhooks?lang=en')).toBe(200);
        await check(page, tag, `webhooks.${lang}`);
        await page.fill('#f-url', 'ftp://shop.example.com/hooks');
        await clickAndWait(page, '#new-endpoint-button');
        expect(owner.status()).toBe(422);
        await check(page, tag, `webhooks-refused.${lang}`);
        receiver.answer = (webhook) => (webhook.path.endsWith('/fail') ? 500 : 200);
        await page.fill('#f-url', `${receiver.url}/${lang}/fail`);
        await clickAndWait(page, '#new-endpoint-button');
        expect(owner.status()).toBe(201);
        expect(await page.textContent('#signing-secret')).toMatch(/^whsec_/);
        await check(page, tag, `webhooks-made.${lang}`);
        await clickAndWait(page, '#webhooks-back');
        await page.fill('#f-url', `${receiver.url}/${lang}/ok`);
        await clickAndWait(page, '#new-endpoint-button');
        await clickAndWait(page, '#webhooks-back');
        await check(page, tag, `webhooks-list.${lang}`);
        await clickAndWait(page, '#endpoints li:first-child form[action*="/rotate"] button');
        expect(owner.status()).toBe(200);
        await check(page, tag, `webhooks-rotated.${lang}`);
        await clickAndWait(page, '#webhooks-back');
        await clickAndWait(page, '#endpoints li:first-child a.danger');
        await check(page, tag, `webhooks-delete.${lang}`);

        // Events: two payments, each failed at one endpoint after its retry, delivered at the other.
        await commitPayment(t, merchant);
        await commitPayment(t, merchant);
        await jobs.deliverAll();
        t.clock.advance(5_000);
        await jobs.deliverAll();
        expect(await go(lang === 'es' ? '/console/events' : '/console/events?lang=en')).toBe(200);
        expect(await page.locator('#events li').count()).toBe(2);
        await check(page, tag, `events.${lang}`);
        await clickAndWait(page, '#events li:first-child a');
        expect(await page.locator('#attempts li').count()).toBe(3);
        expect(await page.locator('#deliveries [data-state="failed"]').count()).toBe(1);
        await check(page, tag, `event.${lang}`);
        await clickAndWait(page, '#redeliver-button');
        expect(await page.locator('#done-notice').count()).toBe(1);
        await check(page, tag, `event-redelivered.${lang}`);
        await clickAndWait(page, '#events-back');
        await clickAndWait(page, '#redeliver-failed-button');
        expect(await page.textContent('#done-notice')).toMatch(lang === 'es' ? /eventos: 1; envíos: 1/ : /events: 1; deliveries: 1/);
        await check(page, tag, `events-redelivered.${lang}`);

        expect(owner.foreign).toEqual([]);
        expect(owner.problems).toEqual([]);
      } finally {
        await owner.context.close();
        receiver.answer = () => 200;
      }
    }, TOUR_TIMEOUT_MS);
  }
});
