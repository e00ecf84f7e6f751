// The console's transfers over HTTP (docs/console.md#transfers): a transfer typed in the form, reviewed on its
// confirmation (amount, the price plan's fee, the total, the destination masked) and confirmed is made by the
// API's own create — seen through GET /api/v2/transfers and the balance — once for a double submit; cancel;
// refusals (422 fields, INSUFFICIENT_FUNDS, the ACH module off, a suspended business, CSRF) change nothing;
// owners only; another merchant's transfer is not found; the payout schedule the operator sets is shown. On
// PGlite, and on PostgreSQL when TEST_DATABASE_URL is set.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentEncode } from '../fuzz/http.ts';
import { hostileText } from '../fuzz/json-schema-arbitrary.ts';
import { fuzzSettings } from '../fuzz/settings.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay } from '../qr/qr-helpers.ts';
import { ConsoleBrowser, newOwner, ownersAndCashier } from './helpers.ts';

const PAYER = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
const FORM = { amount: '25,50', bank_code: '1003', account_number: '2015-0123455678', account_titular: 'Juan Pérez', reference: 'Alquiler' };
const clean = (text: string) => text.replace(/\u00a0/g, ' ');

describe.each(databaseKinds())('the console\'s transfers on %s', (kind) => {
  let t: TestApp;
  let a: { businessCode: number; apiKey: string };
  let b: { businessCode: number; apiKey: string };
  let ownerA: ConsoleBrowser;
  let ownerB: ConsoleBrowser;
  let cashierA: ConsoleBrowser;

  beforeAll(async () => {
    t = await startTestApp({ kind });
    t.clock.set('2026-11-18T15:00:00.000Z');
    a = await t.createMerchant({ name: 'Ferretería A', ach_enabled: true });
    b = await t.createMerchant({ name: 'Librería B', ach_enabled: true });
    expect((await t.request('PATCH', `/admin/v1/merchants/${a.businessCode}`, { body: { pricing: { transfer_fixed: 2.75 } } })).status).toBe(200);
    for (const merchant of [a, b]) {
      const qr = await createQr(t, merchant, { amount: 500 });
      expect((await pay(t, merchant, qr.id, PAYER)).status).toBe(201);
    }
    ({ ownerA, cashierA, ownerB } = await ownersAndCashier(t, 'transfers', a, b));
  });
  afterAll(() => t?.close());

  const keyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1]!;
  const transfersOf = async (merchant: { apiKey: string }) => (await t.request('GET', '/api/v2/transfers?per_page=100', { apiKey: merchant.apiKey })).body.data as Array<Record<string, any>>;
  const balanceOf = async (merchant: { apiKey: string }) => (await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body as { available: number; pending_out: number };
  const factOf = (html: string, label: string) => {
    const match = new RegExp(`<dt>${label}</dt><dd>([^<]*)</dd>`).exec(html);
    return match ? clean(match[1]!) : null;
  };
  /** Opens the form, posts it for review; the confirmation page. */
  const review = async (browser: ConsoleBrowser, form: Record<string, string> = FORM) => {
    const page = await browser.get('/console/transfers/new');
    expect(page.status).toBe(200);
    return browser.post('/console/transfers/new', { ...form, idempotency_key: keyOf(page.text) });
  };
  /** The confirm form's fields, as the confirmation page holds them. */
  const confirmFields = (html: string) => {
    const form = html.slice(html.indexOf('id="confirm-form"'), html.indexOf('</form>', html.indexOf('id="confirm-form"')));
    return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]));
  };

  it('form → confirmation (amount, the plan\'s fee, the total, the destination masked) → Confirm makes the transfer through the API; a double submit makes one', async () => {
    const before = await balanceOf(a);
    const confirmation = await review(ownerA);
    expect(confirmation.status).toBe(200);
    expect(factOf(confirmation.text, 'Monto')).toBe('Bs 25,50');
    expect(factOf(confirmation.text, 'Comisión')).toBe('Bs 2,75');
    expect(factOf(confirmation.text, 'Total debitado')).toBe('Bs 28,25');
    expect(factOf(confirmation.text, 'Cuenta de destino')).toBe('Banco Bisa · ***********5678 · Juan Pérez');
    expect(await transfersOf(a)).toHaveLength(0); // reviewing makes nothing

    const fields = confirmFields(confirmation.text);
    const first = await ownerA.post('/console/transfers', fields);
    const second = await ownerA.post('/console/transfers', fields);
    expect(first.status).toBe(303);
    expect(second.location).toBe(first.location);
    const both = await Promise.all([ownerA.post('/console/transfers', fields), ownerA.post('/console/transfers', fields)]);
    expect(both.map((r) => r.location)).toEqual([first.location, first.location]);
    const made = await transfersOf(a);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ amount: 25.5, fee: 2.75, status: 'PENDING', origin: 'api', reference: 'Alquiler',
      destination: { bank_code: 1003, account_number: '***********5678', account_titular: 'Juan Pérez' } });
    expect(first.location).toBe(`/console/transfers/${made[0]!.id}`);
    const after = await balanceOf(a);
    expect(Math.round((before.available - after.available) * 100)).toBe(2825);
    expect(Math.round((after.pending_out - before.pending_out) * 100)).toBe(2550);

    const page = await ownerA.get(first.location!);
    expect(page.status).toBe(200);
    expect(factOf(page.text, 'Comisión')).toBe(clean(`Bs ${made[0]!.fee.toFixed(2).replace('.', ',')}`));
    expect(factOf(page.text, 'Estado')).toBe('Pendiente');
    expect(factOf(page.text, 'Hecha por')).toBe('Tú (consola o API)');
    expect(page.text).toContain('id="cancel-button"');
    expect(page.text).not.toContain('20150123455678');
    const list = await ownerA.get('/console/transfers');
    expect(list.text).toContain(`data-transfer="${made[0]!.id}"`);
    expect(clean(list.text)).toContain('Banco Bisa · ***********5678 · Juan Pérez');
  });

  it('"Change the details" brings the form back with what was typed and the same key', async () => {
    const confirmation = await review(ownerA);
    const fields = confirmFields(confirmation.text);
    const edit = await ownerA.post('/console/transfers/new', { ...fields, edit: '1' });
    expect(edit.status).toBe(200);
    expect(edit.text).toContain('id="transfer-form"');
    expect(edit.text).toContain('value="25,50"');
    expect(keyOf(edit.text)).toBe(fields.idempotency_key);
    expect(edit.text).toMatch(/<option value="1003" selected>/);
  });

  it('cancel: a PENDING transfer is CANCELED and its amount and fee come back; a transfer no longer PENDING says why, nothing changes', async () => {
    const confirmation = await review(ownerA, { ...FORM, amount: '10' });
    const made = await ownerA.post('/console/transfers', confirmFields(confirmation.text));
    const id = Number(made.location!.split('/').pop());
    const before = await balanceOf(a);
    await ownerA.get(made.location!);
    const canceled = await ownerA.post(`/console/transfers/${id}/cancel`);
    expect(canceled.status).toBe(303);
    expect(canceled.location).toBe(`/console/transfers/${id}`);
    expect((await t.request('GET', `/api/v2/transfers/${id}`, { apiKey: a.apiKey })).body.status).toBe('CANCELED');
    const after = await balanceOf(a);
    expect(Math.round((after.available - before.available) * 100)).toBe(1275);
    const page = await ownerA.get(`/console/transfers/${id}`);
    expect(page.text).not.toContain('id="cancel-button"');
    expect(page.text).toContain('id="not-cancelable"');
    const again = await ownerA.post(`/console/transfers/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.text).toContain('id="form-alert"');
    expect((await balanceOf(a)).available).toBe(after.available);
  });

  it('refuses bad fields under their inputs (422), a form without its key, and a transfer the balance does not cover (its alert); nothing is made', async () => {
    const count = (await transfersOf(a)).length;
    const balance = await balanceOf(a);
    const cases: Array<[Record<string, string>, string]> = [
      [{ amount: '0' }, 'amount'], [{ amount: '20000.01' }, 'amount'], [{ amount: '1,234' }, 'amount'], [{ amount: 'abc' }, 'amount'],
      [{ bank_code: '' }, 'bank_code'], [{ bank_code: '9999' }, 'bank_code'], [{ bank_code: '<x>' }, 'bank_code'],
      [{ account_number: '' }, 'account_number'], [{ account_number: '12a4' }, 'account_number'], [{ account_number: '1'.repeat(35) }, 'account_number'],
      [{ account_titular: '' }, 'account_titular'], [{ account_titular: 'x'.repeat(101) }, 'account_titular'], [{ account_titular: 'a\u0000b' }, 'account_titular'],
      [{ reference: 'r'.repeat(51) }, 'reference'],
    ];
    for (const [change, field] of cases) {
      const refused = await review(ownerA, { ...FORM, ...change });
      expect(refused.status, JSON.stringify(change)).toBe(422);
      expect(refused.text, JSON.stringify(change)).toContain(`id="f-${field}-error"`);
      expect(refused.text, JSON.stringify(change)).toContain('aria-invalid="true"');
      // Confirm posted with the same bad field is refused the same way.
      const confirmed = await ownerA.post('/console/transfers', { ...FORM, ...change, idempotency_key: crypto.randomUUID() });
      expect(confirmed.status, JSON.stringify(change)).toBe(422);
    }
    for (const key of ['', 'not-a-uuid']) {
      const keyless = await ownerA.post('/console/transfers', { ...FORM, idempotency_key: key });
      expect(keyless.status).toBe(422);
      expect(keyless.text).toContain('id="form-alert"');
    }
    // More than the balance: the form again with its alert (400), the typed values kept, a new key.
    const confirmation = await review(ownerA, { ...FORM, amount: '20000' });
    expect(confirmation.status).toBe(200);
    const fields = confirmFields(confirmation.text);
    const poor = await ownerA.post('/console/transfers', fields);
    expect(poor.status).toBe(400);
    expect(poor.text).toContain('id="form-alert"');
    expect(poor.text).toContain('Tu saldo disponible no alcanza');
    expect(poor.text).toContain('value="20000"');
    expect(keyOf(poor.text)).not.toBe(fields.idempotency_key);
    expect((await transfersOf(a)).length).toBe(count);
    expect(await balanceOf(a)).toEqual(balance);
  });

  it('without the ACH module the page says so (403 MODULE_NOT_ENABLED) and a confirm makes nothing; a suspended business neither', async () => {
    const c = await t.createMerchant({ name: 'Sin ACH' });
    const owner = await newOwner(t, c.businessCode, 'transfers.noach@example.com');
    const page = await owner.get('/console/transfers/new');
    expect(page.status).toBe(403);
    expect(page.text).toContain('module-not-enabled');
    expect(page.text).not.toContain('id="transfer-form"');
    const list = await owner.get('/console/transfers');
    expect(list.status).toBe(200);
    expect(list.text).toContain('id="no-transfers"');
    expect(list.text).not.toContain('id="new-transfer"');
    const confirmed = await owner.post('/console/transfers', { ...FORM, idempotency_key: crypto.randomUUID() });
    expect(confirmed.status).toBe(403);
    expect(await transfersOf(c)).toHaveLength(0);

    const d = await t.createMerchant({ name: 'Suspendida', ach_enabled: true });
    const qr = await createQr(t, d, { amount: 100 });
    expect((await pay(t, d, qr.id, PAYER)).status).toBe(201);
    const ownerD = await newOwner(t, d.businessCode, 'transfers.suspended@example.com');
    await ownerD.get('/console/transfers');
    expect((await t.request('PATCH', `/admin/v1/merchants/${d.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);
    const suspended = await ownerD.post('/console/transfers', { ...FORM, idempotency_key: crypto.randomUUID() });
    expect(suspended.status).toBe(403);
    expect((await t.db.query<{ n: number }>('select count(*)::int as n from transfers where business_code = $1', [d.businessCode])).rows[0]!.n).toBe(0);
  });

  it('a wrong CSRF field is refused (403) on confirm and on cancel; nothing changes', async () => {
    const confirmation = await review(ownerA, { ...FORM, amount: '3' });
    const fields = confirmFields(confirmation.text);
    const count = (await transfersOf(a)).length;
    const forged = await ownerA.postRaw('/console/transfers', { ...fields, csrf_token: 'forged' });
    expect(forged.status).toBe(403);
    expect((await transfersOf(a)).length).toBe(count);
    const made = await ownerA.post('/console/transfers', fields);
    const id = Number(made.location!.split('/').pop());
    const noCancel = await ownerA.postRaw(`/console/transfers/${id}/cancel`, { csrf_token: 'forged' });
    expect(noCancel.status).toBe(403);
    expect((await t.request('GET', `/api/v2/transfers/${id}`, { apiKey: a.apiKey })).body.status).toBe('PENDING');
  });

  it('owners only: a cashier gets 403 on every page and post, nothing made', async () => {
    const count = (await transfersOf(a)).length;
    const id = (await transfersOf(a))[0]!.id;
    for (const path of ['/console/transfers', '/console/transfers/new', `/console/transfers/${id}`]) {
      expect((await cashierA.get(path)).status, path).toBe(403);
    }
    await cashierA.get('/console/terminal');
    expect((await cashierA.post('/console/transfers/new', { ...FORM, idempotency_key: crypto.randomUUID() })).status).toBe(403);
    expect((await cashierA.post('/console/transfers', { ...FORM, idempotency_key: crypto.randomUUID() })).status).toBe(403);
    const pending = (await transfersOf(a)).find((transfer) => transfer.status === 'PENDING')!;
    expect((await cashierA.post(`/console/transfers/${pending.id}/cancel`)).status).toBe(403);
    expect((await transfersOf(a)).length).toBe(count);
    expect((await t.request('GET', `/api/v2/transfers/${pending.id}`, { apiKey: a.apiKey })).body.status).toBe('PENDING');
  });

  it('another merchant\'s transfer is not found (404) on its page and its cancel; an unknown id too; the list is the merchant\'s own', async () => {
    const pending = (await transfersOf(a)).find((transfer) => transfer.status === 'PENDING')!;
    const page = await ownerB.get(`/console/transfers/${pending.id}`);
    expect(page.status).toBe(404);
    expect(page.text).not.toContain('Juan Pérez');
    await ownerB.get('/console/transfers');
    expect((await ownerB.post(`/console/transfers/${pending.id}/cancel`)).status).toBe(404);
    expect((await t.request('GET', `/api/v2/transfers/${pending.id}`, { apiKey: a.apiKey })).body.status).toBe('PENDING');
    expect((await ownerB.get('/console/transfers/999999999')).status).toBe(404);
    expect((await ownerB.get('/console/transfers/abc')).status).toBeLessThan(500);
    expect((await ownerB.get('/console/transfers')).text).not.toContain(`data-transfer="${pending.id}"`);
  });

  it('the list filters by status and pages as the API does', async () => {
    const canceled = await ownerA.get('/console/transfers?status=CANCELED');
    const api = (await t.request('GET', '/api/v2/transfers?status=CANCELED', { apiKey: a.apiKey })).body.data as Array<{ id: number }>;
    expect([...canceled.text.matchAll(/data-transfer="(\d+)"/g)].map((m) => Number(m[1]))).toEqual(api.map((x) => x.id));
    expect(canceled.text).toMatch(/<option value="CANCELED" selected>/);
    expect((await ownerA.get('/console/transfers?status=bogus')).status).toBe(422);
  });

  it('the payout schedule: manual at first; after the operator\'s PUT, weekly with its destination masked, minimum, keep, PAYOUT_TIME and next run; who changes it', async () => {
    const manual = await ownerA.get('/console/transfers');
    expect(manual.text).toContain('id="payout-schedule"');
    expect(factOf(manual.text, 'Cada cuánto')).toBe('Manual: solo las transferencias que tú haces');
    expect(factOf(manual.text, 'Próximo abono')).toBeNull();
    expect(manual.text).toContain('El operador de la plataforma define tus abonos programados');

    const put = await t.request('PUT', `/admin/v1/merchants/${a.businessCode}/payout-schedule`, {
      body: { interval: 'weekly', weekday: 5, minimum: 50, keep: 100, destination: { type: 'bank_account', bank_code: 1007, account_number: '30012345678', account_titular: 'Ferretería A SRL' } },
    });
    expect(put.status).toBe(200);
    const weekly = await ownerA.get('/console/transfers');
    expect(factOf(weekly.text, 'Cada cuánto')).toBe('Cada viernes');
    expect(factOf(weekly.text, 'Se abona a')).toBe(`Banco Unión · ${put.body.destination.account_number} · Ferretería A SRL`);
    expect(weekly.text).not.toContain('30012345678');
    expect(factOf(weekly.text, 'Abono mínimo')).toBe('Bs 50,00');
    expect(factOf(weekly.text, 'Siempre queda en el saldo')).toBe('Bs 100,00');
    expect(factOf(weekly.text, 'Hora del abono')).toBe('18:00');
    // Wednesday 18 November 2026, 11:00 in La Paz: the next Friday is the 20th.
    expect(factOf(weekly.text, 'Próximo abono')).toBe('viernes, 20 de noviembre de 2026, 18:00');
    const english = await ownerA.get('/console/transfers?lang=en');
    expect(factOf(english.text, 'How often')).toBe('Every Friday');
    expect(factOf(english.text, 'Next payout')).toBe('Friday, November 20, 2026, 18:00');
  });
  it('fuzzed forms (hostile text, U+0000, long text, broken encodings in every field) on review and confirm never answer a 5xx; a refusal makes nothing', async () => {
    const broken = (valid: fc.Arbitrary<string>) => fc.oneof(
      valid.map(percentEncode),
      hostileText({ maxLength: 120 }).map(percentEncode),
      fc.tuple(valid, hostileText({ maxLength: 5 })).map(([text, tail]) => percentEncode(`${text}\0${tail}`)),
      fc.integer({ min: 200, max: 3000 }).map((length) => 'x'.repeat(length)),
      fc.constantFrom('', '%', '%G1', '%FF', '%C0%80', '%ED%A0%80', '+', 'a%00b', '%E2%80%AE', '-1', '1e5', 'NaN'),
    );
    const amounts = fc.oneof(fc.integer({ min: -100, max: 3_000_000 }).map((c) => (c / 100).toFixed(2)), fc.constantFrom('12,50', '1.234,50'));
    const fields = fc.record({
      amount: broken(amounts), bank_code: broken(fc.constantFrom('1003', '1014', '0', '99999')), account_number: broken(fc.constantFrom('2015-0123455678', '123')),
      account_titular: broken(fc.string({ maxLength: 20 })), reference: broken(fc.string({ maxLength: 20 })),
      idempotency_key: fc.oneof(fc.uuid({ version: 4 }).map(percentEncode), broken(fc.constant('k'))),
    });
    await ownerA.get('/console/transfers');
    await fc.assert(fc.asyncProperty(fields, fc.constantFrom('/console/transfers/new', '/console/transfers'), async (form, path) => {
      const before = (await transfersOf(a)).length;
      const body = `csrf_token=${encodeURIComponent(ownerA.csrf!)}&${Object.entries(form).map(([name, value]) => `${name}=${value}`).join('&')}`;
      const response = await fetch(`${t.baseUrl}${path}`, {
        method: 'POST', redirect: 'manual', body,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...ownerA.cookies].map(([n, v]) => `${n}=${v}`).join('; ') },
      });
      expect(response.status, body).toBeLessThan(500);
      const after = (await transfersOf(a)).length;
      if (response.status === 303) expect(after - before, body).toBeLessThanOrEqual(1);
      else expect(after, body).toBe(before);
    }), { numRuns: fuzzSettings.runs(30), seed: fuzzSettings.seed });
  }, fuzzSettings.timeoutFor(fuzzSettings.runs(30), 300));

  it('every page is under 50 KB', async () => {
    for (const path of ['/console/transfers', '/console/transfers/new', '/console/movements', '/console/statement']) {
      const page = await ownerA.get(path);
      expect(page.status, path).toBe(200);
      expect(Buffer.byteLength(page.text), path).toBeLessThan(50_000);
    }
  });
});
