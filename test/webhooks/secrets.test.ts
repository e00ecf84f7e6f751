// Webhook secrets at rest: sealed with ENCRYPTION_KEYS (kernel/secret-box.ts), plain ones left by the version
// before migration 014 sealed by a worker job, and a rotation that can expire the previous secret at once.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/webhooks/signing.ts';
import { newEndpointId } from '../../src/webhooks/service.ts';
import { backgroundJobs } from '../../src/workers/jobs.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint, startReceiver, verifyWebhook, webhookJobs, type Receiver, type WebhookJobs } from './harness.ts';

interface StoredSecrets {
  secret: string | null;
  secret_sealed: string | null;
  previous_secret: string | null;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

describe.each(databaseKinds())('webhook secrets at rest on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  let jobs: WebhookJobs;
  beforeAll(async () => {
    // Near the real time: the standardwebhooks library rejects timestamps more than 5 minutes off.
    t = await startTestApp({ kind, plugins: [fixtureRoutes], clock: new TestClock(new Date().toISOString()) });
    receiver = await startReceiver();
    jobs = webhookJobs(t);
  });
  afterEach(() => {
    receiver.received.length = 0;
  });
  afterAll(async () => {
    await jobs.stop();
    await receiver.close();
    await t.close();
  });

  const stored = async (id: string) =>
    (await t.db.query<StoredSecrets>(
      'select secret, secret_sealed, previous_secret, previous_secret_sealed, previous_secret_expires_at from webhook_endpoints where id = $1::text',
      [id],
    )).rows[0]!;
  const signaturesOf = (index: number) => receiver.received[index]!.headers['webhook-signature']!.split(' ');

  it('stores a new endpoint\'s secret sealed, never in clear, and signs with it', async () => {
    const merchant = await t.createMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/sealed` });
    const row = await stored(endpoint.id);
    expect(row.secret).toBeNull();
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(endpoint.secret.slice('whsec_'.length, 20));
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    verifyWebhook(endpoint.secret, receiver.received[0]!);
  });

  it('seals the plain secrets of rows written the old way (worker job), and their deliveries still verify with both secrets', async () => {
    const merchant = await t.createMerchant();
    const [id, current, previous] = [newEndpointId(), newWebhookSecret(), newWebhookSecret()];
    // Exactly as the version before migration 014 wrote a rotated endpoint.
    await t.db.query(
      `insert into webhook_endpoints (id, owner_kind, owner_id, url, event_types, secret, previous_secret, previous_secret_expires_at, created_at, updated_at)
       values ($1::text, 'merchant', $2::bigint, $3::text, array['*'], $4::text, $5::text, $6::timestamptz, $7::timestamptz, $7::timestamptz)`,
      [id, merchant.businessCode, `${receiver.url}/legacy`, current, previous, new Date(t.clock.now().getTime() + 3600_000), t.clock.now()],
    );

    const workerJobs = backgroundJobs(t.context);
    const sealing = workerJobs.find((job) => job.name === 'webhook-secret-sealing')!;
    expect(await sealing.runOnce()).toBe(false); // fewer than a batch: nothing more to do
    await Promise.all(workerJobs.map((job) => job.stop?.()));

    const row = await stored(id);
    expect(row).toMatchObject({ secret: null, previous_secret: null });
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(row.previous_secret_sealed).toMatch(/^v1\./);
    expect(row.previous_secret_expires_at).not.toBeNull();
    const plainLeft = await t.db.query('select id from webhook_endpoints where secret is not null or previous_secret is not null');
    expect(plainLeft.rows).toEqual([]);

    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(signaturesOf(0)).toHaveLength(2);
    verifyWebhook(current, receiver.received[0]!);
    verifyWebhook(previous, receiver.received[0]!);
  });

  it('rotates with expire_previous_now: the previous secret stops signing at once', async () => {
    const merchant = await t.createMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/leaked` });
    const rotated = await t.request('POST', `/api/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      apiKey: merchant.apiKey, body: { expire_previous_now: true },
    });
    expect(rotated.status).toBe(200);
    const row = await stored(endpoint.id);
    expect(row).toMatchObject({ previous_secret: null, previous_secret_sealed: null, previous_secret_expires_at: null });
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(signaturesOf(0)).toHaveLength(1);
    verifyWebhook(rotated.body.secret, receiver.received[0]!);
    expect(() => verifyWebhook(endpoint.secret, receiver.received[0]!)).toThrow();
  });

  it('rotates without it (no body, {} or false) keeping the previous secret sealed for 24 hours; unknown fields and wrong types are 422', async () => {
    const merchant = await t.createMerchant();
    const endpoint = await createEndpoint(t, merchant.apiKey, { url: `${receiver.url}/rotating` });
    const rotate = (options: { body?: unknown; rawBody?: string; headers?: Record<string, string> }) =>
      t.request('POST', `/api/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, { apiKey: merchant.apiKey, ...options });
    for (const options of [{}, { body: {} }, { body: { expire_previous_now: false } }]) expect((await rotate(options)).status).toBe(200);
    const last = await rotate({ rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(last.status).toBe(200);
    const row = await stored(endpoint.id);
    expect(row.previous_secret).toBeNull();
    expect(row.previous_secret_sealed).toMatch(/^v1\./);
    await commitPayment(t, merchant);
    await jobs.deliverAll();
    expect(signaturesOf(0)).toHaveLength(2);
    verifyWebhook(last.body.secret, receiver.received[0]!);

    const unknown = await rotate({ body: { expire_previous: true } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([expect.objectContaining({ field: 'expire_previous', code: 'unknown_field' })]);
    const wrongType = await rotate({ body: { expire_previous_now: 'yes' } });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.errors).toEqual([expect.objectContaining({ field: 'expire_previous_now', code: 'invalid_type' })]);
  });
});
