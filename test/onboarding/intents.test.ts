// The partner API of onboarding intents (docs/api-reference.md#create-an-intent, docs/api-reference.md#read-an-intent), the expiry sweep and the partner's events.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredIntents } from '../../src/onboarding/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createIntent, FlowBrowser, newIntent, tokenOf, type Partner } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

const MINUTE = 60_000;

describe.each(databaseKinds())('onboarding intents API on %s', (kind) => {
  let t: TestApp;
  let partner: Partner;
  let otherPartner: Partner;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
    partner = await t.createPartner('Partner A');
    otherPartner = await t.createPartner('Partner B');
  });
  afterAll(() => t.close());

  const read = (code: string, key = partner.masterKey) => t.request('GET', `/api/v2/onboarding/intent/${code}`, { apiKey: key });

  it('creates an intent with a url on the public base and a 120-minute lifetime', async () => {
    const response = await createIntent(t, partner, { success_url: 'https://partner.example/ok', metadata: { customer: 'cus_1' } });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(['code', 'expires_at', 'url']);
    expect(response.body.code).toMatch(/^onb_[0-9A-Za-z]{22}$/);
    expect(response.body.url).toMatch(/^https:\/\/pay\.example\.com\/onboarding\/[0-9A-Za-z]{32}$/);
    expect(tokenOf(response.body)).not.toContain(response.body.code.slice(4));
    expect(response.body.expires_at).toBe(new Date(t.clock.now().getTime() + 120 * MINUTE).toISOString());
  });

  it('reads an intent without its url; status open, business_code null', async () => {
    const created = await newIntent(t, partner, { cancel_url: 'http://partner.example/cancel', metadata: { n: 1, ok: true, none: null, s: 'x' } });
    const response = await read(created.code);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      code: created.code, status: 'open', expires_at: created.expires_at, created_at: t.clock.now().toISOString(),
      completed_at: null, cancelled_at: null, business_code: null, metadata: { n: 1, ok: true, none: null, s: 'x' },
      success_url: null, cancel_url: 'http://partner.example/cancel',
    });
    expect(response.text).not.toContain('"url"');
  });

  it('replays the same intent for the same key and body, also after it expired', async () => {
    const key = randomUUID();
    const body = { metadata: { b: 2, a: 1 } };
    const first = await createIntent(t, partner, body, key);
    const again = await createIntent(t, partner, { metadata: { a: 1, b: 2 } }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    t.clock.advance(121 * MINUTE);
    const late = await createIntent(t, partner, body, key);
    expect(late.status).toBe(201);
    expect(late.headers.get('idempotent-replayed')).toBe('true');
    expect(late.body).toEqual(first.body);
    expect((await read(first.body.code)).body.status).toBe('expired');
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the same key with another body', async () => {
    const key = randomUUID();
    await createIntent(t, partner, { metadata: { a: 1 } }, key);
    const other = await createIntent(t, partner, { metadata: { a: 2 } }, key);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('requires an Idempotency-Key (UUID v4) and a master key', async () => {
    const missing = await t.request('POST', '/api/v2/onboarding/intent', { apiKey: partner.masterKey, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('IDEMPOTENCY_KEY_MISSING');
    const invalid = await createIntent(t, partner, {}, 'not-a-uuid');
    expect(invalid.body.code).toBe('IDEMPOTENCY_KEY_INVALID');
    const merchant = await t.createMerchant();
    const withMerchantKey = await createIntent(t, { partnerId: 0, masterKey: merchant.apiKey });
    expect(withMerchantKey.status).toBe(403);
    expect(withMerchantKey.body.code).toBe('MASTER_KEY_REQUIRED');
    expect((await t.request('POST', '/api/v2/onboarding/intent', { body: {} })).status).toBe(401);
    const created = await newIntent(t, partner);
    expect((await read(created.code, merchant.apiKey)).body.code).toBe('MASTER_KEY_REQUIRED');
  });

  it('accepts an empty body', async () => {
    const response = await t.request('POST', '/api/v2/onboarding/intent', { apiKey: partner.masterKey, headers: { 'idempotency-key': randomUUID() } });
    expect(response.status).toBe(201);
  });

  it('validates the redirect URLs', async () => {
    for (const url of ['partner.example/ok', 'ftp://partner.example/x', 'javascript:alert(1)', 'https://', `https://p.example/${'a'.repeat(2048)}`, 'http:// spaced.example']) {
      const response = await createIntent(t, partner, { success_url: url, cancel_url: url });
      expect(response.status, url).toBe(422);
      expect(response.body.errors.map((e: { field: string }) => e.field).sort(), url).toEqual(['cancel_url', 'success_url']);
    }
    const long = await createIntent(t, partner, { success_url: `https://p.example/${'a'.repeat(2048)}` });
    expect(long.body.errors[0]).toMatchObject({ field: 'success_url', code: 'too_long' });
    expect((await createIntent(t, partner, { success_url: 5 })).body.errors[0]).toMatchObject({ field: 'success_url', code: 'invalid_type' });
  });

  it('enforces the metadata limits', async () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect((await createIntent(t, partner, { metadata: fifty })).status).toBe(201);
    const tooMany = await createIntent(t, partner, { metadata: { ...fifty, extra: 1 } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors[0]).toMatchObject({ field: 'metadata', code: 'too_large' });
    expect((await createIntent(t, partner, { metadata: { ['k'.repeat(40)]: 'ok', v: 'x'.repeat(500) } })).status).toBe(201);
    const longKey = await createIntent(t, partner, { metadata: { ['k'.repeat(41)]: 'x' } });
    expect(longKey.status).toBe(422);
    expect(longKey.body.errors).toEqual([{ field: `metadata.${'k'.repeat(41)}`, code: 'too_long', message: 'keys must be at most 40 characters' }]);
    const longValue = await createIntent(t, partner, { metadata: { v: 'x'.repeat(501) } });
    expect(longValue.body.errors[0]).toMatchObject({ field: 'metadata.v', code: 'too_long' });
    const nested = await createIntent(t, partner, { metadata: { o: { a: 1 }, l: [1] } });
    expect(nested.status).toBe(422);
    expect(nested.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort()).toEqual(['metadata.l:invalid_type', 'metadata.o:invalid_type']);
    expect((await createIntent(t, partner, { metadata: 'x' })).body.errors[0]).toMatchObject({ field: 'metadata', code: 'invalid_type' });
    const unknown = await createIntent(t, partner, { metadata: {}, url: 'x' });
    expect(unknown.body.errors[0]).toMatchObject({ field: 'url', code: 'unknown_field' });
  });

  it('shows a partner only its own intents (404 otherwise)', async () => {
    const created = await newIntent(t, partner);
    const foreign = await read(created.code, otherPartner.masterKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('NOT_FOUND');
    expect((await read('onb_AAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
    expect((await read('nonsense')).status).toBe(404);
  });

  it('reads expired at once past expires_at; the sweep records it and emits onboarding_intent.expired with the metadata', async () => {
    const metadata = { customer: 'cus_9', tier: 3, vip: false, note: null };
    const created = await newIntent(t, otherPartner, { metadata });
    t.clock.advance(120 * MINUTE - 1);
    expect((await read(created.code, otherPartner.masterKey)).body.status).toBe('open');
    t.clock.advance(1);
    expect((await read(created.code, otherPartner.masterKey)).body.status).toBe('expired');
    expect(await sweepExpiredIntents(t.db, t.clock.now(), 1000)).toBeGreaterThanOrEqual(1);
    const after = await read(created.code, otherPartner.masterKey);
    expect(after.body.status).toBe('expired');
    const events = await eventsOfOwner(t.db, { kind: 'partner', partnerId: otherPartner.partnerId });
    const expired = events.filter((e) => e.type === 'onboarding_intent.expired' && e.data.code === created.code);
    expect(expired).toHaveLength(1);
    expect(expired[0]!.data).toEqual(after.body);
    expect(expired[0]!.data.metadata).toEqual(metadata);
    expect(await sweepExpiredIntents(t.db, t.clock.now(), 1000)).toBe(0); // idempotent
  });

  it('a short ONBOARDING_INTENT_TTL applies to new intents and the expired link answers 410', async () => {
    const short = await startTestApp({ kind, database: t.database, env: { ONBOARDING_INTENT_TTL: '2m' }, clock: t.clock });
    try {
      const created = await newIntent(short, partner);
      expect(created.expires_at).toBe(new Date(t.clock.now().getTime() + 2 * MINUTE).toISOString());
      const browser = new FlowBrowser(short, tokenOf(created));
      expect((await browser.get()).status).toBe(200);
      t.clock.advance(2 * MINUTE);
      const gone = await browser.get();
      expect(gone.status).toBe(410);
      expect(gone.text).toContain('Este enlace de registro venció');
    } finally {
      await short.close();
    }
  });
});
