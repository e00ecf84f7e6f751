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
  published_at: Date | null;
}

const EVENT_COLUMNS = 'id, sequence, owner_kind, owner_id, type, data, created_at, published_at';

export async function insertEvent(
  tx: Queryable,
  event: { id: string; ownerKind: EventOwnerKind; ownerId: number; type: string; data: Record<string, unknown> },
  now: Date,
): Promise<EventRow> {
  const { rows } = await tx.query<EventRow>(
    `insert into events (id, owner_kind, owner_id, type, data, created_at)
     values ($1::text, $2::text, $3::bigint, $4::text, $5::jsonb, $6::timestamptz)
     returning ${EVENT_COLUMNS}`,
    [event.id, event.ownerKind, event.ownerId, event.type, JSON.stringify(event.data), now],
  );
  return rows[0]!;
}

export async function findEventsOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number): Promise<EventRow[]> {
  const { rows } = await tx.query<EventRow>(
    `select ${EVENT_COLUMNS} from events where owner_kind = $1::text and owner_id = $2::bigint
      order by created_at desc, sequence desc`,
    [ownerKind, ownerId],
  );
  return rows;
}
