// SQL of webhook endpoints, deliveries and attempts. Every function takes the transaction (or the database
// for a single read) first; events are read through the events service, never from here.
import type { Queryable } from '../db/database.ts';
import type { EventOwnerKind } from '../events/service.ts';

export type EndpointStatus = 'enabled' | 'disabled';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface EndpointRow {
  id: string;
  owner_kind: EventOwnerKind;
  owner_id: number;
  url: string;
  description: string | null;
  event_types: string[];
  status: EndpointStatus;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface ClaimedDelivery {
  id: number;
  event_id: string;
  endpoint_id: string;
  /** Attempt of the current round, 1-based (index into the retry schedule). */
  attempts: number;
  /** Number of this attempt among all attempts of the delivery (webhook_attempts.attempt). */
  attempts_total: number;
  /** When the attempt became due: the event's time for a first attempt, else the retry's or redelivery's. */
  next_attempt_at: Date;
}

export interface AttemptRow {
  endpoint_id: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  sent_at: Date;
}

/** How one claimed delivery ended: `succeeded`; `failed` (retried per schedule, or failed after the last); `abandoned` (failed now: 410 or endpoint gone). */
export type DeliveryOutcome = 'succeeded' | 'failed' | 'abandoned';

export interface DeliveryResult {
  deliveryId: number;
  eventId: string;
  endpointId: string;
  attempt: number;
  outcome: DeliveryOutcome;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  sentAt: Date;
  /** False when no request was made (endpoint disabled before sending): no attempt is recorded. */
  attempted: boolean;
  /** The SSRF guard refused the address (live mode); counted apart in the metrics. */
  refused?: boolean;
}

const ENDPOINT_COLUMNS = `id, owner_kind, owner_id, url, description, event_types, status, secret, previous_secret,
  previous_secret_expires_at, created_at, updated_at, deleted_at`;

export async function insertEndpoint(
  tx: Queryable,
  endpoint: { id: string; ownerKind: EventOwnerKind; ownerId: number; url: string; description: string | null; eventTypes: string[]; secret: string },
  now: Date,
): Promise<EndpointRow> {
  const { rows } = await tx.query<EndpointRow>(
    `insert into webhook_endpoints (id, owner_kind, owner_id, url, description, event_types, secret, created_at, updated_at)
     values ($1::text, $2::text, $3::bigint, $4::text, $5::text, $6::text[], $7::text, $8::timestamptz, $8::timestamptz)
     returning ${ENDPOINT_COLUMNS}`,
    [endpoint.id, endpoint.ownerKind, endpoint.ownerId, endpoint.url, endpoint.description, endpoint.eventTypes, endpoint.secret, now],
  );
  return rows[0]!;
}

export async function findEndpointOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await tx.query<EndpointRow>(
    `select ${ENDPOINT_COLUMNS} from webhook_endpoints
      where id = $3::text and owner_kind = $1::text and owner_id = $2::bigint and deleted_at is null`,
    [ownerKind, ownerId, id],
  );
  return rows[0];
}

export async function findEndpointPageOfOwner(
  tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, limit: number, offset: number,
): Promise<EndpointRow[]> {
  const { rows } = await tx.query<EndpointRow>(
    `select ${ENDPOINT_COLUMNS} from webhook_endpoints
      where owner_kind = $1::text and owner_id = $2::bigint and deleted_at is null
      order by created_at desc, sequence desc limit $3::integer offset $4::integer`,
    [ownerKind, ownerId, limit, offset],
  );
  return rows;
}

export async function countEndpointsOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number): Promise<number> {
  const { rows } = await tx.query<{ total: number }>(
    `select count(*)::bigint as total from webhook_endpoints
      where owner_kind = $1::text and owner_id = $2::bigint and deleted_at is null`,
    [ownerKind, ownerId],
  );
  return rows[0]!.total;
}

