// What is reachable without an API key, or shows a secret (docs/api-reference.md#rate-limits,
// docs/api-reference.md#operations): the per-address limit of hosted pages and unknown keys, TRUST_PROXY,
// METRICS_TOKEN, Cache-Control: no-store on every answer that shows a secret, and the onboarding pages'
// Content-Security-Policy built only from a checked origin.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createIntent, FlowBrowser, newIntent, tokenOf } from '../onboarding/helpers.ts';

const BURST = 3;

describe.each(databaseKinds())('requests without a key, limited per client address, on %s', (kind) => {
  let t: TestApp;
  let proxied: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { PUBLIC_RATE_LIMIT: `1/s,${BURST}` } });
    proxied = await startTestApp({ kind, database: t.database, clock: t.clock, env: { PUBLIC_RATE_LIMIT: `1/s,${BURST}`, TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(async () => {
    await proxied?.close();
    await t?.close();
  });

  const statuses = async (count: number, send: () => Promise<TestResponse>) => {
    const answers: TestResponse[] = [];
    for (let i = 0; i < count; i++) answers.push(await send());
    return answers;
  };

  it('answers 429 with Retry-After once an address has used its burst on hosted pages; operational routes are not limited', async () => {
    const answers = await statuses(BURST + 1, () => t.request('GET', `/pay/${'A'.repeat(22)}/status`, { headers: { 'x-forwarded-for': '203.0.113.7' } }));
    expect(answers.slice(0, BURST).map((a) => a.status)).toEqual(Array(BURST).fill(404));
    const limited = answers[BURST]!;
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ type: 'rate_limit_error', code: 'RATE_LIMITED' });
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('ratelimit-limit')).toBe(String(BURST));
    // Without TRUST_PROXY the forwarded address is not believed: another one does not get a new bucket.
    expect((await t.request('GET', `/pay/${'B'.repeat(22)}`, { headers: { 'x-forwarded-for': '198.51.100.9' } })).status).toBe(429);
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json']) expect((await t.request('GET', path)).status, path).toBe(200);
    // The bucket refills on the app's clock, which only the test moves: a second gives back one request.
    t.clock.advance(1_000);
    expect((await statuses(2, () => t.request('GET', `/pay/${'A'.repeat(22)}/status`))).map((a) => a.status)).toEqual([404, 429]);
  });

  it('limits made-up API keys from one address, each of which would cost a database lookup', async () => {
    t.clock.advance(BURST * 1_000); // the bucket of 127.0.0.1 refills (1 token a second on the app's clock)
    const answers = await statuses(BURST + 1, () => t.request('GET', '/api/v2/balance', { apiKey: `mk_test_${randomUUID().replace(/-/g, '')}` }));
    expect(answers.slice(0, BURST).map((a) => a.status)).toEqual(Array(BURST).fill(401));
    expect(answers[BURST]!.status).toBe(429);
  });

  it('never spends the address bucket on keys that exist: many terminals behind one address are not limited by it', async () => {
    const merchants = [];
    for (let i = 0; i < BURST * 2; i++) merchants.push(await proxied.createMerchant());
    // Each key is new to the verifier, so each costs a lookup; found keys cost the address nothing.
    const answers = await Promise.all(merchants.map((m) => proxied.request('GET', '/api/v2/balance', { apiKey: m.apiKey, headers: { 'x-forwarded-for': '198.51.100.50' } })));
    expect(answers.map((a) => a.status)).toEqual(Array(BURST * 2).fill(200));
  });

  it('with TRUST_PROXY, gives each forwarded client its own bucket: an IPv4 address, or an IPv6 /64', async () => {
    const exhaust = (client: string) => statuses(BURST + 1, () => proxied.request('GET', `/pay/${'C'.repeat(22)}/status`, { headers: { 'x-forwarded-for': client } }));
    for (const client of ['203.0.113.1', '203.0.113.2', '2001:db8:1:2::1']) {
      expect((await exhaust(client)).map((a) => a.status), client).toEqual([...Array(BURST).fill(404), 429]);
    }
    // Another address of the same /64 is the same client; the next /64 is another one.
    expect((await proxied.request('GET', `/pay/${'C'.repeat(22)}/status`, { headers: { 'x-forwarded-for': '2001:db8:1:2:ffff::9' } })).status).toBe(429);
    expect((await proxied.request('GET', `/pay/${'C'.repeat(22)}/status`, { headers: { 'x-forwarded-for': '2001:db8:1:3::1' } })).status).toBe(404);
  });
});

