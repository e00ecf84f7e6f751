// The rules of webhook endpoints (docs/api-reference.md#webhooks-and-events): who owns them, which URLs and filters are accepted, secret
// rotation with a 24 h overlap, and redelivery. Deliveries are written with their events by the database (migration 012); dispatch lives in dispatcher.ts.
import type { Queryable, Transaction } from '../db/database.ts';
import * as events from '../events/service.ts';
import { ownerKey, type EventOwner } from '../events/service.ts';
import type { Principal } from '../kernel/principal.ts';
import { notFound, validationError, type FieldError } from '../kernel/errors.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import { randomBase62 } from '../ids.ts';
import { newWebhookSecret, ROTATION_OVERLAP_MS } from './signing.ts';
import { destinationUrlProblem, type DestinationPolicy } from './ssrf.ts';
import * as store from './store.ts';
import type { AttemptRow, EndpointRow, EndpointStatus } from './store.ts';

export type { AttemptRow, EndpointRow } from './store.ts';

/** Channel that wakes dispatchers when a redelivery made deliveries due (new events wake them on the events channel). */
export const DELIVERIES_CHANNEL = 'mps_webhook_deliveries';

export function newEndpointId(): string {
  return `we_${randomBase62(24)}`;
}

/** The owner whose endpoints and events a caller sees: the key's merchant, or the master key's partner. */
export function ownerOfPrincipal(principal: Principal | null): EventOwner {
  if (principal?.kind === 'merchant') return { kind: 'merchant', businessCode: principal.businessCode };
  if (principal?.kind === 'partner') return { kind: 'partner', partnerId: principal.partnerId };
  throw new Error('webhook route reached without a merchant or partner principal');
}

function endpointNotFound(): never {
  throw notFound('webhook endpoint');
}

/** The problem of a URL as a field error, or null. The destination policy may also refuse http and blocked IP literals. */
export function urlFieldError(text: string, destinations: DestinationPolicy): FieldError | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { field: 'url', code: 'invalid_format', message: 'must be an absolute URL such as https://shop.example.com/webhooks' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { field: 'url', code: 'invalid_format', message: 'must be an http or https URL' };
  }
  if (url.username || url.password) {
    return { field: 'url', code: 'invalid_format', message: 'must not carry credentials; authenticate deliveries by their signature' };
  }
  const problem = destinationUrlProblem(url, destinations);
  if (problem) return { field: 'url', code: 'invalid_value', message: problem };
  return null;
}

/** ["*"] or distinct event types, in the order given. */
function normalizeEventFilter(filter: string[]): { value: string[]; error: FieldError | null } {
  const value = [...new Set(filter)];
  if (value.includes('*') && value.length > 1) {
    return { value, error: { field: 'events', code: 'invalid_value', message: 'use ["*"] alone, or list event types' } };
  }
  return { value, error: null };
}

export interface EndpointSettings {
  url?: string;
  events?: string[];
  description?: string;
  status?: EndpointStatus;
}

function checkSettings(settings: EndpointSettings, destinations: DestinationPolicy): string[] | undefined {
  const errors: FieldError[] = [];
  if (settings.url !== undefined) {
    const error = urlFieldError(settings.url, destinations);
    if (error) errors.push(error);
  }
  let eventTypes: string[] | undefined;
  if (settings.events !== undefined) {
    const { value, error } = normalizeEventFilter(settings.events);
    if (error) errors.push(error);
    eventTypes = value;
  }
  if (errors.length > 0) throw validationError(errors);
  return eventTypes;
}

export async function createEndpoint(
  tx: Transaction, owner: EventOwner, settings: { url: string; events?: string[]; description?: string }, destinations: DestinationPolicy, now: Date,
): Promise<EndpointRow> {
  const eventTypes = checkSettings(settings, destinations) ?? ['*'];
  const [ownerKind, ownerId] = ownerKey(owner);
  return store.insertEndpoint(tx, {
    id: newEndpointId(), ownerKind, ownerId, url: settings.url, description: settings.description ?? null, eventTypes, secret: newWebhookSecret(),
  }, now);
}

