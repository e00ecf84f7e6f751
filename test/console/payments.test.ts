// The owner's payments and refunds pages over HTTP (docs/console.md#qrs-payments-and-refunds): every payment with its
// fee, net and refunds, paged; a payment's page; a refund made from it through the confirmation step, seen
// through GET /api/v2/refunds and the balance; a double submit of the confirmation making one refund; Back
// making none; each refusal (the amount, REFUND_EXCEEDS_PAYMENT, INSUFFICIENT_FUNDS — the fee is not given
// back —, REFUND_WINDOW_CLOSED, a suspended business, a reused or missing form key) changing nothing; CSRF
// refusal; a cashier's 403; another merchant's payment not found; the refunds list; hostile queries answered
// with a page, never a 5xx. On PGlite, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { ConsoleBrowser, newOwner, ownersAndCashier } from './helpers.ts';

type Merchant = { businessCode: number; apiKey: string };
const DAY = 86_400_000;

describe.each(databaseKinds())('the console\'s payments and refunds pages on %s', (kind) => {
  let t: TestApp;
  let a: Merchant;
  let b: Merchant;
  let ownerA: ConsoleBrowser;
  let cashierA: ConsoleBrowser;
  let ownerB: ConsoleBrowser;

  /** A merchant charging a fee of Bs 2.00 a payment (docs/fees.md), so a payment's net is its amount less 2. */
  const feeMerchant = async (name: string): Promise<Merchant> => {
    const merchant = await t.createMerchant({ name });
    const patched = await t.request('PATCH', `/admin/v1/merchants/${merchant.businessCode}`, { body: { pricing: { qr_percent: 0, qr_fixed: 2 } } });
    expect(patched.status).toBe(200);
    return merchant;
  };
  /** A QR of `amount` paid by Ana Pérez; the payment as the API shows it. */
  const paidPayment = async (merchant: Merchant, amount: number, body: Record<string, unknown> = {}) => {
    const qr = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount, ...body } });
    expect(qr.status).toBe(201);
    const paid = await t.request('POST', `/api/v2/sandbox/simple-qrs/${qr.body.id}/payments`, { apiKey: merchant.apiKey, body: { account_number: '10000123454321', account_titular: 'Ana Pérez' } });
    expect(paid.status).toBe(201);
    t.clock.advance(1000);
    return paid.body as { id: number; qr_id: string; amount: number; fee: number; net: number };
  };
  const refundsOf = async (merchant: Merchant, paymentId?: number) =>
    (await t.request('GET', `/api/v2/refunds?per_page=100${paymentId ? `&payment_id=${paymentId}` : ''}`, { apiKey: merchant.apiKey })).body.data as Array<{ id: string; amount: number; payment_id: number; status: string; reason: string; description: string | null }>;
  const balanceOf = async (merchant: Merchant) => (await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey })).body.available as number;
  /** A page with its money's no-break spaces as plain ones (Intl writes `Bs\u00a012,50`). */
  const plain = <R extends { text: string }>(response: R): R => ({ ...response, text: response.text.replace(/\u00a0/g, ' ') });
  const keyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1]!;
  const fieldOf = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  /** Opens the payment's page and reviews a refund of `amount`; the review's answer and the form's key. */
  const review = async (browser: ConsoleBrowser, paymentId: number, form: Record<string, string>) => {
    const page = await browser.get(`/console/payments/${paymentId}`);
    expect(page.status).toBe(200);
    const key = keyOf(page.text);
    const answer = plain(await browser.post(`/console/payments/${paymentId}/refund`, { reason: 'requested_by_customer', description: '', idempotency_key: key, ...form }));
    return { answer, key };
  };
  /** Posts the confirmation form as the review page holds it (its hidden fields), with `step`. */
  const confirm = async (browser: ConsoleBrowser, paymentId: number, reviewHtml: string, step = 'confirm', extra: Record<string, string> = {}) =>
    plain(await browser.post(`/console/payments/${paymentId}/refund/confirm`, {
      idempotency_key: fieldOf(reviewHtml, 'idempotency_key')!, amount: fieldOf(reviewHtml, 'amount')!, reason: fieldOf(reviewHtml, 'reason')!,
      description: fieldOf(reviewHtml, 'description') ?? '', step, ...extra,
    }));

  beforeAll(async () => {
    t = await startTestApp({ kind });
    a = await feeMerchant('Café A');
    b = await t.createMerchant({ name: 'Tienda B' });
    ({ ownerA, cashierA, ownerB } = await ownersAndCashier(t, 'payments', a, b));
  });
  afterAll(() => t?.close());

  it('lists every payment newest first, 20 a page, with amount, fee, net, refunded, the payer masked and a link to its QR', async () => {
    const merchant = await feeMerchant('Muchos Pagos');
    const owner = await newOwner(t, merchant.businessCode, 'payments.many@example.com');
    const payments = [];
    for (let i = 1; i <= 21; i++) payments.push(await paidPayment(merchant, 10 + i));
    const first = plain(await owner.get('/console/payments'));
    expect(first.status).toBe(200);
    const ids = [...first.text.matchAll(/data-payment="(\d+)"/g)].map((match) => Number(match[1]));
    expect(ids).toEqual(payments.slice(1).reverse().map((payment) => payment.id));
    expect(Buffer.byteLength(first.text), 'the page with its CSS under 50 KB').toBeLessThan(50_000);
    const newest = payments[20]!;
    expect(first.text).toContain(`href="/console/payments/${newest.id}"><strong>Bs 31,00</strong>`);
    expect(first.text).toContain('Comisión Bs 2,00 · Neto Bs 29,00 · Devuelto Bs 0,00');
    expect(first.text).toContain('Ana Pérez · Banco Sandbox · **********4321');
    expect(first.text).not.toContain('10000123454321');
    expect(first.text).toContain(`href="/console/qrs/${newest.qr_id}"`);
    expect(first.text).toContain('Página 1 de 2 (21 en total)');
    const second = await owner.get('/console/payments?page=2');
    expect([...second.text.matchAll(/data-payment="(\d+)"/g)].map((match) => Number(match[1]))).toEqual([payments[0]!.id]);
    // Another merchant's payments are never listed.
    const other = await ownerB.get('/console/payments');
    expect(other.text).toContain('id="payments-empty"');
  });

  it('shows a payment\'s facts: amount, fee, net, refunded, left, the payer masked, paid at, its QR; and the refund form with all that is left', async () => {
    const payment = await paidPayment(a, 40);
    const page = plain(await ownerA.get(`/console/payments/${payment.id}`));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1 id="payment-heading">Pago de Bs 40,00</h1>');
    expect(page.text).toContain('<dt>Comisión</dt><dd>Bs 2,00</dd>');
    expect(page.text).toContain('<dt>Neto</dt><dd>Bs 38,00</dd>');
    expect(page.text).toContain('<span data-field="refunded">Bs 0,00</span>');
    expect(page.text).toContain('<span data-field="left">Bs 40,00</span>');
    expect(page.text).toContain('Ana Pérez · Banco Sandbox · **********4321');
    expect(page.text).toContain(`href="/console/qrs/${payment.qr_id}" data-field="qr"`);
    expect(fieldOf(page.text, 'amount')).toBe('40,00');
    expect(keyOf(page.text)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(page.text).toContain('id="payment-refunds-empty"');
    const english = plain(await ownerA.get(`/console/payments/${payment.id}?lang=en`));
    expect(english.text).toContain('Payment of Bs 40.00');
    expect(fieldOf(english.text, 'amount')).toBe('40.00');
  });

  it('refunds from the payment\'s page through the confirmation: seen in GET /api/v2/refunds, the balance and the page (post/redirect/get)', async () => {
    const payment = await paidPayment(a, 50);
    const before = await balanceOf(a);
    const { answer } = await review(ownerA, payment.id, { amount: '12,50', reason: 'duplicate', description: 'Cobro doble' });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('¿Devolver Bs 12,50 a Ana Pérez (**********4321)?');
    expect(answer.text).toContain('id="confirm-button"');
    expect(answer.text).toContain('id="back-button"');
    expect(await refundsOf(a, payment.id)).toEqual([]); // nothing is made before the confirmation
    const done = await confirm(ownerA, payment.id, answer.text);
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/console/payments/${payment.id}`);
    const refunds = await refundsOf(a, payment.id);
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ amount: 12.5, payment_id: payment.id, status: 'PENDING', reason: 'duplicate', description: 'Cobro doble' });
    expect(await balanceOf(a)).toBeCloseTo(before - 12.5, 2);
    const page = plain(await ownerA.get(`/console/payments/${payment.id}`));
    expect(page.text).toContain(`data-refund="${refunds[0]!.id}"`);
    expect(page.text).toContain('<span data-field="refunded">Bs 12,50</span>');
    expect(page.text).toContain('<span data-field="left">Bs 37,50</span>');
    expect(page.text).toContain('En curso');
    expect(fieldOf(page.text, 'amount')).toBe('37,50');
    // The refunds list shows it, with its payment's link.
    const list = plain(await ownerA.get('/console/refunds'));
    expect(list.status).toBe(200);
    expect(list.text).toContain(`data-refund="${refunds[0]!.id}"`);
    expect(list.text).toContain(`href="/console/payments/${payment.id}"`);
    expect((await ownerA.get('/console/refunds?status=COMPLETED')).text).not.toContain(refunds[0]!.id);
    expect((await ownerA.get('/console/refunds?status=PENDING')).text).toContain(refunds[0]!.id);
    expect((await ownerB.get('/console/refunds')).text).toContain('id="refunds-empty"');
    // All that is left, in English notation; then the page says nothing is left and offers no form.
    const rest = await review(ownerA, payment.id, { amount: '37.5' });
    expect(rest.answer.status).toBe(200);
    expect((await confirm(ownerA, payment.id, rest.answer.text)).status).toBe(303);
    const full = await ownerA.get(`/console/payments/${payment.id}`);
    expect(full.text).toContain('id="refund-closed"');
    expect(full.text).not.toContain('id="refund-form"');
    expect(await refundsOf(a, payment.id)).toHaveLength(2);
  });

  it('a double submit of the confirmation makes one refund, one after the other or both at once', async () => {
    const payment = await paidPayment(a, 30);
    const { answer } = await review(ownerA, payment.id, { amount: '10' });
    expect((await confirm(ownerA, payment.id, answer.text)).status).toBe(303);
    expect((await confirm(ownerA, payment.id, answer.text)).status).toBe(303);
    expect(await refundsOf(a, payment.id)).toHaveLength(1);
    const again = await review(ownerA, payment.id, { amount: '5' });
    const both = await Promise.all([confirm(ownerA, payment.id, again.answer.text), confirm(ownerA, payment.id, again.answer.text)]);
    expect(both.map((response) => response.status)).toEqual([303, 303]);
    expect((await refundsOf(a, payment.id)).map((refund) => refund.amount).sort()).toEqual([10, 5].sort());
  });

  it('Back returns to the form as typed and makes nothing', async () => {
    const payment = await paidPayment(a, 20);
    const { answer } = await review(ownerA, payment.id, { amount: '3,25', description: 'Vuelto' });
    const back = await confirm(ownerA, payment.id, answer.text, 'back');
    expect(back.status).toBe(200);
    expect(fieldOf(back.text, 'amount')).toBe('3,25');
    expect(fieldOf(back.text, 'description')).toBe('Vuelto');
    expect(await refundsOf(a, payment.id)).toEqual([]);
  });

  it('refuses a bad amount, one over what is left, a long note, a bad reason or a form without its key (422, a field error); nothing changes', async () => {
    const payment = await paidPayment(a, 20);
    const before = await balanceOf(a);
    for (const amount of ['0', '0,00', 'abc', '1,234', '-1', '20,01', '100000000', '1e3', '\u0000']) {
      const { answer, key } = await review(ownerA, payment.id, { amount });
      expect(answer.status, amount).toBe(422);
      expect(answer.text, amount).toContain('id="f-amount-error"');
      expect(answer.text).toContain('aria-invalid="true"');
      expect(keyOf(answer.text)).not.toBe(key); // what is sent next is a new refund
    }
    expect((await review(ownerA, payment.id, { amount: '20,01' })).answer.text).toContain('De este pago solo quedan Bs 20,00 por devolver.');
    expect((await review(ownerA, payment.id, { amount: '1', description: 'x'.repeat(141) })).answer.text).toContain('id="f-description-error"');
    expect((await review(ownerA, payment.id, { amount: '1', reason: 'qr_not_payable' })).answer.status).toBe(422);
    const keyless = await review(ownerA, payment.id, { amount: '1', idempotency_key: 'not-a-key' });
    expect(keyless.answer.status).toBe(422);
    expect(keyless.answer.text).toContain('id="form-alert"');
    // The confirmation checks again: a tampered amount is refused there too.
    const { answer } = await review(ownerA, payment.id, { amount: '1' });
    expect((await confirm(ownerA, payment.id, answer.text, 'confirm', { amount: 'abc' })).status).toBe(422);
    expect(await refundsOf(a, payment.id)).toEqual([]);
    expect(await balanceOf(a)).toBe(before);
  });

  it('REFUND_EXCEEDS_PAYMENT at the confirmation (another refund took what was left): the amount\'s error (409), nothing more refunded', async () => {
    const payment = await paidPayment(a, 10);
    const first = await review(ownerA, payment.id, { amount: '8' });
    const second = await review(ownerA, payment.id, { amount: '5' });
    expect((await confirm(ownerA, payment.id, first.answer.text)).status).toBe(303);
    const before = await balanceOf(a);
    const refused = await confirm(ownerA, payment.id, second.answer.text);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('De este pago solo quedan Bs 2,00 por devolver.');
    expect(refused.text).toContain('id="f-amount-error"');
    expect((await refundsOf(a, payment.id)).map((refund) => refund.amount)).toEqual([8]);
    expect(await balanceOf(a)).toBe(before);
  });

  it('INSUFFICIENT_FUNDS when the balance does not cover it — the fee is not given back (400, the alert); nothing changes, the same form again says the same', async () => {
    const merchant = await feeMerchant('Saldo Justo');
    const owner = await newOwner(t, merchant.businessCode, 'payments.funds@example.com');
    const payment = await paidPayment(merchant, 100);
    expect(await balanceOf(merchant)).toBe(98);
    const { answer } = await review(owner, payment.id, { amount: '100' });
    expect(answer.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const refused = await confirm(owner, payment.id, answer.text);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('id="form-alert"');
      expect(refused.text).toContain('Tu saldo disponible no alcanza para esta devolución (la comisión no se devuelve): no se devolvió nada.');
    }
    expect(await refundsOf(merchant)).toEqual([]);
    expect(await balanceOf(merchant)).toBe(98);
    // 98 is covered.
    const covered = await review(owner, payment.id, { amount: '98' });
    expect((await confirm(owner, payment.id, covered.answer.text)).status).toBe(303);
    expect(await balanceOf(merchant)).toBe(0);
  });

  it('a suspended business cannot refund (its alert, 403); a reused form key is refused (its alert, 422); nothing changes', async () => {
    const payment = await paidPayment(a, 15);
    const { answer } = await review(ownerA, payment.id, { amount: '5' });
    expect((await t.request('PATCH', `/admin/v1/merchants/${a.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);
    try {
      const refused = await confirm(ownerA, payment.id, answer.text);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('Tu negocio está suspendido: no se devolvió nada.');
    } finally {
      expect((await t.request('PATCH', `/admin/v1/merchants/${a.businessCode}`, { body: { status: 'active' } })).status).toBe(200);
    }
    expect(await refundsOf(a, payment.id)).toEqual([]);
    expect((await confirm(ownerA, payment.id, answer.text)).status).toBe(303);
    const reused = await confirm(ownerA, payment.id, answer.text, 'confirm', { amount: '6' });
    expect(reused.status).toBe(422);
    expect(reused.text).toContain('Este formulario ya se usó para otra devolución');
    expect((await refundsOf(a, payment.id)).map((refund) => refund.amount)).toEqual([5]);
  });

  it('refuses a confirmation without the CSRF field or with a wrong one (403): nothing is refunded', async () => {
    const payment = await paidPayment(a, 12);
    const { answer } = await review(ownerA, payment.id, { amount: '2' });
    const form = { idempotency_key: fieldOf(answer.text, 'idempotency_key')!, amount: '2', reason: 'requested_by_customer', step: 'confirm' };
    for (const csrf of [undefined, 'wrong', ownerB.csrf!]) {
      const refused = await ownerA.postRaw(`/console/payments/${payment.id}/refund/confirm`, csrf === undefined ? form : { ...form, csrf_token: csrf });
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('data-reason="csrf"');
    }
    expect(await refundsOf(a, payment.id)).toEqual([]);
  });

  it('is the owner\'s: a cashier gets 403 on every page and post, and nothing is refunded', async () => {
    const payment = await paidPayment(a, 9);
    await cashierA.get('/console/terminal');
    for (const path of ['/console/payments', `/console/payments/${payment.id}`, '/console/refunds']) {
      const refused = await cashierA.get(path);
      expect(refused.status, path).toBe(403);
      expect(refused.text).toContain('data-reason="forbidden"');
    }
    const form = { idempotency_key: crypto.randomUUID(), amount: '1', reason: 'requested_by_customer', step: 'confirm' };
    expect((await cashierA.post(`/console/payments/${payment.id}/refund`, form)).status).toBe(403);
    expect((await cashierA.post(`/console/payments/${payment.id}/refund/confirm`, form)).status).toBe(403);
    expect(await refundsOf(a, payment.id)).toEqual([]);
    const home = await cashierA.get('/console');
    expect(home.text).not.toContain('href="/console/payments"');
    expect(home.text).not.toContain('href="/console/refunds"');
    const ownerHome = await ownerA.get('/console');
    for (const section of ['/console/qrs', '/console/payments', '/console/refunds']) expect(ownerHome.text).toContain(`data-section="${section}"`);
  });

  it('another merchant\'s payment is not found (404): its page, its review and its confirmation; nothing is refunded', async () => {
    const payment = await paidPayment(a, 11);
    const page = await ownerB.get(`/console/payments/${payment.id}`);
    expect(page.status).toBe(404);
    expect(page.text).toContain('data-reason="not-found"');
    const form = { idempotency_key: crypto.randomUUID(), amount: '1', reason: 'requested_by_customer', step: 'confirm' };
    expect((await ownerB.post(`/console/payments/${payment.id}/refund`, form)).status).toBe(404);
    expect((await ownerB.post(`/console/payments/${payment.id}/refund/confirm`, form)).status).toBe(404);
    expect(await refundsOf(a, payment.id)).toEqual([]);
    expect((await ownerA.get('/console/payments/999999999')).status).toBe(404);
  });

  it('answers a hostile address or query with a page (4xx), never a 5xx', async () => {
    const paths = ['/console/payments?page=0', '/console/payments?page=abc', '/console/payments?page=99999999999', '/console/payments/abc',
      '/console/payments/0', '/console/payments/-1', '/console/payments/99999999999999999999999', `/console/payments/${encodeURIComponent('1\u0000')}`,
      '/console/refunds?status=bogus', '/console/refunds?status=%00', '/console/refunds?page=-3', '/console/refunds?status=pending'];
    for (const path of paths) {
      const response = await ownerA.get(path);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.status, path).toBeLessThan(500);
      expect(response.headers.get('content-type'), path).toContain('text/html');
    }
    const payment = await paidPayment(a, 5);
    await ownerA.get(`/console/payments/${payment.id}`);
    for (const form of <Record<string, string>[]>[{ amount: 'x'.repeat(5000) }, { amount: '1', reason: '\u0000' }, { amount: '1', description: '\u0000' }, { amount: '1', step: 'confirm', idempotency_key: '\u0000' }]) {
      const response = await ownerA.post(`/console/payments/${payment.id}/refund/confirm`, { reason: 'requested_by_customer', idempotency_key: crypto.randomUUID(), ...form });
      expect(response.status, JSON.stringify(form)).toBeGreaterThanOrEqual(400);
      expect(response.status, JSON.stringify(form)).toBeLessThan(500);
    }
    expect(await refundsOf(a, payment.id)).toEqual([]);
  });

  // Last: it moves the clock past the refund window.
  it('REFUND_WINDOW_CLOSED: a form opened before the window closed is refused (409, the alert); the page then offers no form; nothing changes', async () => {
    const payment = await paidPayment(a, 25);
    const { answer } = await review(ownerA, payment.id, { amount: '5' });
    const before = await balanceOf(a);
    t.clock.advance(t.config.refundWindowMs + DAY);
    // The console's session has ended by then too: sign in again, then send the form opened before.
    expect((await ownerA.signIn('payments.owner.a@example.com', 'correct horse battery')).status).toBe(303);
    await ownerA.get('/console'); // the new session's CSRF field
    const refused = await confirm(ownerA, payment.id, answer.text);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('Este pago es más antiguo que el plazo para devolver: no se devolvió nada.');
    expect(refused.text).toContain('id="refund-closed"');
    expect(await refundsOf(a, payment.id)).toEqual([]);
    expect(await balanceOf(a)).toBe(before);
    const page = await ownerA.get(`/console/payments/${payment.id}`);
    expect(page.text).not.toContain('id="refund-form"');
  });
});