describe.each(databaseKinds())('secrets and metrics on %s', (kind) => {
  const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { METRICS_TOKEN } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('asks for METRICS_TOKEN on /metrics when it is set', async () => {
    expect((await t.request('GET', '/metrics')).status).toBe(401);
    expect((await t.request('GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    const scraped = await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('http_request_duration_seconds');
  });

  it('sends Cache-Control: no-store with every answer that shows a key or a signing secret', async () => {
    const partner = await t.request('POST', '/admin/v1/partners', { body: { name: 'Socio' } });
    const merchant = await t.request('POST', '/admin/v1/merchants', { body: { name: 'Tienda' } });
    const key = await t.request('POST', `/admin/v1/merchants/${merchant.body.business_code}/api-keys`, { body: { kind: 'terminal' } });
    const masterKey = await t.request('POST', `/admin/v1/partners/${partner.body.id}/master-keys`);
    const endpoint = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.body.api_key, body: { url: 'https://shop.example/hook' } });
    const rotated = await t.request('POST', `/api/v2/webhook-endpoints/${endpoint.body.id}/rotate-secret`, { apiKey: merchant.body.api_key });
    for (const [name, response] of Object.entries({ partner, merchant, key, masterKey, endpoint, rotated })) {
      expect(response.status, name).toBeLessThan(300);
      expect(response.headers.get('cache-control'), name).toBe('no-store');
    }
  });

  it('keeps every authenticated answer out of shared caches, keyed by the credential, errors included', async () => {
    const merchant = await t.createMerchant();
    const document = (await t.request('GET', '/openapi.json')).body;
    const operations = Object.entries<Record<string, { security?: Array<Record<string, unknown>> }>>(document.paths)
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))
      .filter(({ method, operation }) => method === 'get' && operation.security?.length);
    expect(operations.length).toBeGreaterThan(15);
    for (const { path, operation } of operations) {
      const byAdmin = operation.security!.some((scheme) => 'adminToken' in scheme);
      const url = path.replace(/\{[^}]+\}/g, '1');
      const answer = await t.request('GET', url, byAdmin ? {} : { apiKey: merchant.apiKey });
      expect(answer.headers.get('cache-control'), `${url} → ${answer.status}`).toMatch(/^(no-store|private, no-cache)$/);
      expect(answer.headers.get('vary'), url).toBe(byAdmin ? 'Authorization' : 'X-API-KEY');
      const refused = await t.request('GET', url, byAdmin ? { adminToken: null } : {});
      expect(refused.status, url).toBe(401);
      expect(refused.headers.get('cache-control'), `${url} → 401`).toMatch(/^(no-store|private, no-cache)$/);
    }
    // A QR's long poll revalidates with its ETag: the caller's own cache may keep it, asking each time.
    const qr = await t.request('POST', '/api/v2/simple-qrs', { apiKey: merchant.apiKey, body: { business_code: merchant.businessCode, amount: 5 } });
    const read = await t.request('GET', `/api/v2/simple-qrs/${qr.body.id}`, { apiKey: merchant.apiKey });
    expect(read.headers.get('cache-control')).toBe('private, no-cache');
    expect(read.headers.get('etag')).toBeTruthy();
    const scraped = await t.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect([scraped.headers.get('cache-control'), scraped.headers.get('vary')]).toEqual(['no-store', 'Authorization']);
    // A public answer is not marked: the hosted pages and their status set their own.
    expect((await t.request('GET', '/healthz')).headers.get('vary')).toBeNull();
  });

  it('sends no-store with the onboarding done page that shows the first key', async () => {
    const partner = await t.createPartner();
    const intent = await newIntent(t, partner);
    const browser = new FlowBrowser(t, tokenOf(intent));
    await browser.register();
    await browser.post('/simulate-payment');
    const done = await browser.get('/done');
    expect(done.status).toBe(200);
    expect(done.text).toMatch(/mk_test_[0-9A-Za-z]{32}/);
    expect(done.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a cancel_url whose host is not a plain name, and puts only a checked origin into the CSP', async () => {
    const partner = await t.createPartner();
    for (const url of ['https://a;frame-ancestors*/x', "https://a;script-src 'unsafe-inline'/", 'https://user:pw@partner.example/']) {
      const response = await createIntent(t, partner, { cancel_url: url });
      expect(response.status, url).toBe(422);
      expect(response.body.errors).toEqual([expect.objectContaining({ field: 'cancel_url', code: 'invalid_format' })]);
    }
    const intent = await newIntent(t, partner, { cancel_url: 'https://Partner.Example:8443/volver/ñandú?x=1' });
    const browser = new FlowBrowser(t, tokenOf(intent));
    const form = await browser.get();
    const csp = form.headers.get('content-security-policy')!;
    expect(csp).toContain("form-action 'self' https://partner.example:8443;");
    expect(csp.split(';').map((d) => d.trim().split(' ')[0])).not.toContain('frame-ancestors *');
    const cancelled = await browser.post('/cancel');
    expect(cancelled.status).toBe(303);
    expect(cancelled.location).toBe('https://partner.example:8443/volver/%C3%B1and%C3%BA?x=1');
  });
});
