import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredQrs } from '../../src/qr/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr, pay, type Merchant } from './qr-helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

describe.each(databaseKinds())('simple QR expiry, cancel and list on %s', (kind) => {
  let t: TestApp;
  let merchant: Merchant;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    merchant = await t.createMerchant();
  });
  afterAll(() => t.close());

  const get = (id: string, headers: Record<string, string> = {}) => t.request('GET', `/api/v2/simple-qrs/${id}`, { apiKey: merchant.apiKey, headers });

  it('reads an absolute qr_expiration in America/La_Paz (UTC-4)', async () => {
    t.clock.set('2026-11-22T16:00:00.000Z');
    const qr = await createQr(t, merchant, { qr_expiration: '2026-11-22 18:30:00' });
    expect(qr.qr_expiration).toBe('2026-11-22 18:30:00');
    expect(qr.expires_at).toBe('2026-11-22T22:30:00.000Z');
  });

  it('reads an absolute qr_expiration in the configured SERVICE_TIMEZONE', async () => {
    const tokyo = await startTestApp({ kind, env: { SERVICE_TIMEZONE: 'Asia/Tokyo' } });
    try {
      const m = await tokyo.createMerchant();
      const qr = await createQr(tokyo, m, { qr_expiration: '2026-11-23 09:00:00' });
      expect(qr.expires_at).toBe('2026-11-23T00:00:00.000Z');
      expect(qr.qr_expiration).toBe('2026-11-23 09:00:00');
    } finally {
      await tokyo.close();
    }
  });

  it.each([
    ['+5m', 5 * 60_000], ['+5 min', 5 * 60_000], ['+5 minutes', 5 * 60_000], ['+1 minute', 60_000],
    ['+2h', 2 * 3_600_000], ['+1 hour', 3_600_000], ['+3 hours', 3 * 3_600_000],
    ['+1d', 86_400_000], ['+1 day', 86_400_000], ['+365 days', 365 * 86_400_000],
  ])('reads a relative qr_expiration %s', async (text, ms) => {
    t.clock.set('2026-11-22T16:00:00.000Z');
    const qr = await createQr(t, merchant, { qr_expiration: text });
    expect(qr.expires_at).toBe(new Date(Date.parse('2026-11-22T16:00:00.000Z') + ms).toISOString());
  });

  it('accepts an absolute expiry exactly 365 days ahead', async () => {
    t.clock.set('2026-11-22T16:00:00.000Z');
    const qr = await createQr(t, merchant, { qr_expiration: '2027-11-22 12:00:00' });
    expect(qr.expires_at).toBe('2027-11-22T16:00:00.000Z');
  });

  it('is payable until the instant before expires_at and CANCELED (expired) from that instant on', async () => {
    t.clock.set('2026-11-22T16:00:00.000Z');
    const qr = await createQr(t, merchant, { qr_expiration: '+5m', is_multi_use: true });
    t.clock.set('2026-11-22T16:04:59.999Z');
    expect((await get(qr.id)).body.status).toBe('ACTIVE');
    expect((await pay(t, merchant, qr.id)).status).toBe(201);
    t.clock.set('2026-11-22T16:05:00.000Z');
    const expired = await get(qr.id);
    expect(expired.body).toMatchObject({ status: 'CANCELED', cancel_reason: 'expired', canceled_at: '2026-11-22T16:05:00.000Z', updated_at: '2026-11-22T16:05:00.000Z' });
    const refused = await pay(t, merchant, qr.id);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('QR_NOT_PAYABLE');
    const cancel = await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('QR_NOT_CANCELABLE');
    expect((await get(qr.id)).body.payments_count).toBe(1);
  });

  it('changes the ETag at expiry, and the sweep records it without changing body or ETag again', async () => {
    t.clock.set('2026-11-22T16:00:00.000Z');
    const qr = await createQr(t, merchant, { qr_expiration: '+1m' });
    const before = await get(qr.id);
    t.clock.set('2026-11-22T16:01:00.000Z');
    const expired = await get(qr.id, { 'if-none-match': before.headers.get('etag')! });
    expect(expired.status).toBe(200);
    expect(expired.body.status).toBe('CANCELED');
    const swept = await sweepExpiredQrs(t.db, t.config, t.clock.now(), 1000);
    expect(swept).toBeGreaterThanOrEqual(1);
    const after = await get(qr.id);
    expect(after.body).toEqual(expired.body);
    expect(after.headers.get('etag')).toBe(expired.headers.get('etag'));
    const owned = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    const canceled = owned.filter((e) => e.type === 'simple_qr.canceled' && (e.data as { id: string }).id === qr.id);
    expect(canceled).toHaveLength(1);
    expect(canceled[0]!.data).toMatchObject({ status: 'CANCELED', cancel_reason: 'expired' });
    expect(canceled[0]!.data).not.toHaveProperty('qr_image');
    expect(await sweepExpiredQrs(t.db, t.config, t.clock.now(), 1000)).toBe(0);
  });

  it('cancels an ACTIVE QR once, with an event, and refuses a second cancel and payments', async () => {
    t.clock.set('2026-11-22T16:00:00.000Z');
    const qr = await createQr(t, merchant, { description: 'Cancel me' });
    t.clock.advance(1000);
    const canceled = await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant', canceled_at: '2026-11-22T16:00:01.000Z' });
    const again = await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('QR_NOT_CANCELABLE');
    expect((await pay(t, merchant, qr.id)).status).toBe(409);
    const owned = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
    expect(owned.filter((e) => e.type === 'simple_qr.canceled' && (e.data as { id: string }).id === qr.id)).toHaveLength(1);
  });

  it('shows a cancel at once to the next read, whatever the case of the id in either path', async () => {
    for (const [cancelId, readId] of [['upper', 'lower'], ['lower', 'upper'], ['upper', 'upper']] as const) {
      const qr = await createQr(t, merchant);
      const spelled = (which: 'upper' | 'lower') => (which === 'upper' ? qr.id.toUpperCase() : qr.id);
      const before = await t.request('GET', `/api/v2/simple-qrs/${spelled(readId)}`, { apiKey: merchant.apiKey });
      expect(before.body.status).toBe('ACTIVE'); // now in the read cache
      const canceled = await t.request('POST', `/api/v2/simple-qrs/${spelled(cancelId)}/cancel`, { apiKey: merchant.apiKey });
      expect(canceled.status).toBe(200);
      const after = await t.request('GET', `/api/v2/simple-qrs/${spelled(readId)}`, { apiKey: merchant.apiKey });
      expect({ cancelId, readId, status: after.body.status }).toEqual({ cancelId, readId, status: 'CANCELED' });
    }
  });

  it('refuses to cancel a PAID QR', async () => {
    const qr = await createQr(t, merchant);
    expect((await pay(t, merchant, qr.id)).status).toBe(201);
    const cancel = await t.request('POST', `/api/v2/simple-qrs/${qr.id}/cancel`, { apiKey: merchant.apiKey });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('QR_NOT_CANCELABLE');
  });

  it('lists QRs newest first, paginated, filtered by effective status', async () => {
    const m = await t.createMerchant({ name: 'Lista' });
    t.clock.set('2026-11-22T16:00:00.000Z');
    const active = await createQr(t, m);
    t.clock.advance(1000);
    const paid = await createQr(t, m);
    await pay(t, m, paid.id);
    t.clock.advance(1000);
    const canceled = await createQr(t, m);
    await t.request('POST', `/api/v2/simple-qrs/${canceled.id}/cancel`, { apiKey: m.apiKey });
    t.clock.advance(1000);
    const expiring = await createQr(t, m, { qr_expiration: '+1m' });
    const list = (query: string) => t.request('GET', `/api/v2/simple-qrs${query}`, { apiKey: m.apiKey });
    const all = await list('');
    expect(all.body.data.map((q: { id: string }) => q.id)).toEqual([expiring.id, canceled.id, paid.id, active.id]);
    expect(all.body.meta).toEqual({ current_page: 1, last_page: 1, per_page: 15, total: 4 });
    expect((await list('?status=ACTIVE')).body.data.map((q: { id: string }) => q.id)).toEqual([expiring.id, active.id]);
    t.clock.advance(60_000);
    expect((await list('?status=ACTIVE')).body.data.map((q: { id: string }) => q.id)).toEqual([active.id]);
    const canceledPage = await list('?status=CANCELED');
    expect(canceledPage.body.data.map((q: { id: string; cancel_reason: string }) => [q.id, q.cancel_reason])).toEqual([[expiring.id, 'expired'], [canceled.id, 'merchant']]);
    expect((await list('?status=PAID')).body.data.map((q: { id: string }) => q.id)).toEqual([paid.id]);
    const page2 = await list('?per_page=3&page=2');
    expect(page2.body.data.map((q: { id: string }) => q.id)).toEqual([active.id]);
    expect(page2.body.meta).toEqual({ current_page: 2, last_page: 2, per_page: 3, total: 4 });
    const past = await list('?page=9');
    expect(past.body.data).toEqual([]);
    expect(past.body.meta.total).toBe(4);
  });
});