/** Changes url, events, description and status (each null = unchanged); returns the previous status too. */
export async function updateEndpointSettings(
  tx: Queryable,
  ownerKind: EventOwnerKind,
  ownerId: number,
  id: string,
  patch: { url: string | null; eventTypes: string[] | null; description: string | null; status: EndpointStatus | null },
  now: Date,
): Promise<EndpointRow | undefined> {
  const { rows } = await tx.query<EndpointRow>(
    `update webhook_endpoints set
        url = coalesce($4::text, url),
        event_types = coalesce($5::text[], event_types),
        description = coalesce($6::text, description),
        status = coalesce($7::text, status),
        updated_at = $8::timestamptz
      where id = $3::text and owner_kind = $1::text and owner_id = $2::bigint and deleted_at is null
      returning ${ENDPOINT_COLUMNS}`,
    [ownerKind, ownerId, id, patch.url, patch.eventTypes, patch.description, patch.status, now],
  );
  return rows[0];
}

/** New secret; the one it replaces keeps signing until `previousExpiresAt`. */
export async function rotateEndpointSecret(
  tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, id: string, newSecret: string, previousExpiresAt: Date, now: Date,
): Promise<EndpointRow | undefined> {
  const { rows } = await tx.query<EndpointRow>(
    `update webhook_endpoints set previous_secret = secret, previous_secret_expires_at = $5::timestamptz,
        secret = $4::text, updated_at = $6::timestamptz
      where id = $3::text and owner_kind = $1::text and owner_id = $2::bigint and deleted_at is null
      returning ${ENDPOINT_COLUMNS}`,
    [ownerKind, ownerId, id, newSecret, previousExpiresAt, now],
  );
  return rows[0];
}

export async function markEndpointDeleted(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, id: string, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `update webhook_endpoints set deleted_at = $4::timestamptz, status = 'disabled', updated_at = $4::timestamptz
      where id = $3::text and owner_kind = $1::text and owner_id = $2::bigint and deleted_at is null`,
    [ownerKind, ownerId, id, now],
  );
  return rowCount > 0;
}

/** The receiver answered 410 Gone: stop sending to it (docs/api-reference.md#retries). */
export async function disableEndpoint(tx: Queryable, id: string, now: Date): Promise<void> {
  await tx.query(
    `update webhook_endpoints set status = 'disabled', updated_at = $2::timestamptz where id = $1::text and status = 'enabled'`,
    [id, now],
  );
}

/** Fails the endpoint's pending deliveries (disabled or deleted); a lease holder's later completion no longer matches. */
export async function failPendingDeliveriesOfEndpoints(tx: Queryable, endpointIds: string[], reason: string, now: Date): Promise<number> {
  const { rowCount } = await tx.query(
    `update webhook_deliveries set status = 'failed', locked_by = null, locked_until = null, last_error = $2::text,
        updated_at = $3::timestamptz
      where endpoint_id = any($1::text[]) and status = 'pending'`,
    [endpointIds, reason, now],
  );
  return rowCount;
}

