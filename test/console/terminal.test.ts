// The console's POS terminal over HTTP (docs/console.md#pos-terminal): a charge typed on the keypad form makes one
// single-use QR with a 5-minute expiry through the API's own create (a double submit of the form makes one),
// for cashiers and owners; CSRF and amount refusals change nothing; the QR screen's status long poll sees the
// sandbox payment; cancel; today's QRs; the web app manifest and icons; and tenancy across two merchants
// (another merchant's QR is not found on the screen, its status and its cancel). On PGlite, and on
// PostgreSQL when TEST_DATABASE_URL is set.
import fc from 'fast-check';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { percentEncode } from '../fuzz/http.ts';
import { hostileText } from '../fuzz/json-schema-arbitrary.ts';
import { fuzzSettings } from '../fuzz/settings.ts';
import { decodeQrImage } from '../qr/qr-helpers.ts';
import { ConsoleBrowser, newOwner, ownersAndCashier } from './helpers.ts';

const MINUTE = 60_000;

describe.each(databaseKinds())('the console\'s POS terminal on %s', (kind) => {
  let t: TestApp;
  let a: { businessCode: number; apiKey: string };
  let b: { businessCode: number; apiKey: string };
  let ownerA: ConsoleBrowser;
  let cashierA: ConsoleBrowser;
  let ownerB: ConsoleBrowser;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    a = await t.createMerchant({ name: 'Café A' });
    b = await t.createMerchant({ name: 'Tienda B' });
    ({ ownerA, cashierA, ownerB } = await ownersAndCashier(t, 'terminal', a, b));
  });
  afterAll(() => t?.close());

  const qrCount = async (businessCode: number) =>
    (await t.db.query<{ n: number }>('select count(*)::int as n from simple_qrs where business_code = $1', [businessCode])).rows[0]!.n;
  const qrRow = async (id: string) =>
    (await t.db.query<{ business_code: number; amount_centavos: number; description: string | null; expires_at: Date; created_at: Date; is_multi_use: boolean; modify_amount: boolean; status: string; qr_payload: string; qr_image: string }>(
      'select business_code, amount_centavos, description, expires_at, created_at, is_multi_use, modify_amount, status, qr_payload, qr_image from simple_qrs where id = $1', [id])).rows[0]!;
  /** The keypad page's idempotency field. */
  const keyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1]!;
  /** Opens the keypad and charges `amount`; the answer of the post. */
  const charge = async (browser: ConsoleBrowser, amount: string, description = '') => {
    const keypad = await browser.get('/console/terminal');
    expect(keypad.status).toBe(200);
    return browser.post('/console/terminal', { amount, description, idempotency_key: keyOf(keypad.text) });
  };
  const qrIdOf = (location: string | null) => /^\/console\/terminal\/qrs\/([0-9a-f-]{36})$/.exec(location ?? '')![1]!;
  const status = async (browser: ConsoleBrowser, id: string, query = '', headers: Record<string, string> = {}) => {
    const response = await browser.send('GET', `/console/terminal/qrs/${id}/status${query}`, undefined, { accept: 'application/json', ...headers });
    return { ...response, json: response.status === 200 ? JSON.parse(response.text) : null };
  };

  describe('the keypad', () => {
    it('is a plain form for cashiers and owners: a number field, an optional description, a fresh idempotency key per page; the console\'s security headers and manifest', async () => {
      for (const browser of [cashierA, ownerA]) {
        const page = await browser.get('/console/terminal');
        expect(page.status).toBe(200);
        expect(page.text).toContain('name="amount"');
        expect(page.text).toContain('type="number"');
        expect(page.text).toContain('name="description"');
        expect(page.text).toMatch(/data-key="00"/);
        expect(keyOf(page.text)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(keyOf((await browser.get('/console/terminal')).text)).not.toBe(keyOf(page.text));
        expect(page.text).toContain('<link rel="manifest" href="/console/manifest.webmanifest">');
        const csp = page.headers.get('content-security-policy')!;
        expect(csp).toContain("script-src 'nonce-");
        expect(csp).toContain("manifest-src 'self'");
        expect(csp).toContain("default-src 'none'");
        expect(page.text).not.toMatch(/\son[a-z]+="/); // no inline handler
      }
    });

    it('the home offers the terminal and today\'s QRs to a cashier and to an owner', async () => {
      for (const browser of [cashierA, ownerA]) {
        const home = await browser.get('/console');
        expect(home.text).toContain('data-section="/console/terminal"');
        expect(home.text).toContain('href="/console/terminal/today"');
      }
      expect((await ownerA.get('/console')).text).toContain('data-section="/console/users"');
    });

    it('asks for a session: signed out, the keypad, the charge and the status go to the sign-in page', async () => {
      const stranger = new ConsoleBrowser(t);
      expect((await stranger.get('/console/terminal')).location).toBe('/console/sign-in');
      expect((await stranger.postRaw('/console/terminal', { amount: '5', idempotency_key: crypto.randomUUID() })).status).toBe(303);
      expect((await stranger.get('/console/terminal/today')).location).toBe('/console/sign-in');
    });
  });

  describe('a charge', () => {
    it('makes one single-use QR of the merchant expiring in 5 minutes, through the API\'s create, and shows its screen', async () => {
      const before = await qrCount(a.businessCode);
      const posted = await charge(cashierA, '12.50', 'Dos salteñas');
      expect(posted.status).toBe(303);
      const id = qrIdOf(posted.location);
      expect(await qrCount(a.businessCode)).toBe(before + 1);
      const row = await qrRow(id);
      expect(row).toMatchObject({ business_code: a.businessCode, amount_centavos: 1250, description: 'Dos salteñas', is_multi_use: false, modify_amount: false, status: 'ACTIVE' });
      expect(row.expires_at.getTime() - t.clock.now().getTime()).toBe(5 * MINUTE);
      // The API sees the same QR, with its event.
      const api = await t.request('GET', `/api/v2/simple-qrs/${id}`, { apiKey: a.apiKey });
      expect(api.body).toMatchObject({ id, status: 'ACTIVE', amount: 12.5, description: 'Dos salteñas' });

      const screen = await cashierA.get(posted.location!);
      expect(screen.status).toBe(200);
      expect(screen.text).toContain(row.qr_image);
      expect(decodeQrImage(row.qr_image)).toBe(row.qr_payload);
      expect(screen.text).toContain('id="countdown"');
      expect(screen.text).toContain('<noscript><meta http-equiv="refresh" content="5"></noscript>');
      expect(screen.text).toContain(`action="/console/terminal/qrs/${id}/cancel"`);
      expect(screen.text).toMatch(/Bs\s12,50/);

      // "Guardar QR": the pay page's own link, the QR's PNG as an attachment named for the business and amount.
      const token = (await t.db.query<{ pay_token: string }>('select pay_token from simple_qrs where id = $1', [id])).rows[0]!.pay_token;
      expect(screen.text).toContain(`id="save-qr" href="/pay/${token}/qr.png?download=1" download="QR-Cafe-A-Bs-12.50.png" type="image/png"`);
      const saved = await fetch(`${t.baseUrl}/pay/${token}/qr.png?download=1`);
      expect(saved.status).toBe(200);
      expect(saved.headers.get('content-disposition')).toContain('filename="QR-Cafe-A-Bs-12.50.png"');
      expect(`data:image/png;base64,${Buffer.from(await saved.arrayBuffer()).toString('base64')}`).toBe(row.qr_image);
    });

    it('an owner charges too; a Spanish amount typed without the keypad (12,50) is read as the pay page reads it', async () => {
      const posted = await charge(ownerA, '12,50');
      expect(posted.status).toBe(303);
      expect((await qrRow(qrIdOf(posted.location))).amount_centavos).toBe(1250);
    });

    it('a double submit of one form makes one QR (one after the other, and both at once)', async () => {
      const keypad = await cashierA.get('/console/terminal');
      const form = { amount: '7.00', description: '', idempotency_key: keyOf(keypad.text) };
      const before = await qrCount(a.businessCode);
      const first = await cashierA.post('/console/terminal', form);
      const second = await cashierA.post('/console/terminal', form);
      expect(first.status).toBe(303);
      expect(second.location).toBe(first.location);
      expect(await qrCount(a.businessCode)).toBe(before + 1);

      const again = await cashierA.get('/console/terminal');
      const racing = { amount: '8.00', description: '', idempotency_key: keyOf(again.text) };
      const both = await Promise.all([cashierA.post('/console/terminal', racing), cashierA.post('/console/terminal', racing)]);
      expect(both.map((r) => r.status)).toEqual([303, 303]);
      expect(both[0]!.location).toBe(both[1]!.location);
      expect(await qrCount(a.businessCode)).toBe(before + 2);

      // The same form sent with another amount is refused (the key was used), with a new key to charge with.
      const reused = await cashierA.post('/console/terminal', { ...form, amount: '9.00' });
      expect(reused.status).toBe(422);
      expect(reused.text).toContain('id="form-alert"');
      expect(keyOf(reused.text)).not.toBe(form.idempotency_key);
      expect(await qrCount(a.businessCode)).toBe(before + 2);
    });

    it('refuses a bad amount, a long description or a form without its key with the form again (422); nothing is made', async () => {
      const before = await qrCount(a.businessCode);
      for (const amount of ['0', '-5', '0.09', '100000.01', '12.345', 'abc', '', '1e3', '５']) {
        const refused = await charge(cashierA, amount);
        expect(refused.status, amount).toBe(422);
        expect(refused.text, amount).toContain('id="f-amount-error"');
        expect(refused.text, amount).toContain('aria-invalid="true"');
      }
      const long = await charge(cashierA, '5', 'x'.repeat(141));
      expect(long.status).toBe(422);
      expect(long.text).toContain('id="f-description-error"');
      await cashierA.get('/console/terminal');
      for (const key of ['', 'not-a-uuid']) {
        const keyless = await cashierA.post('/console/terminal', { amount: '5', idempotency_key: key });
        expect(keyless.status).toBe(422);
        expect(keyless.text).toContain('id="form-alert"');
      }
      expect(await qrCount(a.businessCode)).toBe(before);
      // The bounds themselves are accepted.
      expect((await charge(cashierA, '0.10')).status).toBe(303);
      expect((await charge(cashierA, '100000')).status).toBe(303);
    });

    it('a suspended business cannot charge (its alert, 403); nothing is made', async () => {
      const c = await t.createMerchant({ name: 'Suspendida C' });
      const owner = await newOwner(t, c.businessCode, 'terminal.owner.c@example.com');
      expect((await t.request('PATCH', `/admin/v1/merchants/${c.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);
      const refused = await charge(owner, '5');
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('id="form-alert"');
      expect(await qrCount(c.businessCode)).toBe(0);
    });

    it('fuzzed forms (hostile text, U+0000, long text, broken encodings in every field) never answer a 5xx; a refusal makes nothing', async () => {
      const broken = (valid: fc.Arbitrary<string>) => fc.oneof(
        valid.map(percentEncode),
        hostileText({ maxLength: 200 }).map(percentEncode),
        fc.tuple(valid, hostileText({ maxLength: 5 })).map(([text, tail]) => percentEncode(`${text}\0${tail}`)),
        fc.integer({ min: 200, max: 3000 }).map((length) => 'x'.repeat(length)),
        fc.constantFrom('', '%', '%G1', '%FF', '%C0%80', '%ED%A0%80', '+', '%2B', 'a%00b', '%E2%80%AE', '-1', '1e5', '0x10', 'NaN', 'Infinity'),
      );
      const amounts = fc.oneof(fc.integer({ min: -100, max: 20_000_000 }).map((c) => (c / 100).toFixed(2)), fc.constantFrom('12,50', '1.234,50', '0.1'));
      await fc.assert(fc.asyncProperty(
        broken(amounts), broken(fc.string({ maxLength: 20 })), fc.oneof(fc.uuid({ version: 4 }).map(percentEncode), broken(fc.constant('k'))),
        async (amount, description, key) => {
          await cashierA.get('/console/terminal');
          const before = await qrCount(a.businessCode);
          const body = `csrf_token=${encodeURIComponent(cashierA.csrf!)}&amount=${amount}&description=${description}&idempotency_key=${key}`;
          const response = await fetch(`${t.baseUrl}/console/terminal`, {
            method: 'POST', redirect: 'manual', body,
            headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...cashierA.cookies].map(([n, v]) => `${n}=${v}`).join('; ') },
          });
          expect(response.status, body).toBeLessThan(500);
          expect([303, 400, 413, 422], body).toContain(response.status);
          // A 303 is a charge made, or one replayed (fast-check may draw a key again with the same amount).
          const after = await qrCount(a.businessCode);
          if (response.status === 303) expect(after - before, body).toBeLessThanOrEqual(1);
          else expect(after, body).toBe(before);
        }), { numRuns: fuzzSettings.runs(40), seed: fuzzSettings.seed });
    }, fuzzSettings.timeoutFor(fuzzSettings.runs(40), 300));

    it('refuses a post without the CSRF field or with a wrong one (403): nothing is made', async () => {
      const keypad = await cashierA.get('/console/terminal');
      const before = await qrCount(a.businessCode);
      const form = { amount: '5', idempotency_key: keyOf(keypad.text) };
      for (const csrf of [undefined, 'wrong', cashierA.csrf!.slice(0, -2)]) {
        const refused = await cashierA.postRaw('/console/terminal', csrf === undefined ? form : { ...form, csrf_token: csrf });
        expect(refused.status).toBe(403);
        expect(refused.text).toContain('data-reason="csrf"');
      }
      // Another user's field does not do either.
      await ownerA.get('/console/terminal');
      expect((await cashierA.postRaw('/console/terminal', { ...form, csrf_token: ownerA.csrf! })).status).toBe(403);
      expect(await qrCount(a.businessCode)).toBe(before);
    });
  });

  describe('the QR screen', () => {
    it('the status long poll answers PAID as soon as the sandbox pays, with the receipt of the payment', async () => {
      const id = qrIdOf((await charge(cashierA, '25.00')).location);
      const first = await status(cashierA, id);
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe('no-store');
      expect(first.headers.get('x-content-type-options')).toBe('nosniff');
      expect(first.json).toMatchObject({ status: 'ACTIVE', cancel_reason: null, amount: '25.00', paid_at: null, receipt_path: null });
      const etag = first.headers.get('etag')!;
      expect((await status(cashierA, id, '', { 'if-none-match': etag })).status).toBe(304);

      const started = Date.now();
      const waiting = status(cashierA, id, '?wait=25', { 'if-none-match': etag });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const paid = await t.request('POST', `/api/v2/sandbox/simple-qrs/${id}/payments`, { apiKey: a.apiKey, body: {} });
      expect(paid.status).toBe(201);
      const answer = await waiting;
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({ status: 'PAID', amount: '25.00' });
      expect(answer.json.receipt_path).toMatch(/^\/pay\/[0-9A-Za-z]{22}\/receipt$/);
      const receipt = await cashierA.get(answer.json.receipt_path);
      expect(receipt.status).toBe(200);
      expect(receipt.text).toMatch(/Bs\s25,00/);
      // The screen, read again, is the "Pagado" one.
      const screen = await cashierA.get(`/console/terminal/qrs/${id}`);
      expect(screen.text).toMatch(/<section class="card centered" id="paid" aria-labelledby="paid-heading">/);
      expect(screen.text).toContain(`href="${answer.json.receipt_path}"`);
      expect(screen.text).not.toContain('http-equiv="refresh"');
      // A paid QR cannot be cancelled: the screen comes back.
      const cancel = await cashierA.post(`/console/terminal/qrs/${id}/cancel`);
      expect(cancel.status).toBe(303);
      expect(cancel.location).toBe(`/console/terminal/qrs/${id}`);
      expect((await qrRow(id)).status).toBe('PAID');
    });

    it('refuses a bad wait (422 JSON) and answers a long poll after the expiry as expired', async () => {
      const id = qrIdOf((await charge(cashierA, '3.00')).location);
      expect((await status(cashierA, id, '?wait=0')).status).toBe(422);
      expect((await status(cashierA, id, '?wait=abc')).status).toBe(422);
      t.clock.advance(5 * MINUTE);
      try {
        const expired = await status(cashierA, id, '?wait=1');
        expect(expired.json).toMatchObject({ status: 'CANCELED', cancel_reason: 'expired' });
        expect((await cashierA.get(`/console/terminal/qrs/${id}`)).text).toContain('id="closed" aria-labelledby="closed-heading">');
      } finally {
        t.clock.advance(-5 * MINUTE);
      }
    });

    it('cancel: the QR is CANCELED by the merchant (the API\'s cancel and its event) and the keypad comes back; CSRF checked', async () => {
      const id = qrIdOf((await charge(cashierA, '4.00')).location);
      await cashierA.get(`/console/terminal/qrs/${id}`);
      expect((await cashierA.postRaw(`/console/terminal/qrs/${id}/cancel`, { csrf_token: 'wrong' })).status).toBe(403);
      expect((await qrRow(id)).status).toBe('ACTIVE');
      const canceled = await cashierA.post(`/console/terminal/qrs/${id}/cancel`);
      expect(canceled.status).toBe(303);
      expect(canceled.location).toBe('/console/terminal');
      const api = await t.request('GET', `/api/v2/simple-qrs/${id}`, { apiKey: a.apiKey });
      expect(api.body).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant' });
      expect((await status(cashierA, id)).json).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant' });
    });

    it('another merchant\'s QR is not found: its screen, its status and its cancel (404), and it stays ACTIVE', async () => {
      const id = qrIdOf((await charge(cashierA, '6.00')).location);
      const screen = await ownerB.get(`/console/terminal/qrs/${id}`);
      expect(screen.status).toBe(404);
      expect(screen.text).toContain('data-reason="not-found"');
      expect(screen.text).not.toContain('data:image/png');
      const polled = await status(ownerB, id, '?wait=1');
      expect(polled.status).toBe(404);
      expect(JSON.parse(polled.text)).toMatchObject({ code: 'NOT_FOUND' });
      await ownerB.get('/console/terminal');
      expect((await ownerB.post(`/console/terminal/qrs/${id}/cancel`)).status).toBe(404);
      expect((await qrRow(id)).status).toBe('ACTIVE');
      for (const bad of ['nope', id.toUpperCase().replace(/[0-9]/, 'Z'), '00000000-0000-4000-8000-000000000000']) {
        expect((await cashierA.get(`/console/terminal/qrs/${encodeURIComponent(bad)}`)).status, bad).toBe(404);
      }
      // A QR of the merchant made through the API is its terminal's too.
      const viaApi = await t.request('POST', '/api/v2/simple-qrs', { apiKey: b.apiKey, body: { business_code: b.businessCode, amount: 2 } });
      expect((await ownerB.get(`/console/terminal/qrs/${viaApi.body.id}`)).status).toBe(200);
      expect((await cashierA.get(`/console/terminal/qrs/${viaApi.body.id}`)).status).toBe(404);
    });
  });

  describe('today\'s QRs', () => {
    it('lists the merchant\'s QRs made today in the service\'s time zone, each linking to its screen; not yesterday\'s, not another merchant\'s', async () => {
      // Yesterday's QR, made through the API with the clock a day back.
      t.clock.advance(-24 * 60 * MINUTE);
      let yesterday: string;
      try {
        yesterday = (await t.request('POST', '/api/v2/simple-qrs', { apiKey: b.apiKey, body: { business_code: b.businessCode, amount: 1 } })).body.id;
      } finally {
        t.clock.advance(24 * 60 * MINUTE);
      }
      const today = qrIdOf((await charge(ownerB, '2.00', 'Hoy')).location);
      const ofA = qrIdOf((await charge(cashierA, '2.50')).location);
      const page = await ownerB.get('/console/terminal/today');
      expect(page.status).toBe(200);
      expect(page.text).toContain(`href="/console/terminal/qrs/${today}"`);
      expect(page.text).toContain('Hoy');
      expect(page.text).not.toContain(yesterday);
      expect(page.text).not.toContain(ofA);
    });

    it('a cashier sees today\'s QRs of the business with their status', async () => {
      const id = qrIdOf((await charge(cashierA, '11.00')).location);
      const page = await cashierA.get('/console/terminal/today');
      expect(page.status).toBe(200);
      expect(page.text).toContain(`data-qr="${id}"`);
      expect(page.text).toMatch(/Bs\s11,00/);
      expect(page.text).toContain('data-state="ACTIVE"');
    });
  });

  describe('the installable web app', () => {
    it('serves the manifest and its 192 and 512 px PNG icons without a session and without cookies', async () => {
      const manifest = await fetch(`${t.baseUrl}/console/manifest.webmanifest`, { headers: { 'accept-language': 'es' } });
      expect(manifest.status).toBe(200);
      expect(manifest.headers.get('content-type')).toMatch(/^application\/manifest\+json/);
      expect(manifest.headers.get('x-content-type-options')).toBe('nosniff');
      expect(manifest.headers.get('set-cookie')).toBeNull();
      const body = await manifest.json();
      expect(body).toMatchObject({ start_url: '/console/terminal', display: 'standalone', short_name: 'Cobrar', theme_color: '#0b5cad' });
      expect(body.icons.map((icon: { sizes: string }) => icon.sizes)).toEqual(['192x192', '512x512']);
      for (const icon of body.icons as Array<{ src: string; sizes: string }>) {
        const response = await fetch(t.baseUrl + icon.src);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('image/png');
        const png = PNG.sync.read(Buffer.from(await response.arrayBuffer()));
        expect(`${png.width}x${png.height}`).toBe(icon.sizes);
      }
      expect((await fetch(`${t.baseUrl}/console/manifest.webmanifest`, { headers: { 'accept-language': 'en' } }).then((r) => r.json())).short_name).toBe('Charge');
    });
  });
});
