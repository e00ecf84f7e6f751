// SQL of stored idempotent outcomes.
import type { Queryable } from '../db/database.ts';

export interface StoredOutcomeRow {
  request_hash: string;
  status_code: number;
  response_body: unknown;
}

export interface IdempotencyScope {
  /** `merchant:1001` or `partner:7`: keys never collide between callers. */
  caller: string;
  /** `POST /api/v2/transfers`: the same key may be used on two routes. */
  route: string;
  key: string;
}

/** Takes the transaction-scoped advisory lock of a key without waiting; false when another transaction holds it. */
export async function tryLockKey(tx: Queryable, scope: IdempotencyScope): Promise<boolean> {
  const { rows } = await tx.query<{ locked: boolean }>(
    'select pg_try_advisory_xact_lock(hashtextextended($1::text, 0)) as locked',
    [`idempotency\n${scope.caller}\n${scope.route}\n${scope.key}`],
  );
  return rows[0]!.locked;
}

export async function findOutcome(tx: Queryable, scope: IdempotencyScope): Promise<StoredOutcomeRow | undefined> {
  const { rows } = await tx.query<StoredOutcomeRow>(
    `select request_hash, status_code, response_body from idempotency_keys
      where caller = $1::text and route = $2::text and idempotency_key = $3::uuid`,
    [scope.caller, scope.route, scope.key],
  );
  return rows[0];
}

/** Stores an outcome; false when a row for the key already exists. */
export async function insertOutcome(
  tx: Queryable,
  scope: IdempotencyScope,
  outcome: { requestHash: string; statusCode: number; body: unknown },
  now: Date,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `insert into idempotency_keys (caller, route, idempotency_key, request_hash, status_code, response_body, created_at)
     values ($1::text, $2::text, $3::uuid, $4::text, $5::integer, $6::jsonb, $7::timestamptz)
     on conflict on constraint idempotency_keys_pkey do nothing`,
    [scope.caller, scope.route, scope.key, outcome.requestHash, outcome.statusCode, JSON.stringify(outcome.body), now],
  );
  return rowCount === 1;
}

/** Deletes up to `limit` outcomes stored before `cutoff`; returns how many it deleted. */
export async function deleteOutcomesBefore(tx: Queryable, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await tx.query(
    `delete from idempotency_keys where ctid in (
       select ctid from idempotency_keys where created_at < $1::timestamptz limit $2::integer)`,
    [cutoff, limit],
  );
  return rowCount;
}
