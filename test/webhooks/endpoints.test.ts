import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createEndpoint } from './harness.ts';

describe.each(databaseKinds())('webhook endpoints API on %s', (kind) => {
  let t: TestApp;
  let merchant: { businessCode: number; apiKey: string };
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant({ name: 'Tienda' });
  });
  afterAll(() => t.close());

  it('creates an endpoint that receives every event by default and shows its whsec_ secret once', async () => {
    const response = await t.request('POST', '/api/v2/webhook-endpoints', {
      apiKey: merchant.apiKey,
      body: { url: 'https://shop.example.com/hooks', description: 'orders' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ url: 'https://shop.example.com/hooks', events: ['*'], status: 'enabled', description: 'orders' });
    expect(response.body.id).toMatch(/^we_[0-9A-Za-z]{24}$/);
    expect(response.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(response.body.secret.slice(6), 'base64')).toHaveLength(32);

    const read = await t.request('GET', `/api/v2/webhook-endpoints/${response.body.id}`, { apiKey: merchant.apiKey });
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    expect(read.body).toMatchObject({ id: response.body.id, events: ['*'], status: 'enabled' });
  });

  it('lists endpoints paginated, newest first, without secrets', async () => {
    const other = await t.createMerchant();
    for (const n of [1, 2, 3]) await createEndpoint(t, other.apiKey, { url: `https://example.com/${n}` });
    const page = await t.request('GET', '/api/v2/webhook-endpoints?per_page=2&page=1', { apiKey: other.apiKey });
    expect(page.status).toBe(200);
    expect(page.body.meta).toEqual({ current_page: 1, last_page: 2, per_page: 2, total: 3 });
    expect(page.body.data.map((e: { url: string }) => e.url)).toEqual(['https://example.com/3', 'https://example.com/2']);
    expect(page.body.data.every((e: object) => !('secret' in e))).toBe(true);
    const unknown = await t.request('GET', '/api/v2/webhook-endpoints?pages=2', { apiKey: other.apiKey });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0]).toMatchObject({ field: 'pages', code: 'unknown_field' });
  });

  it('accepts known event types as a filter and answers 422 invalid_value for anything else', async () => {
    const ok = await createEndpoint(t, merchant.apiKey, { url: 'https://example.com/t', events: ['transfer.completed', 'simple_qr.paid'] });
    expect(ok.events).toEqual(['transfer.completed', 'simple_qr.paid']);
    const bad = await t.request('POST', '/api/v2/webhook-endpoints', {
      apiKey: merchant.apiKey,
      body: { url: 'https://example.com/t', events: ['transfer.completed', 'payment.done'] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'events.1', code: 'invalid_value' })]);
    const mixed = await t.request('POST', '/api/v2/webhook-endpoints', {
      apiKey: merchant.apiKey,
      body: { url: 'https://example.com/t', events: ['*', 'simple_qr.paid'] },
    });
    expect(mixed.status).toBe(422);
    expect(mixed.body.errors).toEqual([expect.objectContaining({ field: 'events', code: 'invalid_value' })]);
  });

  it('rejects URLs that are not absolute http(s), too long, or carry credentials, listing every failing field', async () => {
    for (const url of ['not a url', 'ftp://example.com/x', '/relative', 'https://user:pw@example.com/', `https://example.com/${'a'.repeat(2048)}`]) {
      const response = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url } });
      expect(response.status, url).toBe(422);
      expect(response.body.errors[0].field).toBe('url');
    }
    const both = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url: 'nope', events: [], colour: 'red' } });
    expect(both.status).toBe(422);
    expect(both.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['colour', 'events']);
  });

  it('updates url, events and status; disabling and enabling again', async () => {
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://example.com/a' });
    const patched = await t.request('PATCH', `/api/v2/webhook-endpoints/${endpoint.id}`, {
      apiKey: merchant.apiKey,
      body: { url: 'https://example.com/b', events: ['transfer.failed'], status: 'disabled' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ url: 'https://example.com/b', events: ['transfer.failed'], status: 'disabled' });
    expect(patched.body.secret).toBeUndefined();
    const enabled = await t.request('PATCH', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey, body: { status: 'enabled' } });
    expect(enabled.body.status).toBe('enabled');
    const bad = await t.request('PATCH', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey, body: { status: 'paused' } });
    expect(bad.status).toBe(422);
  });

  it('deletes an endpoint: it is then not found, and not listed', async () => {
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://example.com/gone' });
    const deleted = await t.request('DELETE', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey });
    expect(deleted.status).toBe(204);
    expect((await t.request('GET', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey })).status).toBe(404);
    expect((await t.request('DELETE', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey })).status).toBe(404);
  });

  it('rotates the secret: a new whsec_ secret is shown, and GET still hides it', async () => {
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://example.com/r' });
    const rotated = await t.request('POST', `/api/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, { apiKey: merchant.apiKey });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect((await t.request('GET', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey })).body.secret).toBeUndefined();
  });

  it('keeps each owner to its own endpoints: another merchant and a partner get 404', async () => {
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://example.com/mine' });
    const stranger = await t.createMerchant();
    const partner = await t.createPartner();
    for (const apiKey of [stranger.apiKey, partner.masterKey]) {
      expect((await t.request('GET', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey })).status).toBe(404);
      expect((await t.request('PATCH', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey, body: { status: 'disabled' } })).status).toBe(404);
      expect((await t.request('POST', `/api/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, { apiKey })).status).toBe(404);
    }
  });

  it('lets a partner register endpoints with its master key', async () => {
    const partner = await t.createPartner();
    const endpoint = await createEndpoint(t, partner.masterKey, { url: 'https://partner.example.com/hooks', events: ['onboarding_intent.completed'] });
    const list = await t.request('GET', '/api/v2/webhook-endpoints', { apiKey: partner.masterKey });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
  });

  it('documents the webhook and events routes in the OpenAPI document', async () => {
    const response = await t.request('GET', '/openapi.json');
    expect(response.status).toBe(200);
    const spec = JSON.parse(response.text);
    for (const path of ['/api/v2/webhook-endpoints', '/api/v2/webhook-endpoints/{id}', '/api/v2/webhook-endpoints/{id}/rotate-secret', '/api/v2/events', '/api/v2/events/{id}', '/api/v2/events/{id}/redeliver']) {
      expect(spec.paths[path], path).toBeDefined();
    }
  });

  it('needs an API key', async () => {
    const response = await t.request('GET', '/api/v2/webhook-endpoints');
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('API_KEY_MISSING');
  });
});

describe.each(databaseKinds())('webhook endpoints in MODE=live on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startLiveApp({ kind });
  });
  afterAll(() => t.close());

  it('refuses http and private or loopback IP literals with 422, on create and update', async () => {
    const merchant = await t.createMerchant();
    for (const url of ['http://example.com/hooks', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://100.64.0.1/x']) {
      const response = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url } });
      expect(response.status, url).toBe(422);
      expect(response.body.errors).toEqual([expect.objectContaining({ field: 'url', code: 'invalid_value' })]);
    }
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: 'https://example.com/hooks' });
    const patched = await t.request('PATCH', `/api/v2/webhook-endpoints/${endpoint.id}`, { apiKey: merchant.apiKey, body: { url: 'http://example.com/' } });
    expect(patched.status).toBe(422);
  });
});
