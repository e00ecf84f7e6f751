// Webhook endpoints, the events they receive, and verifying a delivery's signature (Standard Webhooks,
// with the `standardwebhooks` library — the same scheme any of its implementations checks).
import { Webhook } from 'standardwebhooks';
import { List } from './pages.ts';
import { unwrap, type Api, type CallOptions } from './transport.ts';
import type { Query, WebhookEndpointCreate, WebhookEndpointUpdate, WebhookEvent } from './types.ts';

export function webhookEndpoints(api: Api) {
  return {
    /** The answer is the only time `secret` is shown (besides rotateSecret): keep it. */
    create: (body: WebhookEndpointCreate, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/webhook-endpoints', { body, signal: options.signal })),
    get: (id: string, options: CallOptions = {}) =>
      unwrap(api.GET('/api/v2/webhook-endpoints/{id}', { params: { path: { id } }, signal: options.signal })),
    list: (query: Query<'/api/v2/webhook-endpoints'> = {}) =>
      new List((q: typeof query) => unwrap(api.GET('/api/v2/webhook-endpoints', { params: { query: q } })), query),
    update: (id: string, body: WebhookEndpointUpdate, options: CallOptions = {}) =>
      unwrap(api.PATCH('/api/v2/webhook-endpoints/{id}', { params: { path: { id } }, body, signal: options.signal })),
    delete: async (id: string, options: CallOptions = {}): Promise<void> => {
      await unwrap(api.DELETE('/api/v2/webhook-endpoints/{id}', { params: { path: { id } }, signal: options.signal }));
    },
    /**
     * A new secret; for 24 hours deliveries are signed with the previous one too, unless
     * `expirePreviousNow` (a leaked secret) stops it at once.
     */
    rotateSecret: (id: string, options: CallOptions & { expirePreviousNow?: boolean } = {}) =>
      unwrap(api.POST('/api/v2/webhook-endpoints/{id}/rotate-secret', {
        params: { path: { id } },
        body: options.expirePreviousNow ? { expire_previous_now: true } : {},
        signal: options.signal,
      })),
  };
}

export function events(api: Api) {
  return {
    /** The event with its delivery attempts. */
    get: (id: string, options: CallOptions = {}) =>
      unwrap(api.GET('/api/v2/events/{id}', { params: { path: { id } }, signal: options.signal })),
    list: (query: Query<'/api/v2/events'> = {}) =>
      new List((q: typeof query) => unwrap(api.GET('/api/v2/events', { params: { query: q } })), query),
    redeliver: (id: string, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/events/{id}/redeliver', { params: { path: { id } }, signal: options.signal })),
  };
}

/**
 * The event a delivery carries, once its signature and timestamp are checked; throws when they are not
 * right (a forged or replayed delivery). `payload` is the raw body exactly as received — not re-encoded
 * JSON, which would not match the signature. Deliveries are at least once: dedupe on the event's `id`.
 */
export function verifyWebhook(secret: string, payload: string | Buffer, headers: Record<string, string | string[] | undefined> | Headers): WebhookEvent {
  return new Webhook(secret).verify(payload, headerRecord(headers)) as WebhookEvent;
}

function headerRecord(headers: Record<string, string | string[] | undefined> | Headers): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => { record[name] = value; });
    return record;
  }
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) record[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return record;
}
