// Reads an owner's events straight from the outbox table, newest first: what a test checks was emitted.
// The service has no such unpaged read (the API lists pages); tests look at the table itself.
import type { Queryable } from '../../src/db/database.ts';
import { ownerKey, type EventOwner, type EventRow } from '../../src/events/service.ts';

export async function eventsOfOwner(db: Queryable, owner: EventOwner): Promise<EventRow[]> {
  const [kind, id] = ownerKey(owner);
  const { rows } = await db.query<EventRow>(
    `select id, sequence, owner_kind, owner_id, type, data, created_at from events
      where owner_kind = $1::text and owner_id = $2::bigint order by created_at desc, sequence desc`,
    [kind, id],
  );
  return rows;
}
