// Hostile input (docs/api-reference.md#request-rules): deep nesting, U+0000 in strings, integers that are
// not canonical decimal, pages and ids out of range. Each gets a clear 4xx in the contract's shape, never a
// 5xx, and changes nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { FlowBrowser, newIntent, tokenOf, VALID_FORM } from '../onboarding/helpers.ts';
import { createQr, pay, type Merchant } from '../qr/qr-helpers.ts';
import { postTransfer, transferBody } from '../transfers/helpers.ts';

const NUL = '\u0000';
const nested = (depth: number) => `{"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

function expectFieldError(response: TestResponse, field: string, code = 'invalid_value') {
  expect(response.status, response.text).toBe(422);
  expect(response.body).toMatchObject({ type: 'validation_error', code: 'VALIDATION_FAILED' });
  expect(response.body.errors).toContainEqual(expect.objectContaining({ field, code }));
}

describe.each(databaseKinds())('hostile input on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  let partner: { partnerId: number; masterKey: string };
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant({ ach_enabled: true });
    partner = await t.createPartner();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('nesting depth', () => {
    it('reads a body nested 32 levels deep, and answers 400 MALFORMED_JSON from 33 levels on', async () => {
      const at32 = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, rawBody: nested(32), headers: { 'content-type': 'application/json' } });
      expectFieldError(at32, 'x', 'unknown_field');
      for (const depth of [33, 5_000]) {
        const deep = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, rawBody: nested(depth), headers: { 'content-type': 'application/json' } });
        expect(deep.status).toBe(400);
        expect(deep.body).toMatchObject({ type: 'invalid_request_error', code: 'MALFORMED_JSON' });
      }
    });

    it('does not count brackets inside strings', async () => {
      const response = await t.request('POST', '/api/v2/simple-qrs', {
        apiKey: merchant.apiKey,
        body: { business_code: merchant.businessCode, amount: 1, description: `[{"\\"${'['.repeat(100)}` },
      });
      expect(response.status).toBe(201);
    });

    it('refuses a deep body on every route that reads one, the operator API included', async () => {
      const deep = nested(40);
      const routes: Array<[string, Record<string, string>]> = [
        ['/api/v2/transfers', { 'x-api-key': merchant.apiKey, 'idempotency-key': randomUUID() }],
        ['/api/v2/webhook-endpoints', { 'x-api-key': merchant.apiKey }],
        ['/api/v2/onboarding/intent', { 'x-api-key': partner.masterKey, 'idempotency-key': randomUUID() }],
        ['/admin/v1/merchants', {}],
      ];
      for (const [path, headers] of routes) {
        const response = await t.request('POST', path, { rawBody: deep, headers: { 'content-type': 'application/json', ...headers } });
        expect(response.status, path).toBe(400);
        expect(response.body.code, path).toBe('MALFORMED_JSON');
      }
    });

    it('answers a JSON body sent to a hosted page with 415, without reading it', async () => {
      const qr = await createQr(t, merchant, { amount: 5 });
      const token = qr.qr_url.split('/pay/')[1];
      for (const path of [`/pay/${token}`, `/pay/${'A'.repeat(22)}`, `/onboarding/${'A'.repeat(32)}`]) {
        const response = await t.request('POST', path, { rawBody: nested(5_000), headers: { 'content-type': 'application/json' } });
        expect(response.status, path).toBe(415);
        // A hosted page answers a person: the refusal is a page in their language, not JSON.
        expect(response.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
        expect(response.text, path).toContain('No pudimos leer esta solicitud');
      }
      expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.payments_count).toBe(0);
    });
  });

  describe('oversized values (docs/security.md#oversized-input)', () => {
    it('answers a 60,000-digit account number with one too_long, the pattern never run', async () => {
      const body = transferBody(merchant.businessCode, { destination: { ...transferBody(merchant.businessCode).destination, account_number: '1'.repeat(60_000) } });
      const response = await t.request('POST', '/api/v2/transfers', { apiKey: merchant.apiKey, body, headers: { 'idempotency-key': randomUUID() } });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual([{ field: 'destination.account_number', code: 'too_long', message: 'must be at most 34 characters' }]);
    });

    it('answers 12,000 event types with one too_large, not one error per item', async () => {
      const response = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url: 'https://shop.example/hook', events: Array(12_000).fill('x') } });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual([expect.objectContaining({ field: 'events', code: 'too_large' })]);
      expect(response.text.length).toBeLessThan(1_000);
    });

    it('lists the first 25 of 5,000 unknown fields and says how many there were', async () => {
      const body = { amount: 10, ...Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`typo${i}`, 1])) };
      const response = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body });
      expect(response.status).toBe(422);
      expect(response.body.errors).toHaveLength(25);
      expect(response.body.errors).toContainEqual({ field: expect.stringMatching(/^typo\d+$/), code: 'unknown_field', message: expect.any(String) });
      expect(response.body.message).toMatch(/5,?00[01] invalid fields; the first 25 are listed/);
      expect(response.text.length).toBeLessThan(5_000);
    });

    it('bounds the list of prototype-poisoning keys the same way', async () => {
      const rawBody = `{"amount":10,"items":[${Array.from({ length: 400 }, () => '{"__proto__":{}}').join(',')}]}`;
      const response = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(422);
      expect(response.body.errors.length).toBeLessThanOrEqual(25);
    });
  });

  describe('U+0000 in a string', () => {
    it('is 422 invalid_value on the field, for QR, transfer, sandbox payment, webhook, intent and operator bodies; nothing is written', async () => {
      const qrsBefore = (await t.request('GET', '/api/v2/simple-qrs', { apiKey: merchant.apiKey })).body.meta.total;
      expectFieldError(await t.request('POST', '/api/v2/simple-qrs', {
        apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 1, description: `Order${NUL}42` },
      }), 'description');
      expect((await t.request('GET', '/api/v2/simple-qrs', { apiKey: merchant.apiKey })).body.meta.total).toBe(qrsBefore);

      const transfer = (change: Record<string, unknown>) => postTransfer(t, merchant, transferBody(merchant.businessCode, change));
      expectFieldError(await transfer({ reference: `Pay${NUL}roll` }), 'reference');
      expectFieldError(await transfer({
        destination: { type: 'bank_account', bank_code: 1014, account_number: '1000-2000', account_titular: `Ana${NUL}` },
      }), 'destination.account_titular');

      const qr = await createQr(t, merchant, { amount: 5 });
      expectFieldError(await pay(t, merchant, qr.id, { source_bank: `Banco${NUL}` }), 'source_bank');
      expectFieldError(await pay(t, merchant, qr.id, { account_titular: `${NUL}` }), 'account_titular');
      expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.payments_count).toBe(0);

      expectFieldError(await t.request('POST', '/api/v2/webhook-endpoints', {
        apiKey: merchant.apiKey, body: { url: `https://shop.example/${NUL}hook` },
      }), 'url');
      expectFieldError(await t.request('POST', '/api/v2/webhook-endpoints', {
        apiKey: merchant.apiKey, body: { url: 'https://shop.example/hook', description: NUL },
      }), 'description');
      expect((await t.request('GET', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey })).body.meta.total).toBe(0);

      const intent = (body: Record<string, unknown>) => t.request('POST', '/api/v2/onboarding/intent', {
        apiKey: partner.masterKey, headers: { 'idempotency-key': randomUUID() }, body,
      });
      expectFieldError(await intent({ metadata: { [`cus${NUL}`]: 'x' } }), `metadata.cus${NUL}`);
      expectFieldError(await intent({ metadata: { customer: `cus${NUL}1` } }), 'metadata.customer');
      expectFieldError(await intent({ success_url: `https://partner.example/${NUL}` }), 'success_url');
      expectFieldError(await intent({ cancel_url: `https://partner.example/${NUL}` }), 'cancel_url');

      expectFieldError(await t.request('POST', '/admin/v1/merchants', { body: { name: `Tienda${NUL}` } }), 'name');
      const check = await t.request('GET', '/admin/v1/ledger/check');
      expect(check.body.ok).toBe(true);
    });

    it('applies to unpaired surrogates too (JSON lets "\\ud800" through): 422, never a 500 or a stored U+FFFD', async () => {
      const raw = (path: string, json: string, apiKey: string, headers: Record<string, string> = {}) =>
        t.request('POST', path, { apiKey, rawBody: json, headers: { 'content-type': 'application/json', ...headers } });
      expectFieldError(await raw('/api/v2/simple-qrs', `{"business_code":${merchant.businessCode},"amount":1,"description":"a\\ud800"}`, merchant.apiKey), 'description');
      expectFieldError(await raw('/api/v2/onboarding/intent', '{"metadata":{"k":"\\udc00"}}', partner.masterKey, { 'idempotency-key': randomUUID() }), 'metadata.k');
      expectFieldError(await raw('/api/v2/onboarding/intent', '{"metadata":{"\\ud800":1}}', partner.masterKey, { 'idempotency-key': randomUUID() }), 'metadata.\ud800');
      expectFieldError(await raw('/admin/v1/partners', '{"name":"é\\udc00"}', ''), 'name');
      expect((await t.request('GET', '/api/v2/simple-qrs?per_page=100', { apiKey: merchant.apiKey })).body.data
        .some((qr: { description: string | null }) => qr.description?.includes('\ufffd'))).toBe(false);
    });

    it('checks every metadata value whatever its key: a line break or an empty key escapes nothing', async () => {
      const intent = (metadata: Record<string, unknown>) => t.request('POST', '/api/v2/onboarding/intent', {
        apiKey: partner.masterKey, headers: { 'idempotency-key': randomUUID() }, body: { metadata },
      });
      expectFieldError(await intent({ 'a\n': { nested: [1, 2] } }), 'metadata.a\n', 'invalid_type');
      expectFieldError(await intent({ 'a\u2028': 'x'.repeat(600) }), 'metadata.a\u2028', 'too_long');
      expectFieldError(await intent({ 'a\r': NUL }), 'metadata.a\r');
      expectFieldError(await intent({ '': NUL }), 'metadata.');
    });

    it('is the field\'s error message on the sandbox pay form, and no payment is made', async () => {
      const qr = await createQr(t, merchant, { amount: 5 });
      const token = qr.qr_url.split('/pay/')[1];
      const response = await fetch(`${t.baseUrl}/pay/${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ source_bank: `Banco${NUL}Unión`, account_number: '10004321', account_titular: 'Ana' }).toString(),
        redirect: 'manual',
      });
      expect(response.status).toBe(422);
      expect(await response.text()).toContain('U+0000');
      expect((await t.request('GET', `/api/v2/simple-qrs/${qr.id}`, { apiKey: merchant.apiKey })).body.payments_count).toBe(0);
    });

    it('is the field\'s error message on the onboarding form, and the intent stays on the form', async () => {
      const intent = await newIntent(t, partner);
      const browser = new FlowBrowser(t, tokenOf(intent));
      const page = await browser.register({ ...VALID_FORM, legal_name: `Empanadas${NUL}` });
      expect(page.status).toBe(422);
      expect(page.text).toContain('U+0000');
      const read = await t.request('GET', `/api/v2/onboarding/intent/${intent.code}`, { apiKey: partner.masterKey });
      expect(read.body.status).toBe('open');
      expect((await browser.get()).text).toContain('name="legal_name"');
    });
  });

  describe('integers in query strings', () => {
    const lists = ['/api/v2/transfers', '/api/v2/events', '/api/v2/webhook-endpoints', '/api/v2/simple-qrs', '/api/v2/balance/movements'];

    it.each(['1.0', '1e2', '0x1', '+1', '-1', '01', ' 1', '1 ', '', 'NaN', '1,2'])('answers 422 for page=%j and per_page=%j on every list', async (text) => {
      for (const list of lists) {
        for (const name of ['page', 'per_page']) {
          const response = await t.request('GET', `${list}?${name}=${encodeURIComponent(text)}`, { apiKey: merchant.apiKey });
          expect(response.status, `${list}?${name}=${text}`).toBe(422);
          expect(response.body.errors[0].field).toBe(name);
        }
      }
    });

    it('serves any page up to 1,000,000 (past the end: data []) and refuses pages beyond', async () => {
      for (const list of lists) {
        const last = await t.request('GET', `${list}?page=1000000&per_page=100`, { apiKey: merchant.apiKey });
        expect(last.status, list).toBe(200);
        expect(last.body.data).toEqual([]);
        expect(last.body.meta.current_page).toBe(1_000_000);
        for (const page of ['1000001', '143165578', '1e300', '99999999999999999999']) {
          const beyond = await t.request('GET', `${list}?page=${page}`, { apiKey: merchant.apiKey });
          expect(beyond.status, `${list}?page=${page}`).toBe(422);
          expect(beyond.body.errors).toEqual([expect.objectContaining({ field: 'page' })]);
        }
      }
    });

    it('takes before_id from 1 to 2^53 − 1', async () => {
      const within = await t.request('GET', `/api/v2/balance/movements?before_id=${Number.MAX_SAFE_INTEGER}`, { apiKey: merchant.apiKey });
      expect(within.status).toBe(200);
      for (const [text, code] of [['9007199254740992', 'too_large'], ['99999999999999999999', 'too_large'], ['0', 'too_small'], ['1e3', 'invalid_type']]) {
        const response = await t.request('GET', `/api/v2/balance/movements?before_id=${text}`, { apiKey: merchant.apiKey });
        expectFieldError(response, 'before_id', code);
      }
    });

    it('refuses a query parameter a route does not declare, on reads of one resource too', async () => {
      expectFieldError(await t.request('GET', `/api/v2/balance?business_code=${merchant.businessCode}`, { apiKey: merchant.apiKey }), 'business_code', 'unknown_field');
      expectFieldError(await t.request('GET', '/api/v2/banks?bank_code=1001', { apiKey: merchant.apiKey }), 'bank_code', 'unknown_field');
    });
  });

  describe('ids in paths', () => {
    it('answers 404 for a transfer id that is not canonical decimal, even when its number names a transfer of the caller', async () => {
      const qr = await createQr(t, merchant, { amount: 50 });
      expect((await pay(t, merchant, qr.id)).status).toBe(201);
      const created = await postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: '1.00' }));
      expect(created.status).toBe(201);
      const id: number = created.body.id;
      expect((await t.request('GET', `/api/v2/transfers/${id}`, { apiKey: merchant.apiKey })).status).toBe(200);
      const forms = [`0x${id.toString(16)}`, `${id}e0`, `${id}.0`, `0${id}`, `+${id}`, `%20${id}`, '-1', '0', '9007199254740992', '99999999999999999999', '%00', 'abc'];
      for (const form of forms) {
        for (const [method, path] of [['GET', `/api/v2/transfers/${form}`], ['POST', `/api/v2/transfers/${form}/cancel`]] as const) {
          const response = await t.request(method, path, { apiKey: merchant.apiKey });
          expect(response.status, `${method} ${path}`).toBe(404);
          expect(response.body).toMatchObject({ type: 'invalid_request_error', code: 'NOT_FOUND' });
        }
      }
      expect((await t.request('GET', `/api/v2/transfers/${id}`, { apiKey: merchant.apiKey })).body.status).toBe('PENDING');
    });

    it('answers 404 for string ids holding U+0000 or overlong, wherever ids are read', async () => {
      for (const path of [
        '/api/v2/simple-qrs/%00', `/api/v2/webhook-endpoints/we_%00`, '/api/v2/events/evt_%00', '/api/v2/onboarding/intent/onb_%00',
        `/api/v2/webhook-endpoints/${'a'.repeat(500)}`, `/api/v2/events/${'a'.repeat(500)}`,
      ]) {
        const apiKey = path.includes('onboarding') ? partner.masterKey : merchant.apiKey;
        const response = await t.request('GET', path, { apiKey });
        expect(response.status, path).toBe(404);
        expect(response.body.code).toBe('NOT_FOUND');
      }
      const revoke = await t.request('DELETE', '/admin/v1/api-keys/mk_test_%00');
      expect(revoke.status).toBe(404);
    });
  });
});
