// The idempotency mechanism of docs/api-reference.md#idempotency, once, for every write that takes an Idempotency-Key.
// Shape after Formance's ledger (docs/architecture.md, habit 7): in one transaction, try the key's advisory lock (held →
// 409 at once, never wait) and look the key up (same fingerprint → replay; another → 422), else do the
// work and store its outcome in the same transaction. The database decides, not process memory, so
// two processes receiving the same key at the same moment still execute it once.
import { createHash } from 'node:crypto';
import type { Database, Queryable, Transaction } from '../db/database.ts';
import { ApiError, type ErrorCode } from '../kernel/errors.ts';
import * as store from './store.ts';
import type { IdempotencyScope } from './store.ts';

export type { IdempotencyScope } from './store.ts';

/** How long an outcome is kept; after that the key may be used again (docs/api-reference.md#idempotency: at least 24 h). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Error outcomes that are stored and replayed like a success (docs/api-reference.md#idempotency); any other error is not stored. */
const STORED_ERROR_CODES: ReadonlySet<ErrorCode> = new Set(['INSUFFICIENT_FUNDS']);

export interface Outcome {
  statusCode: number;
  body: unknown;
}

export interface IdempotentResult extends Outcome {
  /** True when this is the stored outcome of an earlier request (header `Idempotent-Replayed: true`). */
  replayed: boolean;
}

/** One idempotent request: its key, and the validated request in canonical form (what the fingerprint hashes). */
export interface IdempotentRequest {
  scope: IdempotencyScope;
  request: unknown;
  now: Date;
}

const SAVEPOINT = 'idempotent_work';

/**
 * Runs `work` at most once per (caller, route, key). `request` is the validated request in canonical
 * form (amounts in centavos); its fingerprint ignores key order. A storable refusal (INSUFFICIENT_FUNDS)
 * thrown by `work` is answered and remembered, but whatever the work wrote before refusing is undone.
 */
export async function runIdempotent(
  db: Database,
  scope: IdempotencyScope,
  request: unknown,
  now: Date,
  work: (tx: Transaction) => Promise<Outcome>,
): Promise<IdempotentResult> {
  const [result] = await runIdempotentEach(db, [{ scope, request, now }], async (tx) => {
    // The savepoint keeps the transaction usable for storing the refusal.
    await tx.query(`savepoint ${SAVEPOINT}`);
    try {
      return [await work(tx)];
    } catch (error) {
      if (!(error instanceof ApiError) || !STORED_ERROR_CODES.has(error.code)) throw error;
      await tx.query(`rollback to savepoint ${SAVEPOINT}`);
      return [refusalOutcome(error)];
    }
  });
  if (result instanceof ApiError) throw result;
  return result!;
}

interface Prefetch<R, Prefetched> {
  /**
   * A read the work needs whatever the claims say (its locks taken for every request, replays too), sent
   * right behind the claims without waiting for them: one round trip less per batch on PostgreSQL, whose
   * transactions pipeline their statements. Its locks come after the keys', in every batch alike.
   */
  prefetch: (tx: Transaction, requests: readonly R[]) => Promise<Prefetched>;
}

/**
 * `runIdempotent` for several requests in one transaction (requests written together, see
 * src/db/group-commit.ts). Each result, in request order, is the stored outcome replayed, the
 * fresh outcome, or the ApiError that request alone gets (its key in use, or reused with another
 * request). `work` receives only the requests whose keys it may execute and returns their outcomes in
 * the same order; a storable refusal among them (see `refusalOutcome`) must have written nothing. If
 * `work` throws, nothing of the batch is written and the error propagates.
 */
