// The SDK (sdk/) against the running service on each database: what an integrator's code does with it.
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, isApiError, QrNotPaidError, verifyWebhook, type MerchantPaymentsClient } from '@merchant-payments/sdk';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { startReceiver, webhookJobs } from '../webhooks/harness.ts';
import { startDroppingProxy, type DroppingProxy } from './dropping-proxy.ts';

const destination = { type: 'bank_account' as const, bank_code: 1001 as const, account_number: '10000123454321', account_titular: 'Ana Pérez' };

describe.each(databaseKinds())('the SDK on %s', (kind) => {
  let t: TestApp;
  let proxy: DroppingProxy;
  let merchant: { businessCode: number; apiKey: string };
  let client: MerchantPaymentsClient;
  const sent: { url: string; ifNoneMatch: string | null }[] = [];
  beforeAll(async () => {
    t = await startTestApp({ kind, clock: new TestClock(new Date().toISOString()) });
    proxy = await startDroppingProxy(t.baseUrl);
    merchant = await t.createMerchant({ ach_enabled: true });
    client = createClient({
      baseUrl: proxy.url,
      apiKey: merchant.apiKey,
      retry: { initialDelayMs: 20 },
      // Notes what each request carried, and sends it unchanged.
      fetch: (request) => {
        sent.push({ url: request.url, ifNoneMatch: request.headers.get('if-none-match') });
        return fetch(request);
      },
    });
  });
  afterAll(async () => {
    await proxy.close();
    await t.close();
  });

  /** Money in the merchant's balance, through a paid QR. */
  async function collect(amount: number) {
    const qr = await client.simpleQrs.create({ business_code: merchant.businessCode, amount });
    return client.sandbox.payQr(qr.id);
  }

  describe('simple QRs', () => {
    it('creates a QR, and waitUntilPaid resolves when the payer pays during the long poll', async () => {
      const qr = await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 150.5, description: 'Order 42', external_reference: 'order-42' });
      expect(qr).toMatchObject({ status: 'ACTIVE', amount: 150.5, external_reference: 'order-42' });
      const waiting = client.simpleQrs.waitUntilPaid(qr.id, { timeout: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 300)); // the long poll is held by now
      await client.sandbox.payQr(qr.id);
      const paid = await waiting;
      expect(paid.status).toBe('PAID');
      expect(paid.payments_count).toBe(1);
      // A first read, then long polls that carry its ETag and are held: a few requests, not a busy loop.
      const reads = sent.filter((request) => new URL(request.url).pathname === `/api/v2/simple-qrs/${qr.id}`);
      expect(reads.length).toBeLessThanOrEqual(3);
      expect(reads[0]!.ifNoneMatch).toBeNull();
      expect(reads.slice(1).every((read) => read.ifNoneMatch?.startsWith('"') && Number(new URL(read.url).searchParams.get('wait')) <= 20)).toBe(true); // never held past the caller's timeout
      expect(reads.length).toBeGreaterThan(1);
    });

    it('waitUntilPaid resolves a multi-use QR at its next payment, not at the ones before', async () => {
      const qr = await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 5, is_multi_use: true });
      await client.sandbox.payQr(qr.id);
      const waiting = client.simpleQrs.waitUntilPaid(qr.id, { timeout: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await client.sandbox.payQr(qr.id);
      const paid = await waiting;
      expect(paid).toMatchObject({ status: 'ACTIVE', payments_count: 2 });
    });

    it('waitUntilPaid rejects with QrNotPaidError when the QR is canceled, and with a TimeoutError when time runs out', async () => {
      const canceled = await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 5 });
      const waiting = client.simpleQrs.waitUntilPaid(canceled.id, { timeout: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await client.simpleQrs.cancel(canceled.id);
      const error = await waiting.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QrNotPaidError);
      expect((error as QrNotPaidError).qr).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant' });

      const unpaid = await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 5 });
      const started = Date.now();
      const timedOut = await client.simpleQrs.waitUntilPaid(unpaid.id, { timeout: 500 }).catch((e: unknown) => e);
      expect((timedOut as Error).name).toBe('TimeoutError');
      expect(Date.now() - started).toBeLessThan(10_000); // gave up at the timeout, not after the 25 s long poll

      // Aborted while the service holds the long poll: it settles at once, with the caller's reason.
      const controller = new AbortController();
      const aborted = client.simpleQrs.waitUntilPaid(unpaid.id, { signal: controller.signal }).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const abortedAt = Date.now();
      controller.abort(new Error('the customer walked away'));
      expect(((await aborted) as Error).message).toBe('the customer walked away');
      expect(Date.now() - abortedAt).toBeLessThan(2_000);
    });

    it('walks every page of a list with for await, and one page with await', async () => {
      const reference = `walk-${Date.now()}`;
      for (let i = 0; i < 7; i += 1) await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 1 + i, external_reference: reference });
      const first = await client.simpleQrs.list({ external_reference: reference, per_page: 3 });
      expect(first.data).toHaveLength(3);
      expect(first.meta).toMatchObject({ total: 7, last_page: 3 });
      const walked: number[] = [];
      for await (const qr of client.simpleQrs.list({ external_reference: reference, per_page: 3 })) walked.push(qr.amount ?? 0);
      expect(walked.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });
  });

  describe('transfers and idempotency', () => {
    it('a transfer whose answer is lost on the way is retried with the same key and made once', async () => {
      await collect(100);
      const before = await client.balance.get();
      proxy.dropAnswerTo('POST /api/v2/transfers');
      const sentBefore = proxy.requests.filter((line) => line === 'POST /api/v2/transfers').length;
      const transfer = await client.transfers.create({ business_code: merchant.businessCode, amount: 40, currency: 'BOB', destination, reference: 'dropped once' });
      expect(proxy.requests.filter((line) => line === 'POST /api/v2/transfers').length - sentBefore).toBe(2); // the lost one and its retry
      const after = await client.balance.get();
      expect(Math.round((before.available - after.available) * 100)).toBe(4000); // debited once
      const same = [];
      for await (const t of client.transfers.list()) if (t.reference === 'dropped once') same.push(t.id);
      expect(same).toEqual([transfer.id]);
    });

    it('a request that is not safe to send again is not retried after a lost answer', async () => {
      const qr = await client.simpleQrs.create({ business_code: merchant.businessCode, amount: 5 });
      proxy.dropAnswerTo(`POST /api/v2/simple-qrs/${qr.id}/cancel`);
      const error = await client.simpleQrs.cancel(qr.id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError); // fetch's network failure, as it came
      expect(proxy.requests.filter((line) => line === `POST /api/v2/simple-qrs/${qr.id}/cancel`)).toHaveLength(1);
      expect((await client.simpleQrs.get(qr.id)).status).toBe('CANCELED'); // the service did cancel it
    });

    it('the same idempotencyKey given twice answers the first transfer', async () => {
      await collect(30);
      const idempotencyKey = crypto.randomUUID();
      const body = { business_code: merchant.businessCode, amount: 10, currency: 'BOB' as const, destination };
      const first = await client.transfers.create(body, { idempotencyKey });
      const again = await client.transfers.create(body, { idempotencyKey });
      expect(again.id).toBe(first.id);
      const changed = await client.transfers.create({ ...body, amount: 11 }, { idempotencyKey }).catch((e: unknown) => e);
      expect(isApiError(changed, 'IDEMPOTENCY_KEY_REUSED')).toBe(true);
    });

    it('throws typed errors with type, code, message, the failing fields and the request id', async () => {
      const invalid = await client.transfers.create({ business_code: merchant.businessCode, amount: 0.01, currency: 'BOB', destination: { ...destination, account_number: 'abc' } }).catch((e: unknown) => e);
      expect(invalid).toBeInstanceOf(ApiError);
      const error = invalid as ApiError;
      expect(error).toMatchObject({ status: 422, type: 'validation_error', code: 'VALIDATION_FAILED' });
      expect(error.errors.map((e) => e.field).sort()).toEqual(['amount', 'destination.account_number']);
      expect(error.requestId).toMatch(/.+/);
      const broke = await client.transfers.create({ business_code: merchant.businessCode, amount: 20_000, currency: 'BOB', destination }).catch((e: unknown) => e);
      expect(broke).toMatchObject({ status: 400, code: 'INSUFFICIENT_FUNDS' });
      const missing = await client.transfers.get(987_654_321).catch((e: unknown) => e);
      expect(missing).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    });
  });

  describe('refunds, movements and statements', () => {
    it('refunds part of a payment, and the balance, movements walk and statement agree', async () => {
      const payment = await collect(80);
      const refund = await client.refunds.create({ payment_id: payment.id, amount: 30 });
      expect(refund).toMatchObject({ status: 'PENDING', amount: 30, payment_id: payment.id });
      const listed = await client.refunds.list({ payment_id: payment.id });
      expect(listed.data.map((r) => r.id)).toEqual([refund.id]);
      await client.sandbox.advanceRefund(refund.id, { to: 'COMPLETED' });
      expect((await client.refunds.get(refund.id)).status).toBe('COMPLETED');

      const balance = await client.balance.get();
      let sum = 0;
      for await (const movement of client.balance.movements({ per_page: 2 })) if (movement.status !== 'FAILED' && movement.status !== 'CANCELED') sum += Math.round(movement.amount * 100);
      expect(sum).toBe(Math.round(balance.available * 100)); // the invariant of docs/balance.md

      const today = new Date().toLocaleDateString('en-CA', { timeZone: t.config.serviceTimeZone });
      const statement = await client.balance.statement({ from: today, to: today });
      expect(statement.days.at(-1)?.closing_balance).toBe(balance.available);
      const csv = await new Response(await client.balance.entriesCsv({ from: today, to: today })).text();
      const rows = parse(csv, { columns: true }) as Record<string, string>[];
      expect(rows.length).toBeGreaterThan(0);
    });

    it('a walk over movements is pinned: what it yields is the history as it was when it began', async () => {
      const before: number[] = [];
      for await (const movement of client.balance.movements()) before.push(movement.id);
      expect(before.length).toBeGreaterThan(6);
      const walked: number[] = [];
      for await (const movement of client.balance.movements({ per_page: 2 })) {
        // More than a page of new movements between the first page and the next: unpinned, the walk
        // would yield the first page's last items again.
        if (walked.length === 0) for (let i = 0; i < 3; i += 1) await collect(1);
        walked.push(movement.id);
      }
      expect(walked).toEqual(before);
    });

    it('a walk may start at a later page: it goes on from there, pinned, skipping nothing', async () => {
      const all: number[] = [];
      for await (const movement of client.balance.movements()) all.push(movement.id);
      const fromPage3: number[] = [];
      for await (const movement of client.balance.movements({ per_page: 2, page: 3 })) fromPage3.push(movement.id);
      expect(fromPage3).toEqual(all.slice(4));
    });
  });

  describe('everything else', () => {
    it('lists banks, manages a webhook endpoint and reads events', async () => {
      const banks = await client.banks.list();
      expect(banks.some((bank) => bank.bank_code === 1001)).toBe(true);
      const endpoint = await client.webhookEndpoints.create({ url: 'https://shop.example.com/hooks', events: ['simple_qr.payment_received'] });
      expect(endpoint.secret).toMatch(/^whsec_/);
      const updated = await client.webhookEndpoints.update(endpoint.id, { description: 'shop' });
      expect(updated.description).toBe('shop');
      const rotated = await client.webhookEndpoints.rotateSecret(endpoint.id);
      expect(rotated.secret).not.toBe(endpoint.secret);
      const leaked = await client.webhookEndpoints.rotateSecret(endpoint.id, { expirePreviousNow: true });
      expect(leaked.secret).not.toBe(rotated.secret);
      await client.webhookEndpoints.delete(endpoint.id);
      expect(await client.webhookEndpoints.get(endpoint.id).catch((e: unknown) => e)).toMatchObject({ code: 'NOT_FOUND' });
      const events = await client.events.list({ type: 'simple_qr.payment_received', per_page: 1 });
      expect(events.data[0]?.type).toBe('simple_qr.payment_received');
      expect((await client.events.get(events.data[0]!.id)).id).toBe(events.data[0]!.id);
    });

    it('verifies a real delivery with verifyWebhook, and refuses it once a byte is changed', async () => {
      const receiver = await startReceiver();
      const jobs = webhookJobs(t);
      try {
        const endpoint = await client.webhookEndpoints.create({ url: `${receiver.url}/hooks`, events: ['simple_qr.payment_received'] });
        const payment = await collect(12.5);
        await jobs.deliverAll();
        const delivery = receiver.received.find((received) => JSON.parse(received.body).data?.payment?.id === payment.id) ?? receiver.received[0]!;
        const event = verifyWebhook(endpoint.secret, delivery.body, delivery.headers);
        expect(event).toMatchObject({ type: 'simple_qr.payment_received' });
        expect(event.id).toBe(delivery.headers['webhook-id']);
        expect(() => verifyWebhook(endpoint.secret, delivery.body.replace('12.5', '99.5'), delivery.headers)).toThrow();
        expect(() => verifyWebhook(endpoint.secret, delivery.body, new Headers(delivery.headers))).not.toThrow();
        await client.webhookEndpoints.delete(endpoint.id);
      } finally {
        await jobs.stop();
        await receiver.close();
      }
    });

    it('creates an onboarding intent with a partner master key', async () => {
      const partner = await t.createPartner();
      const partnerClient = createClient({ baseUrl: t.baseUrl, apiKey: partner.masterKey });
      const intent = await partnerClient.onboarding.createIntent({ metadata: { crm_id: 'c-1' } });
      expect(intent.url).toMatch(/\/onboarding\//);
      expect((await partnerClient.onboarding.getIntent(intent.code)).code).toBe(intent.code);
    });
  });
});

describe('the SDK over a rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite', env: { RATE_LIMIT: '2/s,2' } });
  });
  afterAll(() => t.close());

  it('waits out a 429 for the time in Retry-After and then succeeds', async () => {
    const merchant = await t.createMerchant();
    const statuses: number[] = [];
    const client = createClient({
      baseUrl: t.baseUrl,
      apiKey: merchant.apiKey,
      // Watches the answers as they arrive, before the SDK decides to retry; sends them unchanged. The
      // bucket refills on the app's clock, which stands still: a 429 moves it on by its Retry-After, the
      // time the SDK then waits.
      fetch: async (request) => {
        const response = await fetch(request);
        statuses.push(response.status);
        if (response.status === 429) t.clock.advance(Number(response.headers.get('retry-after')) * 1000);
        return response;
      },
    });
    const reads = await Promise.all(Array.from({ length: 5 }, () => client.balance.get()));
    expect(reads.every((balance) => balance.business_code === merchant.businessCode)).toBe(true);
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
  });
});
