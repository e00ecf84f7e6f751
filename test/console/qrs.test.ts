// The owner's QR pages over HTTP (docs/console.md#qrs-payments-and-refunds): the list newest first, paged (a second page past 20),
// filtered by status as the API's `?status=` means it and by external reference; a QR's page with its facts and
// payments; its cancel through the API's own (seen through GET /api/v2/simple-qrs/{id}), refused for a paid QR
// with the page saying so; CSRF refusal; a cashier's 403; another merchant's QR not found; hostile queries
// answered with a page, never a 5xx. On PGlite, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { ConsoleBrowser, ownersAndCashier } from './helpers.ts';

const MINUTE = 60_000;

describe.each(databaseKinds())('the console\'s QR pages on %s', (kind) => {
  let t: TestApp;
  let a: { businessCode: number; apiKey: string };
  let b: { businessCode: number; apiKey: string };
  let ownerA: ConsoleBrowser;
  let cashierA: ConsoleBrowser;
  let ownerB: ConsoleBrowser;
  /** QRs of A, oldest first: 22 fixed-amount ones, then one paid, one expired, one with an external reference. */
  const made: string[] = [];
  let paidQr: string;
  let expiredQr: string;
  let orderQr: string;

  const createQr = async (merchant: { businessCode: number; apiKey: string }, body: Record<string, unknown> = {}) => {
    const response = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 10, ...body } });
    expect(response.status).toBe(201);
    t.clock.advance(1000); // distinct creation times: newest first is unambiguous
    return response.body.id as string;
  };
  const apiQr = async (id: string) => (await t.request('GET', `/api/v2/simple-qrs/${id}`, { apiKey: a.apiKey })).body;
  /** A page with its money's no-break spaces as plain ones (Intl writes `Bs\u00a012,50`). */
  const open = async (browser: ConsoleBrowser, path: string) => {
    const response = await browser.get(path);
    return { ...response, text: response.text.replace(/\u00a0/g, ' ') };
  };
  const qrIdsOf = (html: string) => [...html.matchAll(/data-qr="([0-9a-f-]{36})"/g)].map((match) => match[1]!);

  beforeAll(async () => {
    t = await startTestApp({ kind });
    a = await t.createMerchant({ name: 'Café A' });
    b = await t.createMerchant({ name: 'Tienda B' });
    ({ ownerA, cashierA, ownerB } = await ownersAndCashier(t, 'qrs', a, b));
    for (let i = 1; i <= 22; i++) made.push(await createQr(a, { amount: i, description: `Pedido ${i}` }));
    expiredQr = await createQr(a, { amount: 7, qr_expiration: '+5m' });
    paidQr = await createQr(a, { amount: 50, description: 'Torta' });
    const paid = await t.request('POST', `/api/v2/sandbox/simple-qrs/${paidQr}/payments`, { apiKey: a.apiKey, body: { account_number: '10000123454321', account_titular: 'Ana Pérez' } });
    expect(paid.status).toBe(201);
    orderQr = await createQr(a, { amount: 12.5, external_reference: 'ORD-77', is_multi_use: true, max_payments: 3 });
    t.clock.advance(6 * MINUTE); // the +5m QR has expired; the others have no expiry
    await createQr(b, { amount: 99 });
  });
  afterAll(() => t?.close());

  it('lists the merchant\'s QRs newest first, 20 a page, with amount, description, date and status; page 2 has the rest', async () => {
    const first = await open(ownerA, '/console/qrs');
    expect(first.status).toBe(200);
    const ids = qrIdsOf(first.text);
    expect(ids).toHaveLength(20);
    expect(Buffer.byteLength(first.text), 'the page with its CSS under 50 KB').toBeLessThan(50_000);
    expect(ids.slice(0, 3)).toEqual([orderQr, paidQr, expiredQr]);
    expect(first.text).toContain('Pedido 22');
    expect(first.text).toContain('Bs 12,50');
    expect(first.text).toContain('rel="next" href="/console/qrs?page=2"');
    expect(first.text).toContain('Página 1 de 2 (25 en total)');
    expect(first.text).toMatch(new RegExp(`data-qr="${paidQr}"[\\s\\S]*?data-state="PAID"[^>]*>Pagado<`));
    expect(first.text).toMatch(new RegExp(`data-qr="${expiredQr}"[\\s\\S]*?data-state="EXPIRED"[^>]*>Vencido<`));
    expect(first.text).toMatch(new RegExp(`href="/console/qrs/${paidQr}"`));
    const second = await ownerA.get('/console/qrs?page=2');
    expect(second.status).toBe(200);
    expect(qrIdsOf(second.text)).toEqual([made[4], made[3], made[2], made[1], made[0]]);
    expect(second.text).toContain('rel="prev"');
    // The API's list agrees: the same 25, the same order.
    const api = await t.request('GET', '/api/v2/simple-qrs?per_page=100', { apiKey: a.apiKey });
    expect([...ids, ...qrIdsOf(second.text)]).toEqual(api.body.data.map((qr: { id: string }) => qr.id));
    // Another merchant's QR is never listed.
    expect(first.text + second.text).not.toContain('Bs 99,00');
    // Past the last page: an empty page with a way back, not an error.
    const past = await ownerA.get('/console/qrs?page=9');
    expect(past.status).toBe(200);
    expect(past.text).toContain('id="qrs-empty"');
    expect(past.text).toContain('rel="prev" href="/console/qrs?page=2"');
  });

  it('filters by status as the API does (ACTIVE, PAID, CANCELED = cancelled or expired) and by external reference, kept on the page links', async () => {
    const paid = await ownerA.get('/console/qrs?status=PAID');
    expect(qrIdsOf(paid.text)).toEqual([paidQr]);
    expect(paid.text).toMatch(/<option value="PAID" selected>/);
    const canceled = await ownerA.get('/console/qrs?status=CANCELED');
    expect(qrIdsOf(canceled.text)).toEqual([expiredQr]);
    const active = await ownerA.get('/console/qrs?status=ACTIVE');
    expect(qrIdsOf(active.text)).toHaveLength(20);
    expect(active.text).toContain('href="/console/qrs?status=ACTIVE&amp;page=2"');
    const api = await t.request('GET', '/api/v2/simple-qrs?status=ACTIVE&per_page=100', { apiKey: a.apiKey });
    expect(api.body.meta.total).toBe(23);
    expect(active.text).toContain('(23 en total)');
    const byReference = await ownerA.get('/console/qrs?external_reference=ORD-77&status=');
    expect(qrIdsOf(byReference.text)).toEqual([orderQr]);
    expect(byReference.text).toContain('value="ORD-77"');
    const none = await ownerA.get('/console/qrs?external_reference=NOPE&status=PAID');
    expect(none.text).toContain('id="qrs-empty"');
    const english = await ownerA.get('/console/qrs?status=CANCELED&lang=en');
    expect(english.text).toContain('>Expired<');
    expect(english.text).toContain('<input type="hidden" name="lang" value="en">');
  });

  it('shows a QR\'s facts and its payments with fee, net and the payer masked; its payments link to the payment pages', async () => {
    const page = await open(ownerA, `/console/qrs/${paidQr}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 id="qr-heading">QR de Bs 50,00</h1>');
    expect(page.text).toContain('Torta');
    expect(page.text).toContain('Un solo pago');
    expect(page.text).toContain('Bs 50,00 en 1 pago<');
    expect(page.text).toContain('No vence');
    expect(page.text).toMatch(/data-field="pay-link">http[^<]+\/pay\/[^<]+</);
    const [payment] = (await t.request('GET', `/api/v2/simple-qrs/${paidQr}/payments`, { apiKey: a.apiKey })).body.data;
    expect(page.text).toContain(`href="/console/payments/${payment.id}"`);
    expect(page.text).toContain('Ana Pérez · Banco Sandbox · **********4321');
    expect(page.text).not.toContain('10000123454321');
    expect(page.text).toContain('Comisión Bs 0,00 · Neto Bs 50,00 · Devuelto Bs 0,00');
    expect(page.text).not.toContain('id="cancel-form"'); // paid: nothing to cancel
    const order = await open(ownerA, `/console/qrs/${orderQr}?lang=en`);
    expect(order.text).toContain('ORD-77');
    expect(order.text).toContain('Up to 3 payments');
    expect(order.text).toContain('Bs 0.00 in 0 payments<');
    expect(order.text).toContain('No payments on this QR yet.');
    expect(order.text).toContain('id="cancel-form"');
    expect(order.text).toContain('aria-label="Cancel the QR for Bs 12.50"');
  });

  it('cancels an ACTIVE QR through the API\'s cancel (its event): the API reads it CANCELED by the merchant; the page shows it', async () => {
    const id = made[10]!;
    await ownerA.get(`/console/qrs/${id}`);
    const canceled = await ownerA.post(`/console/qrs/${id}/cancel`);
    expect(canceled.status).toBe(303);
    expect(canceled.location).toBe(`/console/qrs/${id}`);
    expect(await apiQr(id)).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant' });
    const { rows } = await t.db.query<{ n: number }>(`select count(*)::int as n from events where type = 'simple_qr.canceled' and data->>'id' = $1`, [id]);
    expect(rows[0]!.n).toBe(1);
    const page = await ownerA.get(`/console/qrs/${id}`);
    expect(page.text).toMatch(/data-state="CANCELED">Cancelado</);
    expect(page.text).not.toContain('id="cancel-form"');
  });

  it('a cancel of a paid or closed QR: the page says so (409) and nothing changes', async () => {
    for (const id of [paidQr, expiredQr, made[10]!]) {
      const before = await apiQr(id);
      await ownerA.get(`/console/qrs/${orderQr}`);
      const refused = await ownerA.post(`/console/qrs/${id}/cancel`);
      expect(refused.status, id).toBe(409);
      expect(refused.text).toContain('id="form-alert"');
      expect(refused.text).toContain('Este QR ya fue pagado o cerrado: no se canceló nada.');
      expect(await apiQr(id)).toEqual(before);
    }
  });

  it('refuses a cancel without the CSRF field or with a wrong one (403); the QR stays ACTIVE', async () => {
    const id = made[11]!;
    await ownerA.get(`/console/qrs/${id}`);
    for (const form of <Record<string, string>[]>[{}, { csrf_token: 'wrong' }, { csrf_token: ownerB.csrf! }]) {
      const refused = await ownerA.postRaw(`/console/qrs/${id}/cancel`, form);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('data-reason="csrf"');
    }
    expect((await apiQr(id)).status).toBe('ACTIVE');
  });

  it('is the owner\'s: a cashier gets 403 on every page and the cancel, and the QR stays ACTIVE; a stranger is sent to sign in', async () => {
    const id = made[12]!;
    for (const path of ['/console/qrs', `/console/qrs/${id}`, '/console/qrs?status=PAID']) {
      const refused = await cashierA.get(path);
      expect(refused.status, path).toBe(403);
      expect(refused.text).toContain('data-reason="forbidden"');
    }
    await cashierA.get('/console/terminal');
    expect((await cashierA.post(`/console/qrs/${id}/cancel`)).status).toBe(403);
    expect((await apiQr(id)).status).toBe('ACTIVE');
    const home = await cashierA.get('/console');
    expect(home.text).not.toContain('href="/console/qrs"');
    const stranger = new ConsoleBrowser(t);
    const away = await stranger.get('/console/qrs');
    expect(away.status).toBe(303);
    expect(away.location).toBe('/console/sign-in');
  });

  it('another merchant\'s QR is not found (404): its page and its cancel; it stays ACTIVE', async () => {
    const id = made[13]!;
    const page = await ownerB.get(`/console/qrs/${id}`);
    expect(page.status).toBe(404);
    expect(page.text).toContain('data-reason="not-found"');
    expect((await ownerB.post(`/console/qrs/${id}/cancel`)).status).toBe(404);
    expect((await apiQr(id)).status).toBe('ACTIVE');
    for (const bad of ['nope', '00000000-0000-4000-8000-000000000000', `${id}x`, 'é', '%00']) {
      const response = await ownerA.get(`/console/qrs/${encodeURIComponent(bad)}`);
      expect(response.status, bad).toBe(404);
    }
  });

  it('answers a hostile query with a page (4xx), never a 5xx', async () => {
    for (const query of ['status=paid', 'status=BOGUS', 'status=%00', 'page=0', 'page=-1', 'page=abc', 'page=99999999999', 'page=1e3',
      'external_reference=%00', `external_reference=${'x'.repeat(65)}`, 'external_reference=a%20b', 'page=1&page=2']) {
      const response = await ownerA.get(`/console/qrs?${query}`);
      expect(response.status, query).toBeGreaterThanOrEqual(400);
      expect(response.status, query).toBeLessThan(500);
      expect(response.headers.get('content-type'), query).toContain('text/html');
    }
    for (const query of ['page=0', 'page=x']) {
      const response = await ownerA.get(`/console/qrs/${paidQr}?${query}`);
      expect(response.status, query).toBe(422);
    }
  });

  it('is listed in the owner\'s nav and home', async () => {
    const home = await ownerA.get('/console');
    expect(home.text).toContain('href="/console/qrs"');
    expect(home.text).toContain('data-section="/console/qrs"');
    const page = await ownerA.get('/console/qrs');
    expect(page.text).toContain('<a href="/console/qrs" aria-current="page">QR</a>');
  });
});
