import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FullAccountNumber } from '../../src/masking.ts';
import { centavos } from '../../src/money.ts';
import { receivePayment } from '../../src/qr/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';

const tokenOf = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;
/** Intl separates `Bs` from the amount with a no-break space. */
const normalizeSpaces = (text: string) => text.replace(/\u00a0/g, ' ');
/** The wall clock of `instant` in La Paz (UTC-4 all year), as `HH:MM`. */
const laPazTime = (instant: Date) => new Date(instant.getTime() - 4 * 3_600_000).toISOString().slice(11, 16);

describe.each(databaseKinds())('hosted pay page over HTTP on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant({ name: 'Café <Pérez>' });
  });
  afterAll(() => t.close());

  // No Accept-Language: the pages speak their default, Spanish (Bolivia).
  const page = (token: string, headers: Record<string, string> = {}) => t.request('GET', `/pay/${token}`, { headers: { accept: 'text/html', ...headers } });
  // fetch directly, so the 303 is seen rather than followed
  const postForm = async (token: string, fields: Record<string, string>, options: { query?: string; cookie?: string } = {}) => {
    const response = await fetch(`${t.baseUrl}/pay/${token}${options.query ?? ''}`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(options.cookie ? { cookie: options.cookie } : {}) },
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };

  it('shows merchant, description, amount and the QR image, escaped, with security headers', async () => {
    const qr = await createQr(t, merchant, { amount: 150.5, description: '<script>alert(1)</script> Order 42' });
    const response = await page(tokenOf(qr));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.text).toContain('Café &lt;Pérez&gt;');
    expect(response.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Order 42');
    expect(response.text).not.toContain('<script>alert(1)');
    expect(normalizeSpaces(response.text)).toContain('Bs 150,50');
    expect(response.text).toContain(qr.qr_image);
    expect(response.text).toContain('Simular pago');
    expect(response.text).toContain('<html lang="es-BO">');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('answers a 404 page for an unknown token', async () => {
    for (const token of ['AAAAAAAAAAAAAAAAAAAAAA', 'short', 'x'.repeat(100)]) {
      const response = await page(token);
      expect(response.status).toBe(404);
      expect(response.text).toContain('No encontramos este cobro');
    }
  });

  it('exposes a public status without payer details, with ETag and 304', async () => {
    const qr = await createQr(t, merchant, { amount: 5 });
    const first = await t.request('GET', `/pay/${tokenOf(qr)}/status`);
    expect(first.body).toEqual({ status: 'ACTIVE', cancel_reason: null, amount: '5.00', expires_at: null, paid_at: null, paid_at_local: null });
    const etag = first.headers.get('etag')!;
    expect((await t.request('GET', `/pay/${tokenOf(qr)}/status`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    await pay(t, merchant, qr.id, { account_titular: 'Secret Name', account_number: '99998888777766' });
    const paid = await t.request('GET', `/pay/${tokenOf(qr)}/status`, { headers: { 'if-none-match': etag } });
    expect(paid.status).toBe(200);
    expect(paid.body).toEqual({
      status: 'PAID', cancel_reason: null, amount: '5.00', expires_at: null, paid_at: '2026-11-22T16:00:00.000Z', paid_at_local: '2026-11-22 12:00:00',
    });
    expect(paid.text).not.toContain('Secret Name');
    expect(paid.text).not.toContain('7766');
    expect((await t.request('GET', '/pay/AAAAAAAAAAAAAAAAAAAAAA/status')).status).toBe(404);
    expect((await t.request('GET', `/pay/${tokenOf(qr)}/status?x=1`)).status).toBe(422);
  });

  it('starts the sandbox form with the payer the API pays with when a field is left out, the same name in both languages', async () => {
    const qr = await createQr(t, merchant, { amount: 4 });
    for (const token of [tokenOf(qr), `${tokenOf(qr)}?lang=en`]) {
      const html = (await page(token)).text;
      expect(html, token).toContain('name="account_titular" value="Sandbox Payer"');
      expect(html, token).toContain('name="source_bank" value="Banco Sandbox"');
    }
    const paid = await pay(t, merchant, qr.id, {});
    expect(paid.status).toBe(201);
    expect(paid.text).toContain('"account_titular":"Sandbox Payer"');
  });

  it('shows no payment feed of a multi-use QR: no count, no amounts, no ids, however many payers paid', async () => {
    const qr = await createQr(t, merchant, { is_multi_use: true, modify_amount: true, amount: 10, qr_expiration: '+1h' });
    const before = (await t.request('GET', `/pay/${tokenOf(qr)}/status`)).headers.get('etag')!;
    await pay(t, merchant, qr.id, { amount: 7 });
    await pay(t, merchant, qr.id, { amount: 33.3 });
    // Not even the ETag moves: a poller holding the old tag learns nothing of the payments.
    const unchanged = await t.request('GET', `/pay/${tokenOf(qr)}/status`, { headers: { 'if-none-match': before } });
    expect(unchanged.status).toBe(304);
    const status = await t.request('GET', `/pay/${tokenOf(qr)}/status`);
    expect(status.body).toEqual({
      status: 'ACTIVE', cancel_reason: null, amount: '10.00', expires_at: '2026-11-22T17:00:00.000Z', paid_at: null, paid_at_local: null,
    });
    const html = (await page(tokenOf(qr))).text;
    expect(html).not.toContain('33,30');
    expect(html).not.toContain('33.30');
    expect(html).toMatch(/id="paid"[^>]* hidden/);
  });

  it('refuses payment on a suspended merchant\'s QR (409, form error) and moves no money', async () => {
    const suspended = await t.createMerchant({ name: 'Tienda Suspendida' });
    const qr = await createQr(t, suspended, { amount: 9 });
    expect((await t.request('PATCH', `/admin/v1/merchants/${suspended.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);
    const response = await postForm(tokenOf(qr), { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' });
    expect(response.status).toBe(409);
    expect(response.text).toContain('Este QR ya no acepta pagos.');
    expect((await t.request('PATCH', `/admin/v1/merchants/${suspended.businessCode}`, { body: { status: 'active' } })).status).toBe(200);
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: suspended.apiKey });
    expect(read.body).toMatchObject({ status: 'ACTIVE', payments_count: 0 });
    const balance = await t.request('GET', '/api/v2/balance', { apiKey: suspended.apiKey });
    expect(balance.body.available).toBe(0);
  });

  it('pays through the sandbox form and redirects to the receipt', async () => {
    const qr = await createQr(t, merchant, { amount: 12 });
    const response = await postForm(tokenOf(qr), { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/pay/${tokenOf(qr)}`);
    const paidPage = await page(tokenOf(qr));
    expect(paidPage.text).toContain('Pagado, ¡gracias!');
    expect(paidPage.text).toMatch(/id="paid"[^>]*>/);
    expect(paidPage.text).not.toMatch(/id="paid"[^>]* hidden/);
    expect(paidPage.text).toContain(`href="/pay/${tokenOf(qr)}/receipt"`);
    const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey });
    expect(payments.body.data[0].payer).toEqual({ source_bank: 'Banco Unión', account_number: '**********4321', account_titular: 'Ana Pérez' });
    const again = await postForm(tokenOf(qr), { source_bank: 'B', account_number: '1234', account_titular: 'X' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('Este QR ya no acepta pagos.');
  });

  it('shows form errors with 422 and moves nothing', async () => {
    const qr = await createQr(t, merchant, { modify_amount: true, amount: undefined });
    const response = await postForm(tokenOf(qr), { source_bank: '', account_number: '12x', account_titular: 'Ana', amount: '1.234' });
    expect(response.status).toBe(422);
    expect(response.text).toContain('aria-invalid="true"');
    expect(response.text).toContain('Escribe de 4 a 30 dígitos.');
    expect(response.text).toContain('Escribe el banco del pagador');
    expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.payments_count).toBe(0);
    const missingAmount = await postForm(tokenOf(qr), { source_bank: 'B', account_number: '1234', account_titular: 'Ana', amount: '' });
    expect(missingAmount.status).toBe(422);
  });

  it('shows a clear page for canceled and expired QRs that still says what they were for', async () => {
    const canceled = await createQr(t, merchant, { description: 'Mesa 4' });
    await t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
    const canceledPage = await page(tokenOf(canceled));
    expect(canceledPage.status).toBe(200);
    expect(canceledPage.text).toContain('El comercio anuló este cobro');
    expect(canceledPage.text).toContain('Mesa 4');
    const expiring = await createQr(t, merchant, { description: 'Kiosk', qr_expiration: '+5m' });
    t.clock.advance(5 * 60_000);
    const expiredPage = await page(tokenOf(expiring));
    expect(expiredPage.status).toBe(200);
    expect(expiredPage.text).toContain('Este cobro venció');
    expect(expiredPage.text).toContain('Venció el 22 de noviembre de 2026 a las 12:05.');
    expect(expiredPage.text).toContain('Kiosk');
  });

  it('has no simulate form and no form endpoint in live mode', async () => {
    const live = await startLiveApp({ kind, database: t.database });
    try {
      const m = await live.createMerchant();
      const qr = await createQr(live, m);
      expect(qr.rail).toBe('baneco'); // a live QR is the bank's (here its simulator's)
      const response = await live.request('GET', `/pay/${tokenOf(qr)}`);
      expect(response.status).toBe(200);
      expect(response.text).not.toContain('Simular pago');
      expect(response.text).not.toContain('id="simulate"');
      const post = await live.request('POST', `/pay/${tokenOf(qr)}`, { rawBody: 'source_bank=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(post.status).toBe(404);
    } finally {
      await live.close();
    }
  });

  it('speaks Spanish by default, English by ?lang=en or Accept-Language, and says which', async () => {
    const qr = await createQr(t, merchant, { amount: 1234.5, qr_expiration: '+30m' });
    const deadline = laPazTime(new Date(qr.expires_at));
    const spanish = await page(tokenOf(qr));
    expect(spanish.headers.get('content-language')).toBe('es-BO');
    expect(spanish.headers.get('vary')).toContain('Accept-Language');
    expect(normalizeSpaces(spanish.text)).toContain('Bs 1.234,50');
    // A time in words, in SERVICE_TIMEZONE (12:00 La Paz + 30 min), never a zone identifier.
    expect(spanish.text).toContain(`Paga antes de las ${deadline}`);
    expect(spanish.text.replace(/<script[^]*<\/script>/, '')).not.toContain('America/La_Paz'); // the script formats in it; no text names it
    expect(spanish.text).toContain(`href="/pay/${tokenOf(qr)}?lang=en"`);
    for (const english of [await page(`${tokenOf(qr)}?lang=en`), await page(tokenOf(qr), { 'accept-language': 'en-US,en;q=0.9,es;q=0.5' })]) {
      expect(english.headers.get('content-language')).toBe('en');
      expect(english.text).toContain('<html lang="en">');
      expect(normalizeSpaces(english.text)).toContain('Bs 1,234.50');
      const hour = Number(deadline.slice(0, 2));
      expect(english.text).toContain(`Pay by ${hour % 12 === 0 ? 12 : hour % 12}:${deadline.slice(3)} ${hour < 12 ? 'AM' : 'PM'}`);
      expect(english.text).toContain('Waiting for payment');
      expect(english.text).toContain(`href="/pay/${tokenOf(qr)}?lang=es"`);
    }
    // ?lang= wins over the browser; an unknown language or a hostile value falls back to the browser's.
    expect((await page(`${tokenOf(qr)}?lang=es`, { 'accept-language': 'en' })).headers.get('content-language')).toBe('es-BO');
    expect((await page(`${tokenOf(qr)}?lang=fr`, { 'accept-language': 'en' })).headers.get('content-language')).toBe('en');
    expect((await page(`${tokenOf(qr)}?lang=en&lang=es`)).status).toBe(200);
    expect((await page(tokenOf(qr), { 'accept-language': 'fr-FR, de;q=0.8' })).headers.get('content-language')).toBe('es-BO');
    expect((await page(tokenOf(qr), { 'accept-language': 'es-AR;q=0.2, en;q=0.1' })).headers.get('content-language')).toBe('es-BO');
  });

  it('reads a Spanish amount with a decimal comma, keeps ?lang= through the form, and answers in English with ?lang=en', async () => {
    const qr = await createQr(t, merchant, { modify_amount: true, is_multi_use: true, amount: undefined, min_amount: 5, max_amount: 2000 });
    const payer = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
    expect((await postForm(tokenOf(qr), { ...payer, amount: '25,50' })).status).toBe(303);
    expect((await postForm(tokenOf(qr), { ...payer, amount: '1.234,50' })).status).toBe(303);
    const english = await postForm(tokenOf(qr), { ...payer, amount: '1,000.25' }, { query: '?lang=en' });
    expect(english.status).toBe(303);
    expect(english.headers.get('location')).toBe(`/pay/${tokenOf(qr)}?lang=en`);
    const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey });
    expect(payments.body.data.map((p: { amount: number }) => p.amount).sort((a: number, b: number) => a - b)).toEqual([25.5, 1000.25, 1234.5]);
    const tooSmall = await postForm(tokenOf(qr), { ...payer, amount: '4,99' });
    expect(tooSmall.status).toBe(422);
    expect(normalizeSpaces(tooSmall.text)).toContain('El monto mínimo es Bs 5,00.');
    const englishErrors = await postForm(tokenOf(qr), { ...payer, account_number: '12x', amount: '3000' }, { query: '?lang=en' });
    expect(englishErrors.status).toBe(422);
    expect(englishErrors.text).toContain('Enter 4 to 30 digits.');
    expect(englishErrors.text).toContain('action="?lang=en"');
    expect(englishErrors.text).toContain(`href="/pay/${tokenOf(qr)}?lang=es"`); // the switch reads the page again, never re-posts
    expect(englishErrors.text).toMatch(/id="sim-account_number"[^>]* autofocus/);
    // An emptied amount is an error, not the suggestion paid silently.
    const emptied = await postForm(tokenOf(qr), { ...payer, amount: '' });
    expect(emptied.status).toBe(422);
    // A thousands group never starts with 0: "0.500" is not 500.
    expect((await postForm(tokenOf(qr), { ...payer, amount: '0.500' })).status).toBe(422);
    const tooLarge = await postForm(tokenOf(qr), { ...payer, amount: '3000' }, { query: '?lang=en' });
    expect(normalizeSpaces(tooLarge.text)).toContain('The amount can be at most Bs 2,000.00.');
  });

  it('prints the receipt of a single-use QR once paid: merchant, amount, date, masked account, reference', async () => {
    const qr = await createQr(t, merchant, { amount: 75, description: 'Pedido 7' });
    const before = await t.request('GET', `/pay/${tokenOf(qr)}/receipt`);
    expect(before.status).toBe(404);
    expect(before.text).toContain('Este cobro todavía no fue pagado.');
    const canceled = await createQr(t, merchant, { amount: 5 });
    await t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
    expect((await t.request('GET', `/pay/${tokenOf(canceled)}/receipt`)).text).toContain('Este cobro no fue pagado.');
    const paid = await pay(t, merchant, qr.id, { account_number: '20000111122223333', source_bank: 'Banco Sol' });
    const receipt = await t.request('GET', `/pay/${tokenOf(qr)}/receipt`);
    expect(receipt.status).toBe(200);
    expect(receipt.headers.get('cache-control')).toBe('no-store');
    const text = normalizeSpaces(receipt.text);
    expect(text).toContain('Comprobante de pago');
    expect(text).toContain('Café &lt;Pérez&gt;, La Paz');
    expect(text).toContain('Bs 75,00');
    expect(text).toContain('22 de noviembre de 2026');
    expect(text).toContain(`>${laPazTime(new Date(paid.body.paid_at))}<`);
    expect(text).not.toContain('Banco Sol'); // the link may be shared: no payer's bank or name
    expect(text).toContain('*************3333');
    expect(text).not.toContain('20000111122223333');
    // The reference the payer can quote: with no bank id (the sandbox), the single-use QR's id, never the payment's sequential id.
    expect(text).toContain(`data-field="reference">${qr.id}<`);
    expect(text).not.toContain(`>${paid.body.id}<`);
    expect(text).toContain('Pedido 7');
    const english = await t.request('GET', `/pay/${tokenOf(qr)}/receipt?lang=en`);
    expect(normalizeSpaces(english.text)).toContain('Bs 75.00');
    expect(english.text).toContain('November 22, 2026');
    expect(english.text).toMatch(/>\d{1,2}:\d\d PM</);
    expect((await t.request('GET', '/pay/AAAAAAAAAAAAAAAAAAAAAA/receipt')).status).toBe(404);
  });

  it('gives a bank\'s payment the bank\'s transaction id as the receipt\'s reference', async () => {
    const qr = await createQr(t, merchant, { amount: 25 });
    const { payment } = await receivePayment(t.context, {
      qrId: qr.id, businessCode: null, amountCentavos: centavos(2_500), rail: 'baneco', railReference: 'BNE-20261122-000042', paidAt: null,
      payer: { sourceBank: 'Banco Unión', accountNumber: new FullAccountNumber('20000123451913'), accountTitular: 'Ana Pérez' },
    }, t.clock.now());
    const receipt = await t.request('GET', `/pay/${tokenOf(qr)}/receipt`);
    expect(receipt.status).toBe(200);
    expect(receipt.text).toContain('data-field="reference">BNE-20261122-000042<');
    expect(receipt.text).not.toContain(`>${payment.id}<`);
  });

  it('shows a multi-use QR\'s receipt only to the browser that made the payment', async () => {
    const qr = await createQr(t, merchant, { is_multi_use: true, modify_amount: true, amount: undefined });
    const payer = { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' };
    const mine = await postForm(tokenOf(qr), { ...payer, amount: '11' });
    expect(mine.status).toBe(303);
    const setCookie = mine.headers.get('set-cookie')!;
    expect(setCookie).toMatch(new RegExp(`^mps_receipt=[0-9A-Za-z]{32}; Path=/pay/${tokenOf(qr)}; Max-Age=\\d+; HttpOnly; SameSite=Lax$`));
    const cookie = setCookie.split(';')[0]!;
    // Someone else pays, by the form (another browser) and from a bank's app.
    const theirs = await postForm(tokenOf(qr), { ...payer, amount: '99' });
    await pay(t, merchant, qr.id, { amount: 55 });
    const receipt = await t.request('GET', `/pay/${tokenOf(qr)}/receipt`, { headers: { cookie } });
    expect(receipt.status).toBe(200);
    expect(normalizeSpaces(receipt.text)).toContain('Bs 11,00');
    // A multi-use QR's reference: its id and the payment's paid_at as the API writes it, which finds the payment among the QR's.
    const payments = (await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey })).body.data;
    const own = payments.find((payment: { amount: number }) => payment.amount === 11);
    expect(receipt.text).toContain(`data-field="reference">${qr.id} / ${own.paid_at}<`);
    expect(receipt.text).not.toContain(`>${own.id}<`);
    expect(receipt.text).not.toContain('99,00');
    // The pay page shows this browser its own payment, never the others.
    const ownPage = normalizeSpaces((await page(tokenOf(qr), { cookie })).text);
    expect(ownPage).toContain('Bs 11,00');
    expect(ownPage).not.toContain('99,00');
    expect(ownPage).not.toContain('55,00');
    // The same browser pays again: a new key, and its receipt shows its latest payment.
    const again = await postForm(tokenOf(qr), { ...payer, amount: '12' }, { cookie });
    const latest = again.headers.get('set-cookie')!.split(';')[0]!;
    expect(latest).not.toBe(cookie);
    expect(normalizeSpaces((await t.request('GET', `/pay/${tokenOf(qr)}/receipt`, { headers: { cookie: latest } })).text)).toContain('Bs 12,00');
    // Without the cookie, with another browser's, or with a forged one: no receipt.
    for (const other of [undefined, theirs.headers.get('set-cookie')!.split(';')[0]!, 'mps_receipt=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'mps_receipt=../../x']) {
      const response = await t.request('GET', `/pay/${tokenOf(qr)}/receipt`, { headers: other ? { cookie: other } : {} });
      if (other === theirs.headers.get('set-cookie')!.split(';')[0]) {
        expect(normalizeSpaces(response.text)).toContain('Bs 99,00');
        expect(response.text).not.toContain('11,00');
        continue;
      }
      expect(response.status).toBe(404);
      expect(response.text).toContain('solo se ve en el navegador con el que se pagó');
    }
  });

  it('answers a refused request to a hosted page with a page in the visitor\'s language, keeping status and headers', async () => {
    const qr = await createQr(t, merchant, { amount: 5 });
    const json = await t.request('POST', `/pay/${tokenOf(qr)}`, { body: { source_bank: 'B' } });
    expect(json.status).toBe(415);
    expect(json.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(json.text).toContain('No pudimos leer esta solicitud');
    expect(json.headers.get('content-security-policy')).toContain("default-src 'none'");
    const english = await t.request('POST', `/pay/${tokenOf(qr)}?lang=en`, { rawBody: 'x='.padEnd(9000, 'y'), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(english.status).toBe(413);
    expect(english.text).toContain('We could not read this request');
    // The public status stays JSON: it is read by the page's script, not by a person.
    const limited = await startTestApp({ kind, database: t.database, env: { PUBLIC_RATE_LIMIT: '1/s,2' } });
    try {
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await limited.request('GET', `/pay/${tokenOf(qr)}`));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      expect(answers[2]!.text).toContain('Demasiados intentos');
      expect(Number(answers[2]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const status = await limited.request('GET', `/pay/${tokenOf(qr)}/status`);
      expect(status.status).toBe(429);
      expect(status.body).toMatchObject({ code: 'RATE_LIMITED' });
    } finally {
      await limited.close();
    }
  });
});
