// The outbox: emit() writes an event in the caller's transaction, so a committed change always has its
// event and a rolled-back one never does. Its webhook deliveries are written in the same statement by a
// trigger the webhooks module's migration defines (012, 013), and its dispatchers are woken after the commit
// when some endpoint takes one of its events.
import type { Queryable, Transaction } from '../db/database.ts';
import { randomBase62 } from '../ids.ts';
import { notFound } from '../kernel/errors.ts';
import { pageWindow, type Page, type PageRequest } from '../kernel/pagination.ts';
import * as store from './store.ts';
import type { EventOwnerKind, EventRow } from './store.ts';

export type { EventOwnerKind, EventRow } from './store.ts';

/**
 * Channel that wakes event consumers after the commit of an event that has a subscriber (event_subscribers,
 * migration 013); only a wake-up, consumers also poll.
 */
export const EVENTS_CHANNEL = 'mps_events';

/** Every event type of docs/api-reference.md#event-types, at run time (webhook endpoint filters and the events list validate against it). */
export const EVENT_TYPES = [
  'simple_qr.payment_received', 'simple_qr.paid', 'simple_qr.canceled',
  'transfer.created', 'transfer.in_transit', 'transfer.completed', 'transfer.failed', 'transfer.canceled',
  'onboarding_intent.completed', 'onboarding_intent.cancelled', 'onboarding_intent.expired',
  'refund.created', 'refund.completed', 'refund.failed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** The merchant or partner whose change an event reports: only its endpoints receive it, only it lists it. */
export type EventOwner = { kind: 'merchant'; businessCode: number } | { kind: 'partner'; partnerId: number };

export function newEventId(): string {
  return `evt_${randomBase62(24)}`;
}

/** Writes an event into the outbox inside `tx`; consumers are woken after the commit. */
export async function emit(
  tx: Transaction,
  owner: EventOwner,
  type: EventType,
  data: Record<string, unknown>,
  now: Date,
): Promise<EventRow> {
  const [event] = await emitEach(tx, [{ owner, type, data, now }]);
  return event!;
}

export interface Emission {
  owner: EventOwner;
  type: EventType;
  data: Record<string, unknown>;
  now: Date;
}

/** `emit` for several events in one statement (changes written together); rows in the order given. */
export async function emitEach(tx: Transaction, emissions: readonly Emission[]): Promise<EventRow[]> {
  if (emissions.length === 0) return [];
  const { rows, subscribed } = await store.insertEvents(tx, emissions.map(({ owner, type, data, now }) => {
    const [ownerKind, ownerId] = ownerKey(owner);
    return { id: newEventId(), ownerKind, ownerId, type, data, createdAt: now };
  }));
  // Only events someone takes wake a consumer: a claim that finds nothing costs a round trip and a pooled
  // connection, once per batch of writes, which the busiest paths felt (BENCHMARKS.md).
  if (subscribed) tx.notifyAfterCommit(EVENTS_CHANNEL);
  return rows;
}

/** An owner as the (kind, id) pair the tables store. */
export function ownerKey(owner: EventOwner): [EventOwnerKind, number] {
  return owner.kind === 'merchant' ? ['merchant', owner.businessCode] : ['partner', owner.partnerId];
}

/** One page of the owner's events, newest first, optionally of one type. */
export async function listEventPage(tx: Queryable, owner: EventOwner, type: EventType | null, page: PageRequest): Promise<Page<EventRow>> {
  const [kind, id] = ownerKey(owner);
  const { limit, offset } = pageWindow(page);
  const items = await store.findEventPageOfOwner(tx, kind, id, type, limit, offset);
  const total = await store.countEventsOfOwner(tx, kind, id, type);
  return { items, total };
}

/** The owner's event with this id; 404 for an unknown id or another owner's event. */
export async function getEventOfOwner(tx: Queryable, owner: EventOwner, eventId: string): Promise<EventRow> {
  const [kind, id] = ownerKey(owner);
  const event = await store.findEventOfOwner(tx, kind, id, eventId);
  if (!event) throw notFound('event');
  return event;
}

/** Events by id (any owner): for workers that deliver events they reference by id. */
export async function getEventsByIds(tx: Queryable, eventIds: string[]): Promise<Map<string, EventRow>> {
  const rows = await store.findEventsByIds(tx, eventIds);
  return new Map(rows.map((row) => [row.id, row]));
}

