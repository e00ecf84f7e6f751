import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlv, crc16CcittFalse } from '../../src/qr/emv.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, decodeQrImage, pay, type Merchant } from './qr-helpers.ts';

describe.each(databaseKinds())('simple QRs on %s: create and read', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
    merchant = await t.createMerchant({ name: 'Tienda Pérez & Hijos Ñandú Ltda' });
  });
  afterAll(() => t.close());

  it('creates a fixed single-use QR with every field of the resource', async () => {
    const qr = await createQr(t, merchant, { amount: '150.50', description: 'Order 42' });
    expect(qr).toMatchObject({
      business_code: merchant.businessCode, status: 'ACTIVE', amount: 150.5, currency: 'BOB', modify_amount: false,
      is_multi_use: false, description: 'Order 42', qr_expiration: null, expires_at: null, payments_count: 0,
      amount_collected: 0, last_payment: null, paid_at: null, canceled_at: null, cancel_reason: null,
      external_reference: null, min_amount: null, max_amount: null, max_payments: null,
      created_at: '2026-11-22T16:00:00.000Z', updated_at: '2026-11-22T16:00:00.000Z',
    });
    expect(qr.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(qr.qr_url).toMatch(/^https:\/\/pay\.example\.com\/pay\/[0-9A-Za-z]{22}$/);
    expect(qr.qr_url).not.toContain(qr.id);
    expect(qr.qr_image).toMatch(/^data:image\/png;base64,/);
    expect(Object.keys(qr).sort()).toEqual([
      'amount', 'amount_collected', 'business_code', 'cancel_reason', 'canceled_at', 'created_at', 'currency', 'description',
      'expires_at', 'external_reference', 'id', 'is_multi_use', 'last_payment', 'max_amount', 'max_payments', 'min_amount',
      'modify_amount', 'paid_at', 'payments_count', 'qr_expiration', 'qr_image', 'qr_payload', 'qr_url', 'rail', 'rail_reference', 'status', 'updated_at',
    ]);
  });

  it('builds the EMV payload tag by tag, with ASCII name and city and a valid CRC', async () => {
    const qr = await createQr(t, merchant, { amount: 150.5 });
    const token = qr.qr_url.split('/').pop();
    const fields = parseTlv(qr.qr_payload);
    expect(fields.map((f) => f.tag)).toEqual(['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '63']);
    const byTag = Object.fromEntries(fields.map((f) => [f.tag, f.value]));
    expect(byTag['00']).toBe('01');
    expect(byTag['01']).toBe('12');
    expect(parseTlv(byTag['26']!)).toEqual([{ tag: '00', value: 'bo.mps' }, { tag: '01', value: qr.qr_url }]);
    expect(byTag['52']).toBe('5999');
    expect(byTag['53']).toBe('068');
    expect(byTag['54']).toBe('150.50');
    expect(byTag['58']).toBe('BO');
    expect(byTag['59']).toBe('Tienda Perez & Hijos Nand'); // transliterated, cut to 25
    expect(byTag['60']).toBe('La Paz');
    expect(parseTlv(byTag['62']!)).toEqual([{ tag: '05', value: token }]);
    expect(qr.qr_payload.endsWith(`6304${byTag['63']}`)).toBe(true);
    expect(byTag['63']).toMatch(/^[0-9A-F]{4}$/);
    expect(crc16CcittFalse(qr.qr_payload.slice(0, -4))).toBe(byTag['63']);
  });

  it('marks multi-use QRs 11 and leaves the amount out when it is editable', async () => {
    const qr = await createQr(t, merchant, { is_multi_use: true, modify_amount: true, amount: 20 });
    const tags = parseTlv(qr.qr_payload).map((f) => f.tag);
    expect(parseTlv(qr.qr_payload)[1]).toEqual({ tag: '01', value: '11' });
    expect(tags).not.toContain('54');
    expect(qr.amount).toBe(20);
    const open = await createQr(t, merchant, { is_multi_use: true, modify_amount: true, amount: undefined });
    expect(open.amount).toBeNull();
  });

  it('encodes exactly the payload in the PNG image (decoded with jsQR)', async () => {
    for (const body of [{ amount: 0.1 }, { amount: 100000, description: 'x'.repeat(140) }, { modify_amount: true, amount: undefined, is_multi_use: true }]) {
      const qr = await createQr(t, merchant, body);
      expect(decodeQrImage(qr.qr_image)).toBe(qr.qr_payload);
    }
  });

  it('reads a QR back by id with an ETag, and answers 304 to If-None-Match', async () => {
    const qr = await createQr(t, merchant);
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(qr);
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    const again = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('content-length')).toBeNull(); // a "Content-Length: 4" would hang keep-alive clients
    const weak = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey, headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(weak.status).toBe(304);
    const any = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey, headers: { 'if-none-match': '*' } });
    expect(any.status).toBe(304);
    const others = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey, headers: { 'if-none-match': `"other", W/"${etag.slice(1, -2)}"` } });
    expect(others.status).toBe(200);
    await pay(t, merchant, qr.id);
    const changed = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey, headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.status).toBe('PAID');
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('answers 404 for another merchant\'s QR, on every route', async () => {
    const qr = await createQr(t, merchant);
    const other = await t.createMerchant({ name: 'Otra' });
    const get = await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: other.apiKey });
    expect(get.status).toBe(404);
    expect(get.body.code).toBe('NOT_FOUND');
    expect((await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}/payments`, { apiKey: other.apiKey })).status).toBe(404);
    expect((await pay(t, other, qr.id)).status).toBe(404);
    const list = await t.request('GET', '/api/v2/simple-qrs', { apiKey: other.apiKey });
    expect(list.body.meta.total).toBe(0);
    expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.status).toBe('ACTIVE');
  });

  it('answers 404 for ids that are not QR ids', async () => {
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000', '1']) {
      const response = await t.request('GET', `/api/v2/simple-qrs/${id}`, { apiKey: merchant.apiKey });
      expect(response.status).toBe(404);
    }
  });

  it('documents the QR routes in the OpenAPI description', async () => {
    const response = await t.request('GET', '/openapi.json');
    expect(response.status).toBe(200);
    const paths = Object.keys(response.body.paths);
    for (const path of ['/api/v2/simple-qrs', '/api/v2/simple-qrs/{id}', '/api/v2/simple-qrs/{id}/cancel', '/api/v2/simple-qrs/{id}/payments', '/api/v2/sandbox/simple-qrs/{id}/payments']) {
      expect(paths).toContain(path);
    }
  });

  it('needs an API key', async () => {
    expect((await t.request('GET', '/api/v2/simple-qrs')).status).toBe(401);
    expect((await t.request('POST', '/api/v2/simple-qrs', { body: {} })).status).toBe(401);
  });

  it('refuses a body for another business_code with 403', async () => {
    const response = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode + 1, amount: 5 } });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('BUSINESS_CODE_MISMATCH');
  });

  it('replays a create sent again with the same Idempotency-Key', async () => {
    const key = crypto.randomUUID();
    const first = await createQr(t, merchant, { amount: 7 }, { 'idempotency-key': key });
    const second = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 7 }, headers: { 'idempotency-key': key } });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.id);
    const reused = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 8 }, headers: { 'idempotency-key': key } });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});
