import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedAddressReason } from '../../src/webhooks/ssrf.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint, startReceiver, webhookJobs, type Receiver } from './harness.ts';

describe('address classification of the SSRF guard', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['::1', 'loopback'], ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['fd12::1', 'private'],
    ['169.254.169.254', 'cloud metadata'], ['fd00:ec2::254', 'cloud metadata'], ['169.254.1.1', 'link-local'], ['fe80::1', 'link-local'],
    ['100.64.0.1', 'CGNAT'], ['100.127.255.254', 'CGNAT'], ['0.0.0.0', 'unspecified'], ['::', 'unspecified'], ['224.0.0.1', 'multicast'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111'])('allows the public address %s', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });
});

describe.each(databaseKinds())('SSRF guard at delivery time (MODE=live) on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    // Endpoints are registered in sandbox (which takes any http(s) URL); a live dispatcher then sends.
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('refuses http, loopback, a name resolving to 127.0.0.1, private, metadata and CGNAT addresses, and records each refusal as an attempt', async () => {
    const port = new URL(receiver.url).port;
    const urls = [
      `http://example.com/hooks`,
      `https://127.0.0.1:${port}/hooks`,
      `https://localhost:${port}/hooks`,
      'https://10.0.0.8/hooks',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.1.2/hooks',
      `https://[::1]:${port}/hooks`,
      `https://[::ffff:127.0.0.1]:${port}/hooks`,
    ];
    const merchant = await t.createMerchant();
    const endpoints = new Map<string, string>();
    for (const url of urls) endpoints.set((await createEndpoint(t, merchant.apiKey, { url })).id, url);
    await commitPayment(t, merchant);

    const live = webhookJobs(t, { mode: 'live' });
    await live.deliverAll();
    await live.stop();

    expect(receiver.received).toHaveLength(0);
    const list = await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey });
    const event = await t.request('GET', `/api/v2/events/${list.body.data[0].id}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts).toHaveLength(urls.length);
    const errors = new Map<string, string>(event.body.attempts.map((a: { endpoint_id: string; error: string }) => [endpoints.get(a.endpoint_id), a.error]));
    for (const attempt of event.body.attempts) expect(attempt.status_code).toBeNull();
    expect(errors.get('http://example.com/hooks')).toMatch(/refused: URL must use https/);
    expect(errors.get(`https://127.0.0.1:${port}/hooks`)).toMatch(/refused: .*loopback/);
    expect(errors.get(`https://localhost:${port}/hooks`)).toMatch(/refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(errors.get('https://10.0.0.8/hooks')).toMatch(/refused: .*private/);
    expect(errors.get('https://169.254.169.254/latest/meta-data')).toMatch(/refused: .*cloud metadata/);
    expect(errors.get('https://100.64.1.2/hooks')).toMatch(/refused: .*CGNAT/);
    expect(errors.get(`https://[::1]:${port}/hooks`)).toMatch(/refused: .*loopback/);
    expect(errors.get(`https://[::ffff:127.0.0.1]:${port}/hooks`)).toMatch(/refused: .*loopback/);
  });
});