export async function findEndpointsByIds(tx: Queryable, ids: string[]): Promise<Map<string, EndpointRow>> {
  const { rows } = await tx.query<EndpointRow>(`select ${ENDPOINT_COLUMNS} from webhook_endpoints where id = any($1::text[])`, [ids]);
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * Redelivery (docs/api-reference.md#events-api): a new round for every enabled endpoint of the owner that takes the event's type,
 * creating the delivery if the endpoint had none. Any lease is dropped, so a send still in flight cannot
 * complete the new round. Returns the endpoint ids.
 */
export async function scheduleRedelivery(
  tx: Queryable, event: { id: string; ownerKind: EventOwnerKind; ownerId: number; type: string }, now: Date,
): Promise<string[]> {
  const { rows } = await tx.query<{ endpoint_id: string }>(
    `insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at, updated_at)
     select $1::text, w.id, $5::timestamptz, $5::timestamptz, $5::timestamptz
       from webhook_endpoints w
      where w.owner_kind = $2::text and w.owner_id = $3::bigint and w.status = 'enabled' and w.deleted_at is null
        and (w.event_types @> array['*']::text[] or w.event_types @> array[$4::text])
     on conflict on constraint webhook_deliveries_event_endpoint_unique do update
       set status = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at,
           locked_by = null, locked_until = null, updated_at = excluded.updated_at
     returning endpoint_id`,
    [event.id, event.ownerKind, event.ownerId, event.type, now],
  );
  return rows.map((row) => row.endpoint_id).sort();
}

/**
 * Claims up to `limit` due deliveries for `workerId` until `leaseUntil`: pending, due, and not leased (or
 * leased by a worker that died: its lease has run out, so no separate sweeper is needed). SKIP LOCKED
 * lets concurrent dispatchers take disjoint batches; the attempt counters move at claim time, so a send
 * that kills its worker still counts. Endpoints in `busyEndpointIds` (already at this worker's
 * per-endpoint limit) are skipped, so one slow receiver's backlog cannot fill every sending slot.
 */
export async function claimDueDeliveries(
  tx: Queryable, workerId: string, now: Date, leaseUntil: Date, limit: number, busyEndpointIds: string[] = [],
): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query<ClaimedDelivery>(
    `with due as (
       select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= $2::timestamptz
          and (locked_until is null or locked_until < $2::timestamptz)
          and endpoint_id <> all($5::text[])
        order by next_attempt_at, id
        limit $4::integer
        for update skip locked
     )
     update webhook_deliveries d
        set locked_by = $1::text, locked_until = $3::timestamptz, attempts = d.attempts + 1,
            attempts_total = d.attempts_total + 1, updated_at = $2::timestamptz
       from due where d.id = due.id
     returning d.id, d.event_id, d.endpoint_id, d.attempts, d.attempts_total, d.next_attempt_at`,
    [workerId, now, leaseUntil, limit, busyEndpointIds],
  );
  return rows;
}

/**
 * Completes claimed deliveries, guarded by the lease holder and the attempt number (graphile/worker's
 * `locked_by` guard): a worker whose lease was taken over changes nothing. A failed attempt is retried
 * after `scheduleMs[attempts]` (computed here from the round's attempts), or fails after the last.
 * Returns the ids and final statuses of the deliveries this worker still held.
 */
export async function completeDeliveries(
  tx: Queryable, workerId: string, results: DeliveryResult[], scheduleMs: number[], now: Date,
): Promise<Array<{ id: number; status: DeliveryStatus }>> {
  const { rows } = await tx.query<{ id: number; status: DeliveryStatus }>(
    `update webhook_deliveries d set
        status = case
          when r.outcome = 'succeeded' then 'succeeded'
          when r.outcome = 'abandoned' or d.attempts > cardinality($6::bigint[]) then 'failed'
          else 'pending' end,
        next_attempt_at = case
          when r.outcome = 'failed' and d.attempts <= cardinality($6::bigint[])
            then $7::timestamptz + ($6::bigint[])[d.attempts] * interval '1 millisecond'
          else d.next_attempt_at end,
        locked_by = null, locked_until = null,
        last_status_code = r.status_code, last_error = r.error, updated_at = $7::timestamptz
       from unnest($1::bigint[], $2::integer[], $3::text[], $4::integer[], $5::text[]) as r(id, attempt, outcome, status_code, error)
      where d.id = r.id and d.locked_by = $8::text and d.attempts_total = r.attempt
     returning d.id, d.status`,
    [
      results.map((r) => r.deliveryId), results.map((r) => r.attempt), results.map((r) => r.outcome),
      results.map((r) => r.statusCode), results.map((r) => r.error), scheduleMs, now, workerId,
    ],
  );
  return rows;
}

/** Records attempts that were made (every one, even when the lease was lost meanwhile). */
export async function recordAttempts(tx: Queryable, results: DeliveryResult[]): Promise<void> {
  const made = results.filter((r) => r.attempted);
  if (made.length === 0) return;
  await tx.query(
    `insert into webhook_attempts (delivery_id, event_id, endpoint_id, attempt, status_code, duration_ms, error, sent_at)
     select * from unnest($1::bigint[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::integer[], $7::text[], $8::timestamptz[])
     on conflict on constraint webhook_attempts_delivery_attempt_unique do nothing`,
    [
      made.map((r) => r.deliveryId), made.map((r) => r.eventId), made.map((r) => r.endpointId), made.map((r) => r.attempt),
      made.map((r) => r.statusCode), made.map((r) => r.durationMs), made.map((r) => r.error), made.map((r) => r.sentAt.toISOString()),
    ],
  );
}

export async function findAttemptsOfEvent(tx: Queryable, eventId: string): Promise<AttemptRow[]> {
  const { rows } = await tx.query<AttemptRow>(
    `select endpoint_id, attempt, status_code, duration_ms, error, sent_at from webhook_attempts
      where event_id = $1::text order by sent_at, id`,
    [eventId],
  );
  return rows;
}
