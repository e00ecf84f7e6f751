// The rules of webhook endpoints (docs/api-reference.md#webhooks-and-events): who owns them and how many, which URLs and filters are
// accepted, secrets sealed at rest and rotated with a 24 h overlap, and redelivery (bounded per event). Deliveries are written with their
// events by the database (migration 012); dispatch lives in dispatcher.ts.
import { SqlState, type Database, type Queryable, type Transaction } from '../db/database.ts';
import * as events from '../events/service.ts';
import { ownerKey, type EventOwner } from '../events/service.ts';
import type { Principal } from '../kernel/principal.ts';
import { ApiError, notFound, validationError, type FieldError } from '../kernel/errors.ts';
import type { SecretBox } from '../kernel/secret-box.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import { randomBase62 } from '../ids.ts';
import { newWebhookSecret, ROTATION_OVERLAP_MS } from './signing.ts';
import { destinationUrlProblem, type DestinationPolicy } from './ssrf.ts';
import * as store from './store.ts';
import type { AttemptRow, DeliveryStateRow, EndpointRow, EndpointStatus } from './store.ts';

export type { AttemptRow, DeliveryStateRow, EndpointRow } from './store.ts';

/** Channel that wakes dispatchers when a redelivery made deliveries due (new events wake them on the events channel). */
export const DELIVERIES_CHANNEL = 'mps_webhook_deliveries';

/**
 * Endpoints one owner may have (disabled ones count; deleted ones do not). Stripe's figure: enough for a
 * shop, a staging copy and a few integrations, and it bounds what one owner can fan an event out to, which
 * the per-owner sending slots of the dispatcher then share.
 */
export const MAX_ENDPOINTS_PER_OWNER = 16;

/**
 * Redeliveries of one event per window (an hour from the window's first). A receiver that lost an event
 * needs one or two; ten leave room to debug a receiver, and bound what one event can be made to send:
 * at most 10 × 16 endpoints an hour.
 */
export const REDELIVERIES_PER_EVENT = 10;
export const REDELIVERY_WINDOW_MS = 60 * 60 * 1000;

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

/** An endpoint with its signing secret in clear: what create and rotate-secret answer, once. */
export interface EndpointWithSecret {
  endpoint: EndpointRow;
  secret: string;
}

export async function createEndpoint(
  db: Database, owner: EventOwner, settings: { url: string; events?: string[]; description?: string }, destinations: DestinationPolicy,
  now: Date, secrets: SecretBox,
): Promise<EndpointWithSecret> {
  checkSettings(settings, destinations);
  return db.transaction((tx) => createEndpointIn(tx, owner, settings, destinations, now, secrets));
}

/** \`createEndpoint\` inside the caller's transaction (the console's create, under its form's idempotency key). */
export async function createEndpointIn(
  tx: Transaction, owner: EventOwner, settings: { url: string; events?: string[]; description?: string }, destinations: DestinationPolicy,
  now: Date, secrets: SecretBox,
): Promise<EndpointWithSecret> {
  const eventTypes = checkSettings(settings, destinations) ?? ['*'];
  const [ownerKind, ownerId] = ownerKey(owner);
  await store.lockEndpointsOfOwner(tx, ownerKind, ownerId);
  if ((await store.countEndpointsOfOwner(tx, ownerKind, ownerId)) >= MAX_ENDPOINTS_PER_OWNER) {
    throw validationError([{
      field: 'url', code: 'invalid_value',
      message: `you already have ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints, the most allowed; delete one, or widen the events of one you have`,
    }]);
  }
  const id = newEndpointId();
  const secret = newWebhookSecret();
  const endpoint = await store.insertEndpoint(tx, {
    id, ownerKind, ownerId, url: settings.url, description: settings.description ?? null, eventTypes,
    secretSealed: secrets.seal(secret, secretBinding(id, 'current')),
  }, now);
  return { endpoint, secret };
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
  db: Database, owner: EventOwner, id: string, settings: EndpointSettings, destinations: DestinationPolicy, now: Date,
): Promise<EndpointRow> {
  const eventTypes = checkSettings(settings, destinations);
  const [ownerKind, ownerId] = ownerKey(owner);
  return db.transaction(async (tx) => {
    const updated = await store.updateEndpointSettings(tx, ownerKind, ownerId, id, {
      url: settings.url ?? null,
      eventTypes: eventTypes ?? null,
      description: settings.description ?? null,
      status: settings.status ?? null,
    }, now);
    if (!updated) return endpointNotFound();
    if (updated.status === 'disabled') await store.failPendingDeliveriesOfEndpoints(tx, [id], 'endpoint disabled', now);
    return updated;
  });
}

export async function deleteEndpoint(db: Database, owner: EventOwner, id: string, now: Date): Promise<void> {
  const [ownerKind, ownerId] = ownerKey(owner);
  return db.transaction(async (tx) => {
    if (!(await store.markEndpointDeleted(tx, ownerKind, ownerId, id, now))) endpointNotFound();
    await store.failPendingDeliveriesOfEndpoints(tx, [id], 'endpoint deleted', now);
  });
}

