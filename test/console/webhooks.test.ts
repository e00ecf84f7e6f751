// The owner's webhooks and events pages over HTTP (docs/console.md#keys-webhooks-and-events), with a real local
// receiver and the dispatcher driven by hand (test/webhooks/harness.ts): an endpoint made through the form (its
// secret shown once signs the deliveries, as docs/webhooks.md says; one endpoint for a double submit); URLs the
// API refuses are refused under the field, hostile and private ones included; rotate (both signatures during
// the overlap), disable, enable, delete; the events list and an event's attempts; redeliver one (seen through
// GET /api/v2/events/{id}, its hourly limit in words); redeliver every failed event — exactly this merchant's
// failed deliveries, another merchant's untouched; tenancy, CSRF and cashier refusals. On PGlite, and on
// PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TestClock, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, startReceiver, verifyWebhook, webhookJobs, type Receiver, type WebhookJobs } from '../webhooks/harness.ts';
import { ConsoleBrowser, newOwner, ownersAndCashier } from './helpers.ts';

const ALL = { 'event:*': '*' };

describe.each(databaseKinds())('the console\'s webhooks and events pages on %s', (kind) => {
  let t: TestApp;
  let receiver: Receiver;
  let jobs: WebhookJobs;
  let a: { businessCode: number; apiKey: string };
  let b: { businessCode: number; apiKey: string };
  let ownerA: ConsoleBrowser;
  let ownerB: ConsoleBrowser;
  let cashierA: ConsoleBrowser;
  beforeAll(async () => {
    // Near the real time: the standardwebhooks library refuses timestamps more than 5 minutes off.
    t = await startTestApp({ kind, plugins: [fixtureRoutes], clock: new TestClock(new Date().toISOString()), env: { WEBHOOK_RETRY_SCHEDULE: '5s,30s', WEBHOOK_TIMEOUT: '300ms' } });
    receiver = await startReceiver();
    jobs = webhookJobs(t);
    a = await t.createMerchant({ name: 'Café A' });
    b = await t.createMerchant({ name: 'Tienda B' });
    ({ ownerA, cashierA, ownerB } = await ownersAndCashier(t, 'hooks', a, b));
  });
  afterEach(async () => {
    await jobs.deliverAll();
    receiver.received.length = 0;
    receiver.answer = () => 200;
  });
  afterAll(async () => {
    await jobs?.stop();
    await receiver?.close();
    await t?.close();
  });

  const formKeyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1]!;
  /** The idempotency key of an endpoint's "new secret" button on the list. */
  const rotateKeyOf = (html: string, endpointId: string) =>
    new RegExp(`action="/console/webhooks/${endpointId}/rotate">[\\s\\S]*?name="idempotency_key" value="([^"]+)"`).exec(html)![1]!;
  const secretOf = (html: string) => /id="signing-secret"[^>]*>([^<]+)</.exec(html)?.[1] ?? null;
  const endpointsOf = async (merchant: { apiKey: string }) =>
    (await t.request('GET', '/api/v2/webhook-endpoints?per_page=100', { apiKey: merchant.apiKey })).body.data as Array<{ id: string; url: string; status: string; events: string[] }>;
  /** Opens the webhooks page and adds `url`; the answer and the secret shown. */
  const addEndpoint = async (browser: ConsoleBrowser, url: string, events: Record<string, string> = ALL) => {
    const page = await browser.get('/console/webhooks');
    expect(page.status).toBe(200);
    const answer = await browser.post('/console/webhooks', { url, ...events, idempotency_key: formKeyOf(page.text) });
    return { answer, secret: secretOf(answer.text) };
  };
  const newMerchantWithOwner = async (name: string) => {
    const merchant = await t.createMerchant({ name });
    const owner = await newOwner(t, merchant.businessCode, `${name.toLowerCase().replace(/\W+/g, '.')}@example.com`);
    return { merchant, owner };
  };
  const eventIdsOf = async (merchant: { apiKey: string }) =>
    ((await t.request('GET', '/api/v2/events?per_page=100', { apiKey: merchant.apiKey })).body.data as Array<{ id: string }>).map((event) => event.id);

  describe('endpoints', () => {
    it('adds an endpoint through the form: its secret shown once (201, no language switch) signs the deliveries as docs/webhooks.md says', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Signed Shop');
      const { answer, secret } = await addEndpoint(owner, `${receiver.url}/signed`);
      expect(answer.status).toBe(201);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(answer.text).not.toContain('hreflang');
      expect(answer.text).toContain('webhook-signature');
      const [endpoint] = await endpointsOf(merchant);
      expect(endpoint).toMatchObject({ url: `${receiver.url}/signed`, status: 'enabled', events: ['*'] });

      const list = await owner.get('/console/webhooks');
      expect(list.text).toContain(`data-endpoint="${endpoint!.id}"`);
      expect(list.text).not.toContain(secret!);

      const movementId = await commitPayment(t, merchant);
      await jobs.deliverAll();
      expect(receiver.received).toHaveLength(1);
      expect(verifyWebhook(secret!, receiver.received[0]!)).toMatchObject({ type: 'simple_qr.payment_received', data: { movement_id: movementId } });
    });

    it('takes the events ticked (every event alone when it is ticked), and refuses none ticked', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Filtered Shop');
      const { answer } = await addEndpoint(owner, 'https://shop.example.com/paid', { 'event:simple_qr.paid': 'simple_qr.paid', 'event:transfer.completed': 'transfer.completed' });
      expect(answer.status).toBe(201);
      expect((await endpointsOf(merchant))[0]!.events).toEqual(['simple_qr.paid', 'transfer.completed']);
      expect((await addEndpoint(owner, 'https://shop.example.com/all', { ...ALL, 'event:simple_qr.paid': 'simple_qr.paid' })).answer.status).toBe(201);
      expect((await endpointsOf(merchant))[0]!.events).toEqual(['*']);
      const none = await addEndpoint(owner, 'https://shop.example.com/none', {});
      expect(none.answer.status).toBe(422);
      expect(none.answer.text).toContain('id="f-events-error"');
      expect(await endpointsOf(merchant)).toHaveLength(2);
    });

    it('refuses what the API refuses, under the field (422), keeping what was typed; nothing made', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Refused Shop');
      for (const url of ['javascript:alert(1)', 'ftp://files.example.com/x', 'https://user:pass@shop.example.com/x', 'not a url', '', `https://example.com/${'a'.repeat(2100)}`, 'https://example.com/\u0000']) {
        const { answer } = await addEndpoint(owner, url);
        expect(answer.status).toBe(422);
        expect(answer.text).toContain('id="f-url-error"');
        expect(answer.text).toContain('aria-invalid="true"');
      }
      const kept = await addEndpoint(owner, 'ftp://kept.example.com/<b>');
      expect(kept.answer.text).toContain('value="ftp://kept.example.com/&lt;b&gt;"');
      expect(await endpointsOf(merchant)).toHaveLength(0);
    });

    it('refuses private, loopback and metadata addresses when the service denies them (WEBHOOK_PRIVATE_TARGETS=deny), as the API does', async () => {
      const guarded = await startTestApp({ kind, env: { WEBHOOK_PRIVATE_TARGETS: 'deny' } });
      try {
        const merchant = await guarded.createMerchant({ name: 'Guarded' });
        const owner = await newOwner(guarded, merchant.businessCode, 'guarded.owner@example.com');
        for (const url of ['http://127.0.0.1:8080/hooks', 'http://10.0.0.7/hooks', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/hooks', 'http://[::ffff:192.168.1.1]/x']) {
          const page = await owner.get('/console/webhooks');
          const answer = await owner.post('/console/webhooks', { url, ...ALL, idempotency_key: formKeyOf(page.text) });
          expect(answer.status).toBe(422);
          expect(answer.text).toContain('apunta dentro de una red privada o reservada');
          const api = await guarded.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url } });
          expect(api.status).toBe(422);
        }
        expect((await guarded.request('GET', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey })).body.data).toHaveLength(0);
      } finally {
        await guarded.close();
      }
    });

    it('refuses a 17th endpoint as a whole form (the API\'s cap), and the list of 16 stays under 50 KB', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Crowded Shop');
      for (let n = 0; n < 16; n++) {
        const api = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey: merchant.apiKey, body: { url: `https://hooks-${n}.example.com/${'p'.repeat(100)}` } });
        expect(api.status).toBe(201);
      }
      const { answer } = await addEndpoint(owner, 'https://one-too-many.example.com/');
      expect(answer.status).toBe(422);
      expect(answer.text).toContain('id="form-alert"');
      expect(answer.text).toContain('Ya tienes 16 direcciones');
      expect(await endpointsOf(merchant)).toHaveLength(16);
      const list = await owner.get('/console/webhooks');
      expect(Buffer.byteLength(list.text)).toBeLessThan(50_000);
    });

    it('makes one endpoint for a double submit of one form; the second answer names it without its secret', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Double Shop');
      const page = await owner.get('/console/webhooks');
      const form = { url: 'https://shop.example.com/once', ...ALL, idempotency_key: formKeyOf(page.text) };
      const answers = await Promise.all([owner.post('/console/webhooks', form), owner.post('/console/webhooks', form)]);
      const third = await owner.post('/console/webhooks', form);
      expect([...answers, third].map((answer) => answer.status).sort()).toEqual([200, 200, 201]);
      expect([...answers, third].filter((answer) => secretOf(answer.text) !== null)).toHaveLength(1);
      expect(third.text).toContain('https://shop.example.com/once');
      expect(await endpointsOf(merchant)).toHaveLength(1);
    });

    it('rotates the secret: the new one shown once, the previous one still signing until the overlap said', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Rotating Shop');
      const { secret: first } = await addEndpoint(owner, `${receiver.url}/rotating`);
      const [endpoint] = await endpointsOf(merchant);
      const list = await owner.get('/console/webhooks');
      const form = { idempotency_key: rotateKeyOf(list.text, endpoint!.id) };
      const rotated = await owner.post(`/console/webhooks/${endpoint!.id}/rotate`, form);
      expect(rotated.status).toBe(200);
      // A second tap of the same button rotates nothing: the first secret stays the previous one, still signing.
      const again = await owner.post(`/console/webhooks/${endpoint!.id}/rotate`, form);
      expect(again.status).toBe(200);
      expect(secretOf(again.text)).toBeNull();
      expect(again.text).toContain('id="again-heading"');
      // Without the button's key, nothing is rotated.
      expect((await owner.post(`/console/webhooks/${endpoint!.id}/rotate`)).status).toBe(422);
      const second = secretOf(rotated.text);
      expect(second).toMatch(/^whsec_/);
      expect(second).not.toBe(first);
      expect(rotated.text).toContain('id="overlap"');
      expect(rotated.text).not.toContain('hreflang');
      await commitPayment(t, merchant);
      await jobs.deliverAll();
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      expect(verifyWebhook(second!, receiver.received[0]!)).toBeTruthy();
      expect(verifyWebhook(first!, receiver.received[0]!)).toBeTruthy();
    });

    it('disables and enables an endpoint (the API\'s PATCH): a disabled one receives nothing', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Pausing Shop');
      await addEndpoint(owner, `${receiver.url}/pausing`);
      const [endpoint] = await endpointsOf(merchant);
      await owner.get('/console/webhooks');
      const disabled = await owner.post(`/console/webhooks/${endpoint!.id}/status`, { status: 'disabled' });
      expect(disabled.status).toBe(303);
      expect(disabled.location).toBe('/console/webhooks?done=disabled');
      expect((await endpointsOf(merchant))[0]!.status).toBe('disabled');
      const page = await owner.get(disabled.location!);
      expect(page.text).toContain('id="done-notice"');
      expect(page.text).toContain('data-state="disabled"');
      await commitPayment(t, merchant);
      await jobs.deliverAll();
      expect(receiver.received).toHaveLength(0);
      expect((await owner.post(`/console/webhooks/${endpoint!.id}/status`, { status: 'enabled' })).status).toBe(303);
      expect((await endpointsOf(merchant))[0]!.status).toBe('enabled');
      expect((await owner.post(`/console/webhooks/${endpoint!.id}/status`, { status: 'bogus' })).status).toBe(422);
    });

    it('deletes an endpoint after a confirmation', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Deleting Shop');
      await addEndpoint(owner, 'https://shop.example.com/bye');
      const [endpoint] = await endpointsOf(merchant);
      const confirm = await owner.get(`/console/webhooks/${endpoint!.id}/delete`);
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain('id="delete-button"');
      expect(await endpointsOf(merchant)).toHaveLength(1);
      const deleted = await owner.post(`/console/webhooks/${endpoint!.id}/delete`);
      expect(deleted.status).toBe(303);
      expect(await endpointsOf(merchant)).toHaveLength(0);
      expect((await owner.get(`/console/webhooks/${endpoint!.id}/delete`)).status).toBe(404);
    });

    it('does not find another merchant\'s endpoint: rotate, disable, delete are 404 and change nothing', async () => {
      await addEndpoint(ownerA, 'https://a.example.com/hooks');
      const endpoint = (await endpointsOf(a)).find((row) => row.url === 'https://a.example.com/hooks')!;
      await ownerB.get('/console/webhooks');
      expect((await ownerB.post(`/console/webhooks/${endpoint.id}/rotate`, { idempotency_key: crypto.randomUUID() })).status).toBe(404);
      expect((await ownerB.post(`/console/webhooks/${endpoint.id}/status`, { status: 'disabled' })).status).toBe(404);
      expect((await ownerB.get(`/console/webhooks/${endpoint.id}/delete`)).status).toBe(404);
      expect((await ownerB.post(`/console/webhooks/${endpoint.id}/delete`)).status).toBe(404);
      expect((await endpointsOf(a)).find((row) => row.id === endpoint.id)).toMatchObject({ status: 'enabled' });
      expect((await ownerB.get('/console/webhooks')).text).not.toContain(endpoint.id);
    });

    it('answers hostile ids and queries with a page, never a 5xx, and changes nothing', async () => {
      await ownerA.get('/console/webhooks');
      const before = await endpointsOf(a);
      for (const id of ['%00', 'we_%00x', 'x'.repeat(65), '%FF%FE', encodeURIComponent('<script>'), '..%2F..%2Fadmin']) {
        for (const answer of [
          await ownerA.get(`/console/events/${id}`),
          await ownerA.post(`/console/events/${id}/redeliver`),
          await ownerA.get(`/console/webhooks/${id}/delete`),
          await ownerA.post(`/console/webhooks/${id}/delete`),
          await ownerA.post(`/console/webhooks/${id}/status`, { status: 'disabled' }),
          await ownerA.post(`/console/webhooks/${id}/rotate`, { idempotency_key: crypto.randomUUID() }),
        ]) {
          expect(answer.status, id).toBeGreaterThanOrEqual(400);
          expect(answer.status, id).toBeLessThan(500);
          // A path that is not valid UTF-8 is refused by the router before any console route (a JSON 404, as everywhere).
          if (id !== '%FF%FE') expect(answer.headers.get('content-type'), `${id} ${answer.status}`).toContain('text/html');
        }
      }
      expect((await ownerA.get('/console/webhooks?done=%00')).status).toBe(422);
      expect((await ownerA.get('/console/webhooks?done=nothing')).text).not.toContain('id="done-notice"');
      expect((await ownerA.post('/console/webhooks', { url: 'https://ok.example.com/\u0000', 'event:\u0000': '\u0000', idempotency_key: crypto.randomUUID() })).status).toBe(422);
      expect(await endpointsOf(a)).toEqual(before);
    });

    it('refuses a form without its CSRF field and a cashier (403): nothing made or changed', async () => {
      const before = (await endpointsOf(a)).length;
      const page = await ownerA.get('/console/webhooks');
      expect((await ownerA.postRaw('/console/webhooks', { url: 'https://x.example.com/', ...ALL, idempotency_key: formKeyOf(page.text) })).status).toBe(403);
      expect((await cashierA.get('/console/webhooks')).status).toBe(403);
      expect((await cashierA.get('/console/events')).status).toBe(403);
      await cashierA.get('/console/terminal');
      expect((await cashierA.post('/console/webhooks', { url: 'https://x.example.com/', ...ALL, idempotency_key: crypto.randomUUID() })).status).toBe(403);
      expect((await cashierA.post('/console/events/redeliver-failed')).status).toBe(403);
      expect((await endpointsOf(a)).length).toBe(before);
    });
  });

  describe('events', () => {
    it('lists the business\'s events newest first with a type filter, and shows an event with its data, deliveries and attempts', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Eventful Shop');
      await addEndpoint(owner, `${receiver.url}/eventful`);
      const movementId = await commitPayment(t, merchant);
      await jobs.deliverAll();
      const [eventId] = await eventIdsOf(merchant);
      const list = await owner.get('/console/events');
      expect(list.status).toBe(200);
      expect(list.text).toContain(`data-event="${eventId}"`);
      expect((await owner.get('/console/events?type=transfer.completed')).text).not.toContain(`data-event="${eventId}"`);
      expect((await owner.get('/console/events?type=simple_qr.payment_received')).text).toContain(`data-event="${eventId}"`);
      for (const query of ['type=%00nope', 'page=99999999999', 'requeued=-1', `type=${'x'.repeat(5000)}`]) {
        const refused = await owner.get(`/console/events?${query}`);
        expect(refused.status).toBe(422); // a hosted page's refusal of its query, as a page
        expect(refused.headers.get('content-type')).toContain('text/html');
      }

      const page = await owner.get(`/console/events/${eventId}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('simple_qr.payment_received');
      expect(page.text).toContain(String(movementId));
      expect(page.text).toContain('HTTP 200');
      expect(page.text).toContain(`${receiver.url}/eventful`);
      expect(page.text).toMatch(/data-delivery="we_[^"]+" data-state="succeeded"/);

      // Another merchant's event is not found.
      expect((await ownerB.get(`/console/events/${eventId}`)).status).toBe(404);
      expect((await ownerB.get('/console/events')).text).not.toContain(eventId);
    });

    it('redelivers one event: queued for the endpoints, seen through GET /api/v2/events/{id}; past the hourly limit the refusal is in words (429)', async () => {
      const { merchant, owner } = await newMerchantWithOwner('Redelivering Shop');
      await addEndpoint(owner, `${receiver.url}/again`);
      await commitPayment(t, merchant);
      await jobs.deliverAll();
      const [eventId] = await eventIdsOf(merchant);
      await owner.get(`/console/events/${eventId}`);
      const posted = await owner.post(`/console/events/${eventId}/redeliver`);
      expect(posted.status).toBe(303);
      expect(posted.location).toBe(`/console/events/${eventId}?queued=1`);
      expect((await owner.get(posted.location!)).text).toContain('En cola — direcciones: 1.');
      await jobs.deliverAll();
      const api = await t.request('GET', `/api/v2/events/${eventId}`, { apiKey: merchant.apiKey });
      expect(api.body.attempts).toHaveLength(2);
      expect(receiver.received.map((webhook) => webhook.headers['webhook-id'])).toEqual([eventId, eventId]);

      for (let n = 2; n <= 10; n++) expect((await owner.post(`/console/events/${eventId}/redeliver`)).status).toBe(303);
      const refused = await owner.post(`/console/events/${eventId}/redeliver`);
      expect(refused.status).toBe(429);
      expect(refused.text).toContain('id="form-alert"');
      expect(refused.text).toContain('10 veces en la última hora');
      expect((await ownerB.post(`/console/events/${eventId}/redeliver`)).status).toBe(404);
    });

    it('redelivers every failed event of this merchant only: its failed deliveries queued again, the delivered ones not repeated, another merchant\'s untouched', async () => {
      const c = await newMerchantWithOwner('Failing Shop');
      const d = await newMerchantWithOwner('Other Failing Shop');
      receiver.answer = (webhook) => (webhook.path.endsWith('/fail') ? 500 : 200);
      await addEndpoint(c.owner, `${receiver.url}/c/fail`);
      await addEndpoint(c.owner, `${receiver.url}/c/ok`);
      await addEndpoint(d.owner, `${receiver.url}/d/fail`);
      for (const merchant of [c.merchant, c.merchant, d.merchant]) await commitPayment(t, merchant);
      // Three attempts each (5s, 30s): failed after the last.
      await jobs.deliverAll();
      t.clock.advance(5_000);
      await jobs.deliverAll();
      t.clock.advance(30_000);
      await jobs.deliverAll();
      const states = async (businessCode: number) => (await t.db.query<{ path: string; status: string }>(
        `select substring(w.url from '/[cd]/[a-z]+$') as path, d.status from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
          where w.owner_kind = 'merchant' and w.owner_id = $1 order by path, d.id`, [businessCode])).rows.map((row) => `${row.path}:${row.status}`);
      expect(await states(c.merchant.businessCode)).toEqual(['/c/fail:failed', '/c/fail:failed', '/c/ok:succeeded', '/c/ok:succeeded']);
      expect(await states(d.merchant.businessCode)).toEqual(['/d/fail:failed']);

      receiver.received.length = 0;
      receiver.answer = () => 200;
      await c.owner.get('/console/events');
      const posted = await c.owner.post('/console/events/redeliver-failed');
      expect(posted.status).toBe(303);
      expect(posted.location).toBe('/console/events?requeued=2&deliveries=2&limited=0');
      expect((await c.owner.get(posted.location!)).text).toContain('En cola otra vez — eventos: 2; envíos: 2.');
      expect(await states(c.merchant.businessCode)).toEqual(['/c/fail:pending', '/c/fail:pending', '/c/ok:succeeded', '/c/ok:succeeded']);
      expect(await states(d.merchant.businessCode)).toEqual(['/d/fail:failed']);
      await jobs.deliverAll();
      expect(receiver.received.map((webhook) => webhook.path).sort()).toEqual(['/c/fail', '/c/fail']);
      expect(await states(c.merchant.businessCode)).toEqual(['/c/fail:succeeded', '/c/fail:succeeded', '/c/ok:succeeded', '/c/ok:succeeded']);
      // Nothing failed is left: a second click queues nothing.
      expect((await c.owner.post('/console/events/redeliver-failed')).location).toBe('/console/events?requeued=0&deliveries=0&limited=0');
      expect(await states(d.merchant.businessCode)).toEqual(['/d/fail:failed']);
    });
  });
});
