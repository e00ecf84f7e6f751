// Partner webhooks of onboarding (docs/api-reference.md#onboarding-events): a partner endpoint registered with the master key
// receives onboarding_intent.completed, .cancelled and .expired, signed, each carrying the metadata unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredIntents } from '../../src/onboarding/service.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createEndpoint, startReceiver, verifyWebhook, webhookJobs, type Receiver, type WebhookJobs } from '../webhooks/harness.ts';
import { FlowBrowser, newIntent, tokenOf, type Partner } from './helpers.ts';

describe.each(databaseKinds())('onboarding partner webhooks on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  let jobs: WebhookJobs;
  let partner: Partner;
  let otherPartner: Partner;
  let secret: string;
  beforeAll(async () => {
    // Near the real time: the standardwebhooks library rejects timestamps more than 5 minutes off.
    t = await startTestApp({ kind, clock: new TestClock(new Date().toISOString()) });
    receiver = await startReceiver();
    jobs = webhookJobs(t);
    partner = await t.createPartner('Partner A');
    otherPartner = await t.createPartner('Partner B');
    secret = (await createEndpoint(t, partner.masterKey, { url: `${receiver.url}/partner-a` })).secret;
    await createEndpoint(t, otherPartner.masterKey, { url: `${receiver.url}/partner-b` });
  });
  afterAll(async () => {
    await jobs?.stop();
    await receiver?.close();
    await t?.close();
  });

  const received = () => receiver.received.map((webhook) => ({ path: webhook.path, payload: verifyWebhook(secret, webhook) as any }));

  it('delivers completed, cancelled and expired to the partner\'s endpoint only, with the metadata unchanged', async () => {
    const metadata = { partner_customer_id: 'cus_881', seats: 3, trial: false, referrer: null };
    const completed = await newIntent(t, partner, { metadata });
    const browser = new FlowBrowser(t, tokenOf(completed));
    await browser.register();
    await browser.get();
    expect((await browser.post('/simulate-payment')).status).toBe(303);
    const cancelled = await newIntent(t, partner, { metadata: { step: 'cancel' } });
    const leaver = new FlowBrowser(t, tokenOf(cancelled));
    await leaver.get();
    await leaver.post('/cancel');
    const expiring = await newIntent(t, partner, { metadata: { step: 'expire' } });
    t.clock.advance(120 * 60_000);
    expect(await sweepExpiredIntents(t.db, t.clock.now(), 100)).toBeGreaterThanOrEqual(1);
    await jobs.deliverAll();

    const byType = new Map(received().map(({ path, payload }) => [payload.type as string, { path, payload }]));
    expect([...byType.keys()].sort()).toEqual(['onboarding_intent.cancelled', 'onboarding_intent.completed', 'onboarding_intent.expired']);
    for (const { path } of byType.values()) expect(path).toBe('/partner-a');
    const done = byType.get('onboarding_intent.completed')!.payload;
    const read = await t.request('GET', `/api/v2/onboarding/intent/${completed.code}`, { apiKey: partner.masterKey });
    expect(done.data).toEqual(read.body);
    expect(done.data.metadata).toEqual(metadata);
    expect(done.data.business_code).toBeGreaterThan(1000);
    expect(byType.get('onboarding_intent.cancelled')!.payload.data).toMatchObject({ code: cancelled.code, status: 'cancelled', metadata: { step: 'cancel' } });
    expect(byType.get('onboarding_intent.expired')!.payload.data).toMatchObject({ code: expiring.code, status: 'expired', metadata: { step: 'expire' } });
    // the partner lists its own events; the registration's payout account never appears in them
    const listed = await t.request('GET', '/api/v2/events?type=onboarding_intent.completed', { apiKey: partner.masterKey });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(done.id);
    expect(JSON.stringify(receiver.received)).not.toContain('1000-2000-3456');
  });
});
