// The outbox: emit() writes an event in the caller's transaction, so a committed change always has its
// event and a rolled-back one never does. The webhooks module delivers from this table in its own worker.
import type { Queryable, Transaction } from '../db/database.ts';
import { randomBase62 } from '../ids.ts';
import * as store from './store.ts';
import type { EventOwnerKind, EventRow } from './store.ts';

export type { EventOwnerKind, EventRow } from './store.ts';

/** Channel that wakes event consumers after a commit; only a wake-up, consumers also poll. */
export const EVENTS_CHANNEL = 'mps_events';

export type EventType =
  | 'simple_qr.payment_received' | 'simple_qr.paid' | 'simple_qr.canceled'
  | 'transfer.created' | 'transfer.in_transit' | 'transfer.completed' | 'transfer.failed' | 'transfer.canceled'
  | 'onboarding_intent.completed' | 'onboarding_intent.cancelled' | 'onboarding_intent.expired';

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
  const event = await store.insertEvent(tx, {
    id: newEventId(),
    ownerKind: owner.kind,
    ownerId: owner.kind === 'merchant' ? owner.businessCode : owner.partnerId,
    type,
    data,
  }, now);
  tx.notifyAfterCommit(EVENTS_CHANNEL);
  return event;
}

export async function listEventsOfOwner(db: Queryable, owner: EventOwner): Promise<EventRow[]> {
  return owner.kind === 'merchant'
    ? store.findEventsOfOwner(db, 'merchant', owner.businessCode)
    : store.findEventsOfOwner(db, 'partner', owner.partnerId);
}

/** The wire form of an event (API.md §7). */
export function toEventPayload(event: EventRow): { id: string; type: string; created_at: string; data: Record<string, unknown> } {
  return { id: event.id, type: event.type, created_at: event.created_at.toISOString(), data: event.data };
}
