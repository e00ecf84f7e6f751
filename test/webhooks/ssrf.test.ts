import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedAddressReason, DESTINATION_UNREACHABLE } from '../../src/webhooks/ssrf.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startLiveApp } from '../helpers/baneco.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint, startReceiver, webhookJobs, type Receiver } from './harness.ts';

describe('address classification of the SSRF guard', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['::1', 'loopback'], ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'], ['172.16.0.1', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'], ['fd12::1', 'unique-local'],
    ['169.254.169.254', 'cloud metadata'], ['fd00:ec2::254', 'cloud metadata'], ['169.254.1.1', 'link-local'], ['fe80::1', 'link-local'],
    ['100.64.0.1', 'CGNAT'], ['100.127.255.254', 'CGNAT'], ['0.0.0.0', 'unspecified'], ['::', 'unspecified'], ['224.0.0.1', 'multicast'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  // Each of these reaches 127.0.0.1 (or another IPv4 address) through an IPv6 transition mechanism.
  it.each([
    ['::127.0.0.1', 'IPv4-compatible'], ['::7f00:1', 'IPv4-compatible'], ['::8.8.8.8', 'IPv4-compatible'],
    ['::ffff:0:7f00:1', 'SIIT'], ['::ffff:0:127.0.0.1', 'SIIT'],
    ['64:ff9b::7f00:1', 'NAT64'], ['64:ff9b::8.8.8.8', 'NAT64'], ['64:ff9b:1::a00:1', 'NAT64'],
    ['2002:7f00:1::', '6to4'], ['2002:808:808::1', '6to4'],
    ['2001:0:7f00:1::', 'Teredo'], ['2001::1', 'Teredo'],
    ['::ffff:7f00:1', 'loopback'], ['0:0:0:0:0:ffff:a00:1', 'private'], ['::FFFF:169.254.169.254', 'cloud metadata'],
    ['fc00::1', 'unique-local'], ['ff02::1', 'multicast'], ['fec0::1', 'site-local'],
    ['3fff::1', 'reserved'], ['5f00::1', 'reserved'], ['2001:2::1', 'reserved'], ['2001:20::1', 'reserved'], ['192.88.99.1', '6to4 relay'],
  ])('refuses the IPv6 form %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2001:4860:4860::8888'])('allows the public address %s', (address) => {
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

    const live = webhookJobs(t, { destinations: { requireHttps: true, guardAddresses: true } });
    await live.deliverAll();
    await live.stop();

    expect(receiver.received).toHaveLength(0);
    const list = await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey });
    const event = await t.request('GET', `/api/v2/events/${list.body.data[0].id}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts).toHaveLength(urls.length);
    const errors = new Map<string, string>(event.body.attempts.map((a: { endpoint_id: string; error: string }) => [endpoints.get(a.endpoint_id), a.error]));
    for (const attempt of event.body.attempts) expect(attempt.status_code).toBeNull();
    // Every refusal reads the same: the owner of an endpoint learns nothing of what a name resolved to.
    for (const url of urls) expect(errors.get(url), url).toBe(DESTINATION_UNREACHABLE);
  });

  it('records a name that does not resolve in the same words as a refused private destination: no map of internal names', async () => {
    const merchant = await t.createMerchant();
    const missing = await createEndpoint(t, merchant.apiKey, { url: 'https://no-such-host.invalid/hooks' });
    const refused = await createEndpoint(t, merchant.apiKey, { url: 'https://10.0.0.8/hooks' });
    await commitPayment(t, merchant);
    const live = webhookJobs(t, { destinations: { requireHttps: true, guardAddresses: true } });
    await live.deliverAll();
    await live.stop();
    const list = await t.request('GET', '/api/v2/events', { apiKey: merchant.apiKey });
    const event = await t.request('GET', `/api/v2/events/${list.body.data[0].id}`, { apiKey: merchant.apiKey });
    const errorOf = (id: string) => event.body.attempts.find((a: { endpoint_id: string }) => a.endpoint_id === id);
    expect(errorOf(missing.id)).toMatchObject({ status_code: null, error: DESTINATION_UNREACHABLE });
    expect(errorOf(missing.id).error).toBe(errorOf(refused.id).error);
  });
});

describe.each(databaseKinds())('webhook destinations chosen by mode and WEBHOOK_PRIVATE_TARGETS on %s', (kind) => {
  let live: TestApp;
  let denying: TestApp;
  let allowing: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    live = await startLiveApp({ kind, plugins: [fixtureRoutes] });
    denying = await startTestApp({ kind, plugins: [fixtureRoutes], env: { WEBHOOK_PRIVATE_TARGETS: 'deny' } });
    allowing = await startTestApp({ kind, plugins: [fixtureRoutes] });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await allowing?.close();
    await denying?.close();
    await live?.close();
  });

  const register = (t: TestApp, apiKey: string, url: string) =>
    t.request('POST', '/api/v2/webhook-endpoints', { apiKey, body: { url } });

  it('refuses, when the endpoint is saved in live mode, every IPv6 literal that reaches a blocked address', async () => {
    const merchant = await live.createMerchant();
    for (const host of ['[::127.0.0.1]', '[2002:7f00:1::]', '[2001:0:7f00:1::]', '[::ffff:0:7f00:1]', '[64:ff9b::7f00:1]', '[::ffff:127.0.0.1]', '[fd00::1]']) {
      const response = await register(live, merchant.apiKey, `https://${host}/hooks`);
      expect(response.status, host).toBe(422);
      expect(response.body.errors).toEqual([expect.objectContaining({ field: 'url', code: 'invalid_value' })]);
    }
    expect((await register(live, merchant.apiKey, 'https://[2606:4700:4700::1111]/hooks')).status).toBe(201);
  });

  it('guards a sandbox with WEBHOOK_PRIVATE_TARGETS=deny: private literals refused when saved, a name resolving to loopback refused at delivery', async () => {
    const merchant = await denying.createMerchant();
    const port = new URL(receiver.url).port;
    expect((await register(denying, merchant.apiKey, `http://127.0.0.1:${port}/hooks`)).status).toBe(422);
    const byName = await register(denying, merchant.apiKey, `http://localhost:${port}/hooks`);
    expect(byName.status).toBe(201); // http stays allowed in a sandbox; the address is what is guarded
    await commitPayment(denying, merchant);
    const jobs = webhookJobs(denying);
    await jobs.deliverAll();
    await jobs.stop();
    expect(receiver.received).toHaveLength(0);
    const list = await denying.request('GET', '/api/v2/events', { apiKey: merchant.apiKey });
    const event = await denying.request('GET', `/api/v2/events/${list.body.data[0].id}`, { apiKey: merchant.apiKey });
    expect(event.body.attempts.map((a: { error: string }) => a.error)).toEqual([DESTINATION_UNREACHABLE]);
  });

  it('refuses link-local and cloud metadata destinations even in a default sandbox, in any spelling', async () => {
    const merchant = await allowing.createMerchant();
    const urls = ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://169.254.1.1/', 'http://100.100.100.200/',
      'http://[::ffff:169.254.169.254]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://[fd00:ec2::254]/'];
    const endpoints = new Map<string, string>();
    for (const url of urls) {
      const response = await register(allowing, merchant.apiKey, url);
      expect(response.status, url).toBe(201); // a sandbox takes any http(s) URL; the delivery is what is refused
      endpoints.set(response.body.id, url);
    }
    const local = await register(allowing, merchant.apiKey, `${receiver.url}/still-local`);
    await commitPayment(allowing, merchant);
    const jobs = webhookJobs(allowing, { timeoutMs: 2_000 });
    await jobs.deliverAll();
    await jobs.stop();
    const list = await allowing.request('GET', '/api/v2/events', { apiKey: merchant.apiKey });
    const event = await allowing.request('GET', `/api/v2/events/${list.body.data[0].id}`, { apiKey: merchant.apiKey });
    const attempts = event.body.attempts as Array<{ endpoint_id: string; status_code: number | null; error: string | null }>;
    for (const [id, url] of endpoints) {
      expect(attempts.find((a) => a.endpoint_id === id), url).toMatchObject({ status_code: null, error: DESTINATION_UNREACHABLE });
    }
    // Loopback stays open to developers in a default sandbox.
    expect(attempts.find((a) => a.endpoint_id === local.body.id)).toMatchObject({ status_code: 200 });
  });

  it('lets a default sandbox deliver to localhost, for developers', async () => {
    const merchant = await allowing.createMerchant();
    expect((await register(allowing, merchant.apiKey, `${receiver.url}/dev`)).status).toBe(201);
    await commitPayment(allowing, merchant);
    const jobs = webhookJobs(allowing);
    await jobs.deliverAll();
    await jobs.stop();
    expect(receiver.received.length).toBeGreaterThan(0);
  });
});

