// The independent contract checker `npm run contract` puts in front of every test app (Stoplight Prism
// in proxy mode, helpers/prism-proxy.ts), shown here to see what it must see: an answer the document
// does not describe, and a request the document forbids. Without this, a run that reports no violation
// could mean a checker that never looked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { prismCanRelay, prismProblems, prismViolations, startPrismProxy, type PrismProxy } from '../helpers/prism-proxy.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('Stoplight Prism in front of the service', () => {
  let t: TestApp;
  let merchant: { businessCode: number; apiKey: string };
  let faithful: PrismProxy;
  let drifted: PrismProxy;
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
    merchant = await t.createMerchant();
    const document = t.app.swagger() as Json;
    faithful = await startPrismProxy(document, t.baseUrl);
    // A document that has drifted from the service: it promises a balance field the service never sends,
    // and allows QRs of at most Bs 100 where the service takes more.
    const stale: Json = structuredClone(document);
    const balance = stale.paths['/api/v2/balance'].get.responses['200'].content['application/json'].schema;
    balance.properties.reserved = { type: 'integer' };
    balance.required = [...balance.required, 'reserved'];
    const qrBody = stale.paths['/api/v2/simple-qrs'].post.requestBody.content['application/json'].schema;
    qrBody.properties.amount = { type: 'number', maximum: 100 };
    drifted = await startPrismProxy(stale, t.baseUrl);
  });
  afterAll(async () => {
    await drifted?.close();
    await faithful?.close();
    await t?.close();
  });

  const get = (proxy: PrismProxy, path: string) => fetch(proxy.url + path, { headers: { 'x-api-key': merchant.apiKey } });

  it('relays the answer, adds no CORS headers, and finds nothing wrong with a faithful document', async () => {
    const response = await get(faithful, '/api/v2/balance');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ business_code: merchant.businessCode, available: 0 });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(prismViolations(response.headers)).toEqual([]);
  });

  it('reports an answer the document does not describe', async () => {
    const response = await get(drifted, '/api/v2/balance');
    expect(response.status).toBe(200);
    const violations = prismViolations(response.headers);
    expect(violations).toContainEqual(expect.objectContaining({ location: ['response', 'body'], severity: 'Error' }));
    expect(violations.map((violation) => violation.message).join(' ')).toContain('reserved');
  });

  it('reports a request the document forbids that the service accepts, and the run counts it', async () => {
    const response = await fetch(`${drifted.url}/api/v2/simple-qrs`, {
      method: 'POST',
      headers: { 'x-api-key': merchant.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ business_code: merchant.businessCode, amount: 150 }),
    });
    expect(response.status).toBe(201);
    const problems = prismProblems('POST /api/v2/simple-qrs → 201', response.status, prismViolations(response.headers));
    expect(problems.join('\n')).toMatch(/request\.body.*100/);
  });

  it('reports a request the document forbids, beside the service refusing it', async () => {
    const response = await fetch(`${faithful.url}/api/v2/simple-qrs`, {
      method: 'POST',
      headers: { 'x-api-key': merchant.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 10 }),
    });
    expect(response.status).toBe(422);
    expect(prismViolations(response.headers)).toContainEqual(expect.objectContaining({ location: ['request', 'body'] }));
  });
});

describe('what the contract run makes of Prism\'s findings', () => {
  const request = (message: string): Parameters<typeof prismProblems>[2][number] => ({ location: ['request', 'body'], severity: 'Error', message });
  const answer = (message: string): Parameters<typeof prismProblems>[2][number] => ({ location: ['response', 'body'], severity: 'Error', message });

  it('counts every answer off the document, and a request off it only when the service accepted it', () => {
    expect(prismProblems('x', 422, [answer('off')])).toHaveLength(1);
    expect(prismProblems('x', 201, [request('off')])).toHaveLength(1);
    expect(prismProblems('x', 422, [request('off')])).toEqual([]);
  });

  it('counts a request Prism could not route, whatever the answer: it went through unchecked', () => {
    const unrouted = { location: ['request'], severity: 'Warning', message: 'Selected route not found' };
    expect(prismProblems('x', 404, [unrouted])).toHaveLength(1);
  });

  it('reads a header too long for Prism to list as one finding', () => {
    expect(prismViolations(new Headers({ 'sl-violations': 'Too many violations! 57' }))).toHaveLength(1);
  });

  it('sends straight to the app only what Prism cannot relay as sent', () => {
    expect(prismCanRelay('/api/v2/simple-qrs', 'application/json', '{"a":1}')).toBe(true);
    expect(prismCanRelay('/api/v2/simple-qrs', 'text/plain', 'hello')).toBe(true);
    expect(prismCanRelay('/api/v2/simple-qrs', 'application/x-www-form-urlencoded', 'a=1')).toBe(true);
    expect(prismCanRelay('/api/v2/simple-qrs', undefined, undefined)).toBe(true);
    expect(prismCanRelay('/api/v2/simple-qrs', 'application/json', '{"a":')).toBe(false);
    for (const scalar of ['null', '0', 'false', '""']) expect(prismCanRelay('/api/v2/simple-qrs', 'application/json', scalar)).toBe(false);
    expect(prismCanRelay('/api/v2/simple-qrs/%E0%A4%A', undefined, undefined)).toBe(false);
  });
});
