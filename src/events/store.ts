// SQL of the event outbox.
import type { Queryable } from '../db/database.ts';

export type EventOwnerKind = 'merchant' | 'partner';

export interface EventRow {
  id: string;
  sequence: number;
  owner_kind: EventOwnerKind;
  owner_id: number;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

const EVENT_COLUMNS = 'id, sequence, owner_kind, owner_id, type, data, created_at';

export interface NewEvent {
  id: string;
  ownerKind: EventOwnerKind;
  ownerId: number;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Inserts events in one statement; their `sequence` follows the order given. Rows come back in that order,
 * with whether any of them has a subscriber (event_subscribers, migration 013): an endpoint its trigger
 * wrote a delivery for. Read in the statement's snapshot, so an endpoint created at that very moment may
 * get a delivery without being counted here; the dispatcher's poll finds that one.
 */
export async function insertEvents(tx: Queryable, events: readonly NewEvent[]): Promise<{ rows: EventRow[]; subscribed: boolean }> {
  const { rows } = await tx.query<EventRow & { subscribed: boolean }>(
    `insert into events (id, owner_kind, owner_id, type, data, created_at)
     select id, owner_kind, owner_id, type, data, created_at
       from unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::timestamptz[]) with ordinality
         as e(id, owner_kind, owner_id, type, data, created_at, ord)
      order by ord
     returning ${EVENT_COLUMNS}, exists (select from event_subscribers(owner_kind, owner_id, type)) as subscribed`,
    [
      events.map((e) => e.id), events.map((e) => e.ownerKind), events.map((e) => e.ownerId), events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data)), events.map((e) => e.createdAt.toISOString()),
    ],
  );
  const subscribed = rows.some((row) => row.subscribed);
  return {
    rows: rows.map(({ subscribed: _, ...event }) => event).sort((a, b) => a.sequence - b.sequence),
    subscribed,
  };
}

export async function findEventPageOfOwner(
  tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, type: string | null, limit: number, offset: number,
): Promise<EventRow[]> {
  const { rows } = await tx.query<EventRow>(
    `select ${EVENT_COLUMNS} from events
      where owner_kind = $1::text and owner_id = $2::bigint and ($3::text is null or type = $3::text)
      order by created_at desc, sequence desc limit $4::integer offset $5::integer`,
    [ownerKind, ownerId, type, limit, offset],
  );
  return rows;
}

export async function countEventsOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, type: string | null): Promise<number> {
  const { rows } = await tx.query<{ total: number }>(
    `select count(*)::bigint as total from events
      where owner_kind = $1::text and owner_id = $2::bigint and ($3::text is null or type = $3::text)`,
    [ownerKind, ownerId, type],
  );
  return rows[0]!.total;
}

export async function findEventOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, eventId: string): Promise<EventRow | undefined> {
  const { rows } = await tx.query<EventRow>(
    `select ${EVENT_COLUMNS} from events where id = $3::text and owner_kind = $1::text and owner_id = $2::bigint`,
    [ownerKind, ownerId, eventId],
  );
  return rows[0];
}

export async function findEventsByIds(tx: Queryable, eventIds: string[]): Promise<EventRow[]> {
  const { rows } = await tx.query<EventRow>(`select ${EVENT_COLUMNS} from events where id = any($1::text[])`, [eventIds]);
  return rows;
}