/**
 * A new secret. The previous one keeps signing (as a second signature) for 24 hours, or stops at once with
 * `expirePreviousNow` (a secret that leaked). Either way the older one before it stops now.
 */
export async function rotateSecret(
  db: Database, owner: EventOwner, id: string, now: Date, secrets: SecretBox, options: { expirePreviousNow?: boolean } = {},
): Promise<EndpointWithSecret> {
  return db.transaction((tx) => rotateSecretIn(tx, owner, id, now, secrets, options));
}

/** `rotateSecret` inside the caller's transaction (the console's rotate, under its form's idempotency key). */
export async function rotateSecretIn(
  tx: Transaction, owner: EventOwner, id: string, now: Date, secrets: SecretBox, options: { expirePreviousNow?: boolean } = {},
): Promise<EndpointWithSecret> {
  const [ownerKind, ownerId] = ownerKey(owner);
  const current = (await store.lockEndpointOfOwner(tx, ownerKind, ownerId, id)) ?? endpointNotFound();
  const secret = newWebhookSecret();
  const keepPrevious = !options.expirePreviousNow;
  const [endpoint] = await store.storeSealedSecrets(tx, [{
    id,
    secretSealed: secrets.seal(secret, secretBinding(id, 'current')),
    previousSealed: keepPrevious ? secrets.seal(openCurrentSecret(current, secrets), secretBinding(id, 'previous')) : null,
    previousExpiresAt: keepPrevious ? new Date(now.getTime() + ROTATION_OVERLAP_MS) : null,
  }], now);
  return { endpoint: endpoint!, secret };
}

/**
 * Associated data of a sealed secret: its endpoint and its role, so a sealed value copied to another row,
 * or from the previous slot to the current one, does not open (kernel/secret-box.ts).
 */
function secretBinding(endpointId: string, role: 'current' | 'previous'): string {
  return `webhook_endpoint:${endpointId}:${role}`;
}

/** A plain secret wins: it is either the only one (not sealed yet) or newer (rotated by a process of the version before 014). */
function openCurrentSecret(endpoint: EndpointRow, secrets: SecretBox): string {
  if (endpoint.secret) return endpoint.secret;
  if (endpoint.secret_sealed) return secrets.open(endpoint.secret_sealed, secretBinding(endpoint.id, 'current'));
  throw new Error(`webhook endpoint ${endpoint.id} has no secret`);
}

function openPreviousSecret(endpoint: EndpointRow, secrets: SecretBox, now: Date): string | null {
  if (!endpoint.previous_secret_expires_at || endpoint.previous_secret_expires_at <= now) return null;
  if (endpoint.previous_secret_sealed) return secrets.open(endpoint.previous_secret_sealed, secretBinding(endpoint.id, 'previous'));
  return endpoint.previous_secret;
}

/** The secrets that sign a delivery now: the current one, and the previous one during its overlap. */
export function signingSecrets(endpoint: EndpointRow, now: Date, secrets: SecretBox): string[] {
  const previous = openPreviousSecret(endpoint, secrets, now);
  return previous === null ? [openCurrentSecret(endpoint, secrets)] : [openCurrentSecret(endpoint, secrets), previous];
}

/**
 * Seals up to `limit` secrets still stored in clear — rows written before migration 014, or by a process of
 * that version during a rolling deploy — and clears the plain columns. A migration cannot do it: the key
 * is configuration. A previous secret past its overlap is dropped rather than sealed. Returns how many rows.
 */
export async function sealPlainSecrets(db: Database, secrets: SecretBox, now: Date, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const plain = await store.lockEndpointsWithPlainSecrets(tx, limit);
    if (plain.length === 0) return 0;
    await store.storeSealedSecrets(tx, plain.map((endpoint) => {
      const previous = openPreviousSecret(endpoint, secrets, now);
      return {
        id: endpoint.id,
        secretSealed: endpoint.secret ? secrets.seal(endpoint.secret, secretBinding(endpoint.id, 'current')) : endpoint.secret_sealed!,
        previousSealed: previous === null ? null : secrets.seal(previous, secretBinding(endpoint.id, 'previous')),
        previousExpiresAt: previous === null ? null : endpoint.previous_secret_expires_at,
      };
    }), now);
    return plain.length;
  });
}

/** The owner's event with its delivery attempts; 404 when unknown or another owner's. */
export async function getEventWithAttempts(
  tx: Queryable, owner: EventOwner, eventId: string,
): Promise<{ event: events.EventRow; attempts: AttemptRow[] }> {
  const event = await events.getEventOfOwner(tx, owner, eventId);
  return { event, attempts: await store.findAttemptsOfEvent(tx, eventId) };
}

/** Attempts of a redelivery chosen as a deadlock's victim (it wrote nothing, so running it again is safe). */
const REDELIVERY_ATTEMPTS = 3;

/**
 * A redelivery in its own transaction. Its rows are locked in one order (lockDeliveriesOfEvent), so a deadlock
 * should not happen; should the planner still order a competing statement's locks otherwise, the victim runs
 * again instead of answering 500.
 */