export async function listEndpoints(tx: Queryable, owner: EventOwner, page: PageRequest): Promise<Page<EndpointRow>> {
  const [ownerKind, ownerId] = ownerKey(owner);
  const { limit, offset } = pageWindow(page);
  const items = await store.findEndpointPageOfOwner(tx, ownerKind, ownerId, limit, offset);
  const total = await store.countEndpointsOfOwner(tx, ownerKind, ownerId);
  return { items, total };
}

/** The owner's endpoint; 404 for an unknown id or another owner's endpoint. */
export async function getEndpoint(tx: Queryable, owner: EventOwner, id: string): Promise<EndpointRow> {
  const [ownerKind, ownerId] = ownerKey(owner);
  return (await store.findEndpointOfOwner(tx, ownerKind, ownerId, id)) ?? endpointNotFound();
}

/** PATCH: disabling an endpoint fails its pending deliveries (a redelivery sends them again once re-enabled). */
export async function updateEndpoint(
  tx: Transaction, owner: EventOwner, id: string, settings: EndpointSettings, destinations: DestinationPolicy, now: Date,
): Promise<EndpointRow> {
  const eventTypes = checkSettings(settings, destinations);
  const [ownerKind, ownerId] = ownerKey(owner);
  const updated = await store.updateEndpointSettings(tx, ownerKind, ownerId, id, {
    url: settings.url ?? null,
    eventTypes: eventTypes ?? null,
    description: settings.description ?? null,
    status: settings.status ?? null,
  }, now);
  if (!updated) return endpointNotFound();
  if (updated.status === 'disabled') await store.failPendingDeliveriesOfEndpoints(tx, [id], 'endpoint disabled', now);
  return updated;
}

export async function deleteEndpoint(tx: Transaction, owner: EventOwner, id: string, now: Date): Promise<void> {
  const [ownerKind, ownerId] = ownerKey(owner);
  if (!(await store.markEndpointDeleted(tx, ownerKind, ownerId, id, now))) endpointNotFound();
  await store.failPendingDeliveriesOfEndpoints(tx, [id], 'endpoint deleted', now);
}

/** A new secret; the previous one keeps signing (as a second signature) for 24 hours. */
export async function rotateSecret(tx: Transaction, owner: EventOwner, id: string, now: Date): Promise<EndpointRow> {
  const [ownerKind, ownerId] = ownerKey(owner);
  const rotated = await store.rotateEndpointSecret(tx, ownerKind, ownerId, id, newWebhookSecret(), new Date(now.getTime() + ROTATION_OVERLAP_MS), now);
  return rotated ?? endpointNotFound();
}

/** The secrets that sign a delivery now: the current one, and the previous one during its overlap. */
export function signingSecrets(endpoint: EndpointRow, now: Date): string[] {
  const secrets = [endpoint.secret];
  if (endpoint.previous_secret && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > now) {
    secrets.push(endpoint.previous_secret);
  }
  return secrets;
}

/** The owner's event with its delivery attempts; 404 when unknown or another owner's. */
export async function getEventWithAttempts(
  tx: Queryable, owner: EventOwner, eventId: string,
): Promise<{ event: events.EventRow; attempts: AttemptRow[] }> {
  const event = await events.getEventOfOwner(tx, owner, eventId);
  return { event, attempts: await store.findAttemptsOfEvent(tx, eventId) };
}

/**
 * Sends the event again, now, to every enabled endpoint of its owner that takes its type, with the same
 * webhook-id; the dispatchers are woken after the commit. 404 when the event is not the owner's.
 */
export async function redeliverEvent(tx: Transaction, owner: EventOwner, eventId: string, now: Date): Promise<string[]> {
  const event = await events.getEventOfOwner(tx, owner, eventId);
  const endpointIds = await store.scheduleRedelivery(tx, { id: event.id, ownerKind: event.owner_kind, ownerId: event.owner_id, type: event.type }, now);
  if (endpointIds.length > 0) tx.notifyAfterCommit(DELIVERIES_CHANNEL);
  return endpointIds;
}
