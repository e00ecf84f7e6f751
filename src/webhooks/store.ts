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
  /** Plain secret of a row written before migration 014 (or by a process of that version), until the sealing job seals it. */
  secret: string | null;
  /** The signing secret sealed with SecretBox (service.ts says with which associated data). */
  secret_sealed: string | null;
  previous_secret: string | null;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface ClaimedDelivery {
  id: number;
  event_id: string;
  endpoint_id: string;
  /** `<owner_kind>:<owner_id>` of the endpoint: the dispatcher shares its sending slots per owner. */
  owner: string;
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

const ENDPOINT_COLUMNS = `id, owner_kind, owner_id, url, description, event_types, status, secret, secret_sealed, previous_secret,
  previous_secret_sealed, previous_secret_expires_at, created_at, updated_at, deleted_at`;
const ENDPOINT_COLUMNS_OF_W = ENDPOINT_COLUMNS.split(',').map((column) => `w.${column.trim()}`).join(', ');

/**
 * The service passes `secretSealed`; a plain `secret` is how rows were written before migration 014 (tests of
 * the sealing job write them so), and the sealing job seals it.
 */
export async function insertEndpoint(
  tx: Queryable,
  endpoint: {
    id: string; ownerKind: EventOwnerKind; ownerId: number; url: string; description: string | null; eventTypes: string[];
    secretSealed?: string; secret?: string;
  },
  now: Date,
): Promise<EndpointRow> {
  const { rows } = await tx.query<EndpointRow>(
    `insert into webhook_endpoints (id, owner_kind, owner_id, url, description, event_types, secret_sealed, secret, created_at, updated_at)
     values ($1::text, $2::text, $3::bigint, $4::text, $5::text, $6::text[], $7::text, $8::text, $9::timestamptz, $9::timestamptz)
     returning ${ENDPOINT_COLUMNS}`,
    [endpoint.id, endpoint.ownerKind, endpoint.ownerId, endpoint.url, endpoint.description, endpoint.eventTypes,
      endpoint.secretSealed ?? null, endpoint.secret ?? null, now],
  );
  return rows[0]!;
}

/**
 * Serializes the creations of one owner's endpoints until the commit, so the count that enforces the cap
 * cannot be read by two creations at once (a transaction-scoped advisory lock: no row of another module is touched).
 */
export async function lockEndpointsOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number): Promise<void> {
  await tx.query(
    `select pg_advisory_xact_lock(hashtextextended('webhook_endpoints' || chr(10) || $1::text || chr(10) || $2::bigint::text, 0))`,
    [ownerKind, ownerId],
  );
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

/** The owner's endpoint, locked until the commit (a rotation reads the current secret to keep it as the previous one). */
export async function lockEndpointOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await tx.query<EndpointRow>(
    `select ${ENDPOINT_COLUMNS} from webhook_endpoints
      where id = $3::text and owner_kind = $1::text and owner_id = $2::bigint and deleted_at is null
      for update`,
    [ownerKind, ownerId, id],
  );
  return rows[0];
}

export interface SealedSecrets {
  id: string;
  secretSealed: string;
  /** Null: no previous secret signs any more. */
  previousSealed: string | null;
  previousExpiresAt: Date | null;
}

/** Writes sealed secrets and clears the plain columns (a rotation, or the sealing job). */
export async function storeSealedSecrets(tx: Queryable, sealed: SealedSecrets[], now: Date): Promise<EndpointRow[]> {
  const { rows } = await tx.query<EndpointRow>(
    `update webhook_endpoints w set secret_sealed = s.secret_sealed, secret = null,
        previous_secret_sealed = s.previous_sealed, previous_secret = null, previous_secret_expires_at = s.previous_expires_at,
        updated_at = $5::timestamptz
       from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) as s(id, secret_sealed, previous_sealed, previous_expires_at)
      where w.id = s.id
     returning ${ENDPOINT_COLUMNS_OF_W}`,
    [sealed.map((s) => s.id), sealed.map((s) => s.secretSealed), sealed.map((s) => s.previousSealed),
      sealed.map((s) => s.previousExpiresAt?.toISOString() ?? null), now],
  );
  return rows;
}

