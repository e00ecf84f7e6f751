// The independent contract checker `npm run contract` puts in front of every test app (Stoplight Prism
// in proxy mode, helpers/prism-proxy.ts), shown here to see what it must see: an answer the document
// does not describe, and a request the document forbids. Without this, a run that reports no violation
// could mean a checker that never looked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { prismViolations, startPrismProxy, type PrismProxy } from '../helpers/prism-proxy.ts';

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
    // A document that has drifted from the service: it promises a balance field the service never sends.
    const stale: Json = structuredClone(document);
    const balance = stale.paths['/api/v2/balance'].get.responses['200'].content['application/json'].schema;
    balance.properties.reserved = { type: 'integer' };
    balance.required = [...balance.required, 'reserved'];
    drifted = await startPrismProxy(stale, t.baseUrl);
  });
  afterAll(async () => {
    await drifted?.close();
    await faithful?.close();
    await t?.close();
  });

  const get = (proxy: PrismProxy, path: string) => fetch(proxy.url + path, { headers: { 'x-api-key': merchant.apiKey } });

  it('relays the service unchanged and finds nothing wrong with a faithful document', async () => {
    const response = await get(faithful, '/api/v2/balance');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ business_code: merchant.businessCode, available: 0 });
    expect(prismViolations(response.headers)).toEqual([]);
  });

  it('reports an answer the document does not describe', async () => {
    const response = await get(drifted, '/api/v2/balance');
    expect(response.status).toBe(200);
    const violations = prismViolations(response.headers);
    expect(violations).toContainEqual(expect.objectContaining({ location: ['response', 'body'], severity: 'Error' }));
    expect(violations.map((violation) => violation.message).join(' ')).toContain('reserved');
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
