// The console's movements and statement over HTTP (docs/console.md#movements-statement-and-transfers): the
// balance and the movements are the API's (GET /api/v2/balance, /balance/movements), a month's statement has
// the numbers of GET /api/v2/balance/statement for the month's days, its CSV download is byte for byte GET
// /api/v2/balance/entries.csv of the same days, a bad month (2025-13, hostile text, a future month, a month
// before the business) is a clear page, never a 5xx; owners only; every read the session's merchant's. On
// PGlite, and on PostgreSQL when TEST_DATABASE_URL is set.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Locale } from '../../src/kernel/i18n/locale.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';
import { ConsoleBrowser, newOwner, ownersAndCashier } from './helpers.ts';

const PAYER = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
const DESTINATION = { type: 'bank_account', bank_code: 1003, account_number: '20150123455678', account_titular: 'Juan Pérez' };
const DAY = 24 * 60 * 60_000;
const es = new Locale('es', false, 'America/La_Paz');
const en = new Locale('en', true, 'America/La_Paz');
const centavosOf = (amount: number) => Math.round(amount * 100);
const clean = (text: string) => text.replace(/\u00a0/g, ' ');

describe.each(databaseKinds())('the console\'s movements and statement on %s', (kind) => {
  let t: TestApp;
  let a: { businessCode: number; apiKey: string };
  let b: { businessCode: number; apiKey: string };
  let ownerA: ConsoleBrowser;
  let ownerB: ConsoleBrowser;
  let cashierA: ConsoleBrowser;
  let transferId: number;

  const payment = async (merchant: { businessCode: number; apiKey: string }, amount: number) => {
    const qr = await createQr(t, merchant, { amount });
    expect((await pay(t, merchant, qr.id, PAYER)).status).toBe(201);
  };

  beforeAll(async () => {
    t = await startTestApp({ kind });
    // The business starts on 5 November 2026 (11:00 in La Paz); money moves that day, on the 12th and on 2 December.
    t.clock.set('2026-11-05T15:00:00.000Z');
    a = await t.createMerchant({ name: 'Almacén Doña Eva', ach_enabled: true });
    b = await t.createMerchant({ name: 'Tienda B' });
    expect((await t.request('PATCH', `/admin/v1/merchants/${a.businessCode}`, { body: { pricing: { qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 1.5 } } })).status).toBe(200);
    await payment(a, 100);
    await payment(b, 10);
    t.clock.advance(7 * DAY);
    await payment(a, 50);
    const transfer = await t.request('POST', '/api/v2/transfers', {
      apiKey: a.apiKey, headers: { 'idempotency-key': randomUUID() },
      body: { business_code: a.businessCode, amount: 20, currency: 'BOB', reference: 'Alquiler', destination: DESTINATION },
    });
    expect(transfer.status).toBe(201);
    transferId = transfer.body.id;
    t.clock.set('2026-12-02T15:00:00.000Z');
    await payment(a, 30);
    ({ ownerA, cashierA, ownerB } = await ownersAndCashier(t, 'money', a, b));
  });
  afterAll(() => t?.close());

  /** The amount shown in `data-<attr>="<name>"` of the element `scope` (an id), as text. */
  const shown = (html: string, attr: string, name: string) => {
    const match = new RegExp(`data-${attr}="${name}"><dt>.*?</dt><dd>([^<]*)</dd>`).exec(html);
    return match ? clean(match[1]!) : null;
  };
  const sectionOf = (html: string, id: string) => {
    const start = html.indexOf(`id="${id}"`);
    expect(start, id).toBeGreaterThan(-1);
    return html.slice(start, html.indexOf('</dl>', start));
  };

  describe('movements', () => {
    it('shows the balance the API answers, then every movement newest first with its type, signed amount, status, date, a payment\'s fee and net, a link to its transfer', async () => {
      const page = await ownerA.get('/console/movements');
      expect(page.status).toBe(200);
      const balance = (await t.request('GET', '/api/v2/balance', { apiKey: a.apiKey })).body;
      expect(shown(page.text, 'figure', 'available')).toBe(clean(es.money(centavosOf(balance.available))));
      expect(shown(page.text, 'figure', 'pending-out')).toBe(clean(es.money(centavosOf(balance.pending_out))));

      const api = (await t.request('GET', '/api/v2/balance/movements?per_page=100', { apiKey: a.apiKey })).body;
      const ids = [...page.text.matchAll(/data-movement="(\d+)"/g)].map((m) => Number(m[1]));
      expect(ids).toEqual(api.data.map((m: { id: number }) => m.id));
      expect(ids.length).toBe(8); // three payments and their fees, the transfer and its fee
      const transferMovement = api.data.find((m: { type: string }) => m.type === 'transfer');
      const row = page.text.slice(page.text.indexOf(`data-movement="${transferMovement.id}"`));
      expect(row).toMatch(/Transferencia al banco<\/strong> · <span data-field="status">Pendiente/);
      expect(clean(row)).toContain('-Bs 20,00');
      expect(row).toContain(`href="/console/transfers/${transferId}"`);
      const firstPayment = api.data.find((m: { type: string }) => m.type === 'payment');
      const paymentRow = clean(page.text.slice(page.text.indexOf(`data-movement="${firstPayment.id}"`)));
      expect(paymentRow).toContain('+Bs 30,00');
      expect(paymentRow).toContain(`Comisión ${clean(es.money(centavosOf(firstPayment.fee)))} · recibes ${clean(es.money(centavosOf(firstPayment.net)))}`);
      // A payment links to its page; so does its fee (the payment the fee's movement names).
      const paymentId = (await t.db.query<{ id: number }>('select id from qr_payments where movement_id = $1', [firstPayment.id])).rows[0]!.id;
      expect(paymentRow.slice(0, paymentRow.indexOf('</li>'))).toContain(`href="/console/payments/${paymentId}"`);
      const fee = api.data.find((m: { type: string; details: { payment_id?: number } }) => m.type === 'fee' && m.details.payment_id === Number(paymentId));
      const feeRow = page.text.slice(page.text.indexOf(`data-movement="${fee.id}"`));
      expect(feeRow.slice(0, feeRow.indexOf('</li>'))).toContain(`href="/console/payments/${paymentId}"`);
    });

    it('filters by type as the API does, and pages with the pager; English too', async () => {
      const fees = await ownerA.get('/console/movements?type=fee');
      expect(fees.status).toBe(200);
      const api = (await t.request('GET', '/api/v2/balance/movements?type=fee', { apiKey: a.apiKey })).body;
      expect([...fees.text.matchAll(/data-movement="(\d+)"/g)].map((m) => Number(m[1]))).toEqual(api.data.map((m: { id: number }) => m.id));
      expect(fees.text).toMatch(/<option value="fee" selected>/);
      expect((await ownerA.get('/console/movements?type=bogus')).status).toBe(422);
      expect((await ownerA.get('/console/movements?page=0')).status).toBe(422);
      const english = await ownerA.get('/console/movements?lang=en');
      expect(english.text).toContain('QR payment');
      expect(english.text).toContain('href="/console/statement?lang=en"');
      // 20 a page: a business with 25 movements has a second page.
      const c = await t.createMerchant({ name: 'Muchos' });
      for (let i = 0; i < 25; i++) await payment(c, 1 + i);
      const owner = await newOwner(t, c.businessCode, 'money.many@example.com');
      const first = await owner.get('/console/movements');
      expect([...first.text.matchAll(/data-movement=/g)].length).toBe(20);
      expect(first.text).toContain('href="/console/movements?page=2"');
      const second = await owner.get('/console/movements?page=2');
      expect([...second.text.matchAll(/data-movement=/g)].length).toBe(5);
    });

    it('another business\'s movements are never shown', async () => {
      const page = await ownerB.get('/console/movements');
      const apiA = (await t.request('GET', '/api/v2/balance/movements', { apiKey: a.apiKey })).body;
      for (const movement of apiA.data) expect(page.text).not.toContain(`data-movement="${movement.id}"`);
      expect([...page.text.matchAll(/data-movement=/g)].length).toBe(1);
    });
  });

  describe('the statement', () => {
    const apiStatement = async (from: string, to: string) => (await t.request('GET', `/api/v2/balance/statement?from=${from}&to=${to}`, { apiKey: a.apiKey })).body;

    it('a past month has the numbers of the API\'s statement for its days: opening, closing, the month\'s totals and each day with activity', async () => {
      const page = await ownerA.get('/console/statement?month=2026-11');
      expect(page.status).toBe(200);
      expect(page.text).toContain('Extracto de noviembre de 2026');
      const api = await apiStatement('2026-11-01', '2026-11-30');
      const month = sectionOf(page.text, 'statement-month');
      expect(shown(month, 'total', 'opening')).toBe(clean(es.money(centavosOf(api.opening_balance))));
      expect(shown(month, 'total', 'closing')).toBe(clean(es.money(centavosOf(api.closing_balance))));
      for (const column of ['payments', 'refunds', 'transfers', 'returns', 'fees']) {
        const total = api.days.reduce((sum: number, day: Record<string, { amount: number }>) => sum + centavosOf(day[column]!.amount), 0);
        const count = api.days.reduce((sum: number, day: Record<string, { count: number }>) => sum + day[column]!.count, 0);
        const text = new RegExp(`data-total="${column}"><dt>[^<]*<span class="hint">\\((\\d+)\\)</span></dt><dd>([^<]*)</dd>`).exec(month);
        if (count === 0) expect(text, column).toBeNull();
        else expect([Number(text![1]), clean(text![2]!)], column).toEqual([count, clean(es.money(total))]);
      }
      // The days with activity, each as the API's day; the others folded, and said so.
      const active = api.days.filter((day: Record<string, { count: number }>) => ['payments', 'refunds', 'transfers', 'returns', 'fees'].some((c) => day[c]!.count > 0));
      expect([...page.text.matchAll(/data-day="([0-9-]+)"/g)].map((m) => m[1])).toEqual(active.map((day: { date: string }) => day.date));
      expect(active.map((day: { date: string }) => day.date)).toEqual(['2026-11-05', '2026-11-12']);
      for (const day of active) {
        const row = page.text.slice(page.text.indexOf(`data-day="${day.date}"`), page.text.indexOf('</li>', page.text.indexOf(`data-day="${day.date}"`)));
        expect(shown(row, 'total', 'opening')).toBe(clean(es.money(centavosOf(day.opening_balance))));
        expect(shown(row, 'total', 'closing')).toBe(clean(es.money(centavosOf(day.closing_balance))));
      }
      expect(page.text).toContain('id="folded"');
      expect(page.text).toContain('href="/console/statement.csv?month=2026-11"');
      // The month picker: from the business's first month to the current one, no later.
      expect([...page.text.matchAll(/<option value="(\d{4}-\d{2})"/g)].map((m) => m[1])).toEqual(['2026-12', '2026-11']);
      expect(page.text).toMatch(/<option value="2026-11" selected>/);
    });

    it('the current month runs to today, and is the page without a month', async () => {
      const page = await ownerA.get('/console/statement');
      expect(page.status).toBe(200);
      const api = await apiStatement('2026-12-01', '2026-12-02');
      expect(shown(sectionOf(page.text, 'statement-month'), 'total', 'opening')).toBe(clean(es.money(centavosOf(api.opening_balance))));
      expect(shown(sectionOf(page.text, 'statement-month'), 'total', 'closing')).toBe(clean(es.money(centavosOf(api.closing_balance))));
      expect(page.text).toContain('href="/console/statement.csv?month=2026-12"');
      const english = await ownerA.get('/console/statement?month=2026-12&lang=en');
      expect(english.text).toContain('Statement for December 2026');
      expect(shown(sectionOf(english.text, 'statement-month'), 'total', 'closing')).toBe(clean(en.money(centavosOf(api.closing_balance))));
      // The language switch keeps the month.
      expect(english.text).toContain('href="/console/statement?month=2026-12&amp;lang=es"');
    });

    it('the CSV download is the bytes of the API\'s entries.csv for the month\'s days, as an attachment named after the business and the month', async () => {
      for (const [month, from, to] of [['2026-11', '2026-11-01', '2026-11-30'], ['2026-12', '2026-12-01', '2026-12-02']] as const) {
        const download = await fetch(`${t.baseUrl}/console/statement.csv?month=${month}`, { headers: { cookie: [...ownerA.cookies].map(([n, v]) => `${n}=${v}`).join('; ') } });
        expect(download.status).toBe(200);
        expect(download.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        expect(download.headers.get('content-disposition')).toBe(`attachment; filename="almacen-dona-eva-${month}.csv"`);
        const bytes = Buffer.from(await download.arrayBuffer());
        const api = await fetch(`${t.baseUrl}/api/v2/balance/entries.csv?from=${from}&to=${to}`, { headers: { 'x-api-key': a.apiKey } });
        expect(api.status).toBe(200);
        expect(bytes.equals(Buffer.from(await api.arrayBuffer()))).toBe(true);
        expect(bytes.toString('utf8').split('\r\n')[0]).toBe('entry_id,posted_at,kind,amount,balance_after,currency,reference,external_reference,counterparty_bank,counterparty_account,counterparty_name,qr_id,payment_id,transfer_id,refund_id,business_date');
      }
    });

    it('a bad month — not a month, hostile text, after the current one, before the business — is a clear page (422), never a 5xx; no CSV either', async () => {
      const cases: Array<[string, RegExp]> = [
        ['2025-13', /Eso no es un mes/], ['2026-00', /Eso no es un mes/], ['abc', /Eso no es un mes/], ['%3Cscript%3Ealert(1)%3C%2Fscript%3E', /Eso no es un mes/],
        ['2026-11-01', /Eso no es un mes/], ['%00', /./], ['9'.repeat(300), /./], ['2027-01', /todavía no llegó/], ['2026-10', /todavía no existía/],
        ['1999-12', /todavía no existía/],
      ];
      for (const [month, message] of cases) {
        const page = await ownerA.get(`/console/statement?month=${month}`);
        expect(page.status, month).toBeGreaterThanOrEqual(400);
        expect(page.status, month).toBeLessThan(500);
        expect(page.text, month).toMatch(message);
        expect(page.text, month).not.toContain('<script>alert');
        const csv = await ownerA.get(`/console/statement.csv?month=${month}`);
        expect(csv.status, month).toBeGreaterThanOrEqual(400);
        expect(csv.status, month).toBeLessThan(500);
        expect(csv.headers.get('content-type'), month).toContain('text/html');
      }
      const future = await ownerA.get('/console/statement?month=2027-01');
      expect(future.status).toBe(422);
      expect(future.text).toContain('id="form-alert"');
      expect(future.text).toContain('id="month-form"');
    });

    it('another business\'s statement is its own', async () => {
      const page = await ownerB.get('/console/statement?month=2026-11');
      const api = (await t.request('GET', '/api/v2/balance/statement?from=2026-11-01&to=2026-11-30', { apiKey: b.apiKey })).body;
      expect(shown(sectionOf(page.text, 'statement-month'), 'total', 'closing')).toBe(clean(es.money(centavosOf(api.closing_balance))));
    });
  });

  it('owners only: a cashier gets 403 on every page and on the CSV; signed out, the sign-in page', async () => {
    for (const path of ['/console/movements', '/console/statement', '/console/statement?month=2026-11', '/console/statement.csv?month=2026-11']) {
      const refused = await cashierA.get(path);
      expect(refused.status, path).toBe(403);
      expect(refused.text, path).not.toContain('entry_id');
      expect((await new ConsoleBrowser(t).get(path)).location, path).toBe('/console/sign-in');
    }
    const home = await cashierA.get('/console');
    expect(home.text).not.toContain('href="/console/movements"');
    const ownerHome = await ownerA.get('/console');
    for (const section of ['/console/movements', '/console/statement', '/console/transfers']) expect(ownerHome.text).toContain(`data-section="${section}"`);
  });
});