/** Up to `limit` endpoints that still hold a plain secret, locked (SKIP LOCKED: sealing jobs of several processes share the work). */
export async function lockEndpointsWithPlainSecrets(tx: Queryable, limit: number): Promise<EndpointRow[]> {
  const { rows } = await tx.query<EndpointRow>(
    `select ${ENDPOINT_COLUMNS} from webhook_endpoints
      where secret is not null or previous_secret is not null
      order by id limit $1::integer
      for update skip locked`,
    [limit],
  );
  return rows;
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
 * Counts one redelivery of the event in its window (`windowMs` from the window's first redelivery), unless
 * `limit` were already made in it: the guarded upsert returns no row then. Its row lock serializes
 * concurrent redeliveries of one event until the commit.
 */
export async function countRedelivery(tx: Queryable, eventId: string, now: Date, windowMs: number, limit: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `insert into webhook_redelivery_windows as w (event_id, window_started_at, redeliveries)
     values ($1::text, $2::timestamptz, 1)
     on conflict (event_id) do update set
       window_started_at = case when w.window_started_at <= $2::timestamptz - $3::bigint * interval '1 millisecond'
         then excluded.window_started_at else w.window_started_at end,
       redeliveries = case when w.window_started_at <= $2::timestamptz - $3::bigint * interval '1 millisecond'
         then 1 else w.redeliveries + 1 end
     where w.window_started_at <= $2::timestamptz - $3::bigint * interval '1 millisecond' or w.redeliveries < $4::integer`,
    [eventId, now, windowMs, limit],
  );
  return rowCount > 0;
}

export async function findRedeliveryWindowStart(tx: Queryable, eventId: string): Promise<Date | undefined> {
  const { rows } = await tx.query<{ window_started_at: Date }>(
    'select window_started_at from webhook_redelivery_windows where event_id = $1::text',
    [eventId],
  );
  return rows[0]?.window_started_at;
}

/**
 * Locks the event's deliveries in id order before a redelivery changes them: every path that locks several
 * delivery rows takes them in one order (the dispatcher writes its results sorted by id), so two of them
 * wait for each other instead of deadlocking.
 */
export async function lockDeliveriesOfEvent(tx: Queryable, eventId: string): Promise<void> {
  await tx.query('select id from webhook_deliveries where event_id = $1::text order by id for update', [eventId]);
}

/**
 * Redelivery (docs/api-reference.md#events-api): a new round for every enabled endpoint of the owner that takes the event's type,
 * creating the delivery if the endpoint had none. A delivery being sent right now (its lease still runs)
 * is left alone: re-arming it would let another dispatcher send it a second time at once, and the lease
 * holder's completion would then not match. Returns the endpoint ids of the deliveries scheduled.
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
       where webhook_deliveries.locked_until is null or webhook_deliveries.locked_until < excluded.updated_at
     returning endpoint_id`,
    [event.id, event.ownerKind, event.ownerId, event.type, now],
  );
  return rows.map((row) => row.endpoint_id).sort();
}

/**
 * The newest events (up to `limit`) with a failed delivery to an enabled endpoint of the owner: what "redeliver
 * every failed event" re-arms. Newest by the failed delivery's last change; one statement, whatever the count.
 */
export async function findFailedEventIdsOfOwner(tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, limit: number): Promise<string[]> {
  const { rows } = await tx.query<{ event_id: string }>(
    `select d.event_id from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
      where w.owner_kind = $1::text and w.owner_id = $2::bigint and w.status = 'enabled' and w.deleted_at is null
        and d.status = 'failed'
      group by d.event_id
      order by max(d.updated_at) desc, d.event_id
      limit $3::integer`,
    [ownerKind, ownerId, limit],
  );
  return rows.map((row) => row.event_id);
}

/**
 * \`countRedelivery\` for several events in one statement (event ids in one sorted order, so two of them lock the
 * window rows alike): returns the events whose window still had room, each now counted once.
 */
export async function countRedeliveries(tx: Queryable, eventIds: readonly string[], now: Date, windowMs: number, limit: number): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const { rows } = await tx.query<{ event_id: string }>(
    `insert into webhook_redelivery_windows as w (event_id, window_started_at, redeliveries)
     select e.id, $2::timestamptz, 1 from unnest($1::text[]) as e(id) order by e.id
     on conflict (event_id) do update set
       window_started_at = case when w.window_started_at <= $2::timestamptz - $3::bigint * interval '1 millisecond'
         then excluded.window_started_at else w.window_started_at end,
       redeliveries = case when w.window_started_at <= $2::timestamptz - $3::bigint * interval '1 millisecond'
         then 1 else w.redeliveries + 1 end
     where w.window_started_at <= $2::timestamptz - $3::bigint * interval '1 millisecond' or w.redeliveries < $4::integer
     returning event_id`,
    [[...eventIds].sort(), now, windowMs, limit],
  );
  return rows.map((row) => row.event_id).sort();
}

/** \`lockDeliveriesOfEvent\` for several events: every delivery row of them, in id order. */
export async function lockDeliveriesOfEvents(tx: Queryable, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await tx.query('select id from webhook_deliveries where event_id = any($1::text[]) order by id for update', [eventIds]);
}

/**
 * Re-arms the failed deliveries of these events to the owner's enabled endpoints that still take the event's
 * type (a new round, due now), in one statement; deliveries that succeeded are not sent again. Returns the
 * (event, endpoint) pairs re-armed.
 */