export async function redeliver(db: Database, owner: EventOwner, eventId: string, now: Date): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction((tx) => redeliverEvent(tx, owner, eventId, now));
    } catch (error) {
      if ((error as { code?: unknown }).code !== SqlState.DEADLOCK_DETECTED || attempt >= REDELIVERY_ATTEMPTS) throw error;
    }
  }
}

/**
 * Sends the event again, now, to every enabled endpoint of its owner that takes its type, with the same
 * webhook-id; the dispatchers are woken after the commit. 404 when the event is not the owner's.
 */
async function redeliverEvent(tx: Transaction, owner: EventOwner, eventId: string, now: Date): Promise<string[]> {
  const event = await events.getEventOfOwner(tx, owner, eventId);
  if (!(await store.countRedelivery(tx, event.id, now, REDELIVERY_WINDOW_MS, REDELIVERIES_PER_EVENT))) {
    const started = (await store.findRedeliveryWindowStart(tx, event.id)) ?? now;
    const retryAfter = Math.max(1, Math.ceil((started.getTime() + REDELIVERY_WINDOW_MS - now.getTime()) / 1000));
    throw new ApiError('RATE_LIMITED', {
      message: `This event was redelivered ${REDELIVERIES_PER_EVENT} times within an hour, the most allowed; retry after the time in Retry-After.`,
      headers: { 'Retry-After': String(retryAfter) },
    });
  }
  await store.lockDeliveriesOfEvent(tx, event.id);
  const endpointIds = await store.scheduleRedelivery(tx, { id: event.id, ownerKind: event.owner_kind, ownerId: event.owner_id, type: event.type }, now);
  if (endpointIds.length > 0) tx.notifyAfterCommit(DELIVERIES_CHANNEL);
  return endpointIds;
}

/** Where the owner's event stands with each endpoint (pending with its next attempt, succeeded, failed); 404 as getEventOfOwner. */
export async function deliveriesOfEvent(tx: Queryable, owner: EventOwner, eventId: string): Promise<DeliveryStateRow[]> {
  const event = await events.getEventOfOwner(tx, owner, eventId);
  return store.findDeliveriesOfEvent(tx, event.id);
}

/**
 * Events "redeliver every failed event" re-arms at most, per call: the newest ones. Each may fan out to 16
 * endpoints, so a call re-arms at most 50 × 16 = 800 deliveries in one short transaction, and the dispatcher's
 * per-owner slots send them without holding up other owners; the next call takes the next failed ones.
 */
export const REDELIVER_FAILED_MAX_EVENTS = 50;

export interface FailedRedelivery {
  /** Events whose failed deliveries were re-armed. */
  events: number;
  /** Deliveries re-armed (event × endpoint). */
  deliveries: number;
  /** Failed events left as they were: redelivered REDELIVERIES_PER_EVENT times within the hour already. */
  limited: number;
  /** True when more failed events were found than one call takes: calling again re-arms the next ones. */
  more: boolean;
}

/**
 * Sends again, now, every failed delivery of the owner's newest failed events (at most
 * REDELIVER_FAILED_MAX_EVENTS) to its enabled endpoints that still take the event's type, with the same
 * webhook-id; deliveries that succeeded are not repeated. Each event re-armed counts as one redelivery of it
 * (REDELIVERIES_PER_EVENT per REDELIVERY_WINDOW_MS, as \`redeliver\`); an event at its limit is skipped and
 * counted in \`limited\`. A constant number of statements whatever the number of events; locks in the order
 * \`redeliver\` takes them (window rows, then deliveries in id order); a deadlock's victim runs again.
 */
export async function redeliverFailed(db: Database, owner: EventOwner, now: Date): Promise<FailedRedelivery> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction((tx) => redeliverFailedIn(tx, owner, now));
    } catch (error) {
      if ((error as { code?: unknown }).code !== SqlState.DEADLOCK_DETECTED || attempt >= REDELIVERY_ATTEMPTS) throw error;
    }
  }
}

async function redeliverFailedIn(tx: Transaction, owner: EventOwner, now: Date): Promise<FailedRedelivery> {
  const [ownerKind, ownerId] = ownerKey(owner);
  const found = await store.findFailedEventIdsOfOwner(tx, ownerKind, ownerId, REDELIVER_FAILED_MAX_EVENTS + 1);
  const more = found.length > REDELIVER_FAILED_MAX_EVENTS;
  const candidates = found.slice(0, REDELIVER_FAILED_MAX_EVENTS);
  if (candidates.length === 0) return { events: 0, deliveries: 0, limited: 0, more: false };
  const allowed = await store.countRedeliveries(tx, candidates, now, REDELIVERY_WINDOW_MS, REDELIVERIES_PER_EVENT);
  await store.lockDeliveriesOfEvents(tx, allowed);
  const rows = await events.getEventsByIds(tx, allowed);
  const rearmed = await store.rearmFailedDeliveries(tx, ownerKind, ownerId, allowed.map((id) => ({ id, type: rows.get(id)!.type })), now);
  if (rearmed.length > 0) tx.notifyAfterCommit(DELIVERIES_CHANNEL);
  return { events: new Set(rearmed.map((row) => row.event_id)).size, deliveries: rearmed.length, limited: candidates.length - allowed.length, more };
}
