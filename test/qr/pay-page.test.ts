import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';

const tokenOf = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;

describe.each(databaseKinds())('hosted pay page over HTTP on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant({ name: 'Café <Pérez>' });
  });
  afterAll(() => t.close());

  const page = (token: string) => t.request('GET', `/pay/${token}`, { headers: { accept: 'text/html' } });
  // fetch directly, so the 303 is seen rather than followed
  const postForm = async (token: string, fields: Record<string, string>) => {
    const response = await fetch(`${t.baseUrl}/pay/${token}`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
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
    expect(response.text).toContain('Bs 150.50');
    expect(response.text).toContain(qr.qr_image);
    expect(response.text).toContain('Simulate payment');
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
      expect(response.text).toContain('Payment request not found');
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

  it('shows no payment feed of a multi-use QR: no count, no amounts, no ids, however many payers paid', async () => {
    const qr = await createQr(t, merchant, { is_multi_use: true, modify_amount: true, amount: 10, qr_expiration: '+1h' });
    await pay(t, merchant, qr.id, { amount: 7 });
    await pay(t, merchant, qr.id, { amount: 33.3 });
    const status = await t.request('GET', `/pay/${tokenOf(qr)}/status`);
    expect(status.body).toEqual({
      status: 'ACTIVE', cancel_reason: null, amount: '10.00', expires_at: '2026-11-22T17:00:00.000Z', paid_at: null, paid_at_local: null,
    });
    const html = (await page(tokenOf(qr))).text;
    expect(html).not.toContain('33.30');
    expect(html).not.toContain('received so far');
    expect(html).toMatch(/id="receipt"[^>]* hidden/);
  });

  it('refuses payment on a suspended merchant\'s QR (409, form error) and moves no money', async () => {
    const suspended = await t.createMerchant({ name: 'Tienda Suspendida' });
    const qr = await createQr(t, suspended, { amount: 9 });
    expect((await t.request('PATCH', `/admin/v1/merchants/${suspended.businessCode}`, { body: { status: 'suspended' } })).status).toBe(200);
    const response = await postForm(tokenOf(qr), { source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' });
    expect(response.status).toBe(409);
    expect(response.text).toContain('no longer accepts payments');
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
    const receipt = await page(tokenOf(qr));
    expect(receipt.text).toContain('Paid — thank you');
    expect(receipt.text).toMatch(/id="receipt"[^>]*>/);
    expect(receipt.text).not.toMatch(/id="receipt"[^>]* hidden/);
    const payments = await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: merchant.apiKey });
    expect(payments.body.data[0].payer).toEqual({ source_bank: 'Banco Unión', account_number: '**********4321', account_titular: 'Ana Pérez' });
    const again = await postForm(tokenOf(qr), { source_bank: 'B', account_number: '1234', account_titular: 'X' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('no longer accepts payments');
  });

  it('shows form errors with 422 and moves nothing', async () => {
    const qr = await createQr(t, merchant, { modify_amount: true, amount: undefined });
    const response = await postForm(tokenOf(qr), { source_bank: '', account_number: '12x', account_titular: 'Ana', amount: '1.234' });
    expect(response.status).toBe(422);
    expect(response.text).toContain('aria-invalid="true"');
    expect(response.text).toContain('Enter 4 to 30 digits.');
    expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.payments_count).toBe(0);
    const missingAmount = await postForm(tokenOf(qr), { source_bank: 'B', account_number: '1234', account_titular: 'Ana', amount: '' });
    expect(missingAmount.status).toBe(422);
  });

  it('shows a clear page for canceled and expired QRs that still says what they were for', async () => {
    const canceled = await createQr(t, merchant, { description: 'Mesa 4' });
    await t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { apiKey: merchant.apiKey });
    const canceledPage = await page(tokenOf(canceled));
    expect(canceledPage.status).toBe(200);
    expect(canceledPage.text).toContain('canceled by the merchant');
    expect(canceledPage.text).toContain('Mesa 4');
    const expiring = await createQr(t, merchant, { description: 'Kiosk', qr_expiration: '+5m' });
    t.clock.advance(5 * 60_000);
    const expiredPage = await page(tokenOf(expiring));
    expect(expiredPage.status).toBe(200);
    expect(expiredPage.text).toContain('has expired');
    expect(expiredPage.text).toContain('Kiosk');
  });

  it('has no simulate form and no form endpoint in live mode', async () => {
    const live = await startTestApp({ kind, database: t.database, env: { MODE: 'live' } });
    try {
      const m = await live.createMerchant();
      const qr = await createQr(live, m);
      const response = await live.request('GET', `/pay/${tokenOf(qr)}`);
      expect(response.status).toBe(200);
      expect(response.text).not.toContain('Simulate payment');
      const post = await live.request('POST', `/pay/${tokenOf(qr)}`, { rawBody: 'source_bank=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(post.status).toBe(404);
    } finally {
      await live.close();
    }
  });
});