export async function rearmFailedDeliveries(
  tx: Queryable, ownerKind: EventOwnerKind, ownerId: number, events: ReadonlyArray<{ id: string; type: string }>, now: Date,
): Promise<Array<{ event_id: string; endpoint_id: string }>> {
  if (events.length === 0) return [];
  const { rows } = await tx.query<{ event_id: string; endpoint_id: string }>(
    `update webhook_deliveries d
        set status = 'pending', attempts = 0, next_attempt_at = $5::timestamptz, locked_by = null, locked_until = null,
            updated_at = $5::timestamptz
       from unnest($3::text[], $4::text[]) as e(id, type), webhook_endpoints w
      where d.event_id = e.id and d.status = 'failed' and w.id = d.endpoint_id
        and w.owner_kind = $1::text and w.owner_id = $2::bigint and w.status = 'enabled' and w.deleted_at is null
        and (w.event_types @> array['*']::text[] or w.event_types @> array[e.type])
     returning d.event_id, d.endpoint_id`,
    [ownerKind, ownerId, events.map((event) => event.id), events.map((event) => event.type), now],
  );
  return rows;
}

/** Where an event's delivery to each endpoint stands: its status, the next attempt of a pending one, the last answer. */
export interface DeliveryStateRow {
  endpoint_id: string;
  status: DeliveryStatus;
  next_attempt_at: Date;
  attempts_total: number;
  last_status_code: number | null;
  last_error: string | null;
}

export async function findDeliveriesOfEvent(tx: Queryable, eventId: string): Promise<DeliveryStateRow[]> {
  const { rows } = await tx.query<DeliveryStateRow>(
    `select endpoint_id, status, next_attempt_at, attempts_total, last_status_code, last_error from webhook_deliveries
      where event_id = $1::text order by id`,
    [eventId],
  );
  return rows;
}

/** The dispatcher's fair share of sending slots: owners at their limit, and how many sends each owner has in flight. */
export interface OwnerSlots {
  /** Sends in flight per owner (`<owner_kind>:<owner_id>`), in this worker. */
  inFlight: Map<string, number>;
  /** Most sends in flight for one owner, in this worker. */
  perOwner: number;
}

/**
 * Claims up to `limit` due deliveries for `workerId` until `leaseUntil`: pending, due, and not leased (or
 * leased by a worker that died: its lease has run out, so no separate sweeper is needed). SKIP LOCKED
 * lets concurrent dispatchers take disjoint batches; the attempt counters move at claim time, so a send
 * that kills its worker still counts. Slots are shared per owner (the merchant or partner): an owner at
 * its limit is skipped, and within the batch no owner gets more than the slots it has left, so one owner's
 * slow endpoints — however many — cannot take every sending slot and hold up another owner's webhooks.
 */
export async function claimDueDeliveries(
  tx: Queryable, workerId: string, now: Date, leaseUntil: Date, limit: number,
  slots: OwnerSlots = { inFlight: new Map(), perOwner: limit },
): Promise<ClaimedDelivery[]> {
  const busy = [...slots.inFlight].filter(([, count]) => count >= slots.perOwner).map(([owner]) => owner);
  const { rows } = await tx.query<ClaimedDelivery>(
    `with due as (
       select d.id, d.next_attempt_at, w.owner_kind || ':' || w.owner_id::text as owner
         from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
        where d.status = 'pending' and d.next_attempt_at <= $2::timestamptz
          and (d.locked_until is null or d.locked_until < $2::timestamptz)
          and w.owner_kind || ':' || w.owner_id::text <> all($5::text[])
        order by d.next_attempt_at, d.id
        limit $4::integer
        for update of d skip locked
     ), fair as (
       select ranked.id, ranked.owner
         from (select due.*, row_number() over (partition by due.owner order by due.next_attempt_at, due.id) as n from due) ranked
         left join unnest($6::text[], $7::integer[]) as f(owner, in_flight) on f.owner = ranked.owner
        where ranked.n + coalesce(f.in_flight, 0) <= $8::integer
     )
     update webhook_deliveries d
        set locked_by = $1::text, locked_until = $3::timestamptz, attempts = d.attempts + 1,
            attempts_total = d.attempts_total + 1, updated_at = $2::timestamptz
       from fair where d.id = fair.id
     returning d.id, d.event_id, d.endpoint_id, fair.owner, d.attempts, d.attempts_total, d.next_attempt_at`,
    [workerId, now, leaseUntil, limit, busy, [...slots.inFlight.keys()], [...slots.inFlight.values()], slots.perOwner],
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
  tx: Queryable, workerId: string, unordered: DeliveryResult[], scheduleMs: number[], now: Date,
): Promise<Array<{ id: number; status: DeliveryStatus }>> {
  // In id order, the order a redelivery locks them in (lockDeliveriesOfEvent).
  const results = [...unordered].sort((a, b) => a.deliveryId - b.deliveryId);
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