export async function runIdempotentEach<R extends IdempotentRequest, Prefetched = undefined>(
  db: Database,
  requests: readonly R[],
  work: (tx: Transaction, toExecute: R[], prefetched: Prefetched) => Promise<Outcome[]>,
  // Required exactly when `work` takes what it prefetches.
  ...[options]: undefined extends Prefetched ? [options?: Prefetch<R, Prefetched>] : [options: Prefetch<R, Prefetched>]
): Promise<Array<IdempotentResult | ApiError>> {
  const hashes = requests.map((r) => fingerprint(r.request));
  return db.transaction(async (tx) => {
    const [claims, prefetched] = await Promise.all([
      store.claimKeys(tx, requests.map((r) => r.scope)),
      options ? options.prefetch(tx, requests) : (undefined as Prefetched),
    ]);
    const results: Array<IdempotentResult | ApiError | undefined> = [];
    const toExecute: number[] = [];
    const seen = new Set<string>();
    claims.forEach((claim, i) => {
      const { scope } = requests[i]!;
      const key = scopeKey(scope);
      if (!claim.locked || seen.has(key)) {
        results[i] = new ApiError('IDEMPOTENCY_KEY_IN_USE');
      } else if (claim.request_hash !== null) {
        results[i] = claim.request_hash === hashes[i]
          ? { statusCode: claim.status_code!, body: claim.response_body, replayed: true }
          : new ApiError('IDEMPOTENCY_KEY_REUSED');
      } else {
        toExecute.push(i);
      }
      seen.add(key);
    });
    if (toExecute.length === 0) return results as Array<IdempotentResult | ApiError>;

    const outcomes = await work(tx, toExecute.map((i) => requests[i]!), prefetched);
    if (outcomes.length !== toExecute.length) throw new Error(`idempotent work returned ${outcomes.length} outcomes for ${toExecute.length} requests`);
    const stored = await store.insertOutcomes(tx, toExecute.map((i, n) => ({
      scope: requests[i]!.scope, requestHash: hashes[i]!, statusCode: outcomes[n]!.statusCode, body: outcomes[n]!.body, now: requests[i]!.now,
    })));
    // The locks make a conflict here impossible between live requests, except for an outcome committed
    // between claimKeys' read and its lock: the whole transaction is undone and the caller told to
    // retry, which then replays the winner.
    if (stored !== toExecute.length) throw new ApiError('IDEMPOTENCY_KEY_IN_USE');
    toExecute.forEach((i, n) => {
      results[i] = { ...outcomes[n]!, replayed: false };
    });
    return results as Array<IdempotentResult | ApiError>;
  });
}

/**
 * The outcome already stored for the key, read only (no lock, no transaction): for work that must happen
 * before the idempotent transaction — a call to a bank — and must not happen again for a stored key.
 * null when none is stored; 422 IDEMPOTENCY_KEY_REUSED when one is, for another request.
 */
export async function storedOutcome(db: Queryable, scope: IdempotencyScope, request: unknown): Promise<IdempotentResult | null> {
  const stored = await store.findOutcome(db, scope);
  if (!stored) return null;
  if (stored.request_hash !== fingerprint(request)) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
  return { statusCode: stored.status_code, body: stored.response_body, replayed: true };
}

/** One string per (caller, route, key): UUIDs compare case-insensitively, as the database compares them. */
export function scopeKey(scope: IdempotencyScope): string {
  return `${scope.caller}\n${scope.route}\n${scope.key.toLowerCase()}`;
}

/** The stored outcome of a refusal that is replayed like a success (docs/api-reference.md#idempotency: INSUFFICIENT_FUNDS). */
export function refusalOutcome(error: ApiError): Outcome {
  if (!STORED_ERROR_CODES.has(error.code)) throw new Error(`${error.code} is not a stored refusal`);
  return { statusCode: error.status, body: error.toBody() };
}

/** Removes outcomes older than the retention; returns how many it removed (at most `limit`). */
export async function purgeExpiredOutcomes(db: Database, now: Date, limit = 1000): Promise<number> {
  return db.transaction((tx) => store.deleteOutcomesBefore(tx, new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS), limit));
}

/** SHA-256 of the canonical JSON of `value` (object keys sorted at every depth). */
export function fingerprint(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** docs/api-reference.md#idempotency: an Idempotency-Key is a UUID v4. */
/** A UUID v4 in any case (what an Idempotency-Key must be); also the pattern /openapi.json shows. */
export const UUID_V4_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$';
const UUID_V4 = new RegExp(UUID_V4_PATTERN);

export function isUuidV4(text: string): boolean {
  return UUID_V4.test(text);
}
