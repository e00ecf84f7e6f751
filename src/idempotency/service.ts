// The idempotency mechanism of API.md §4.1, once, for every write that takes an Idempotency-Key.
// Shape after Formance's ledger (PATTERNS.md 7): in the caller's transaction, try the key's advisory lock
// (held → 409 at once, never wait), look the key up (same fingerprint → replay; another → 422), else do
// the work and store its outcome in the same transaction. The database decides, not process memory, so
// two processes receiving the same key at the same moment still execute it once.
import { createHash } from 'node:crypto';
import type { Database, Transaction } from '../db/database.ts';
import { ApiError, type ErrorCode } from '../http/errors.ts';
import * as store from './store.ts';
import type { IdempotencyScope } from './store.ts';

export type { IdempotencyScope } from './store.ts';

/** How long an outcome is kept; after that the key may be used again (API.md: at least 24 h). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Error outcomes that are stored and replayed like a success (API.md §4.1); any other error is not stored. */
const STORED_ERROR_CODES: ReadonlySet<ErrorCode> = new Set(['INSUFFICIENT_FUNDS']);

export interface Outcome {
  statusCode: number;
  body: unknown;
}

export interface IdempotentResult extends Outcome {
  /** True when this is the stored outcome of an earlier request (header `Idempotent-Replayed: true`). */
  replayed: boolean;
}

const SAVEPOINT = 'idempotent_work';

/**
 * Runs `work` at most once per (caller, route, key). `request` is the validated request in canonical
 * form (amounts in centavos); its fingerprint ignores key order.
 */
export async function runIdempotent(
  db: Database,
  scope: IdempotencyScope,
  request: unknown,
  now: Date,
  work: (tx: Transaction) => Promise<Outcome>,
): Promise<IdempotentResult> {
  const requestHash = fingerprint(request);
  return db.transaction(async (tx) => {
    if (!(await store.tryLockKey(tx, scope))) throw new ApiError('IDEMPOTENCY_KEY_IN_USE');
    const stored = await store.findOutcome(tx, scope);
    if (stored) {
      if (stored.request_hash !== requestHash) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
      return { statusCode: stored.status_code, body: stored.response_body, replayed: true };
    }
    // A storable refusal (INSUFFICIENT_FUNDS) is answered and remembered, but whatever the work wrote
    // before refusing is undone: the savepoint keeps the transaction usable for storing the outcome.
    await tx.query(`savepoint ${SAVEPOINT}`);
    let outcome: Outcome;
    try {
      outcome = await work(tx);
    } catch (error) {
      if (!(error instanceof ApiError) || !STORED_ERROR_CODES.has(error.code)) throw error;
      await tx.query(`rollback to savepoint ${SAVEPOINT}`);
      outcome = { statusCode: error.status, body: error.toBody() };
    }
    // The lock makes a conflict here impossible between live requests; should one ever slip through
    // (a hash collision of two keys' locks cannot cause it, only a second writer without the lock), the
    // whole transaction is undone and the caller is told to retry, which then replays the winner.
    if (!(await store.insertOutcome(tx, scope, { requestHash, statusCode: outcome.statusCode, body: outcome.body }, now))) {
      throw new ApiError('IDEMPOTENCY_KEY_IN_USE');
    }
    return { ...outcome, replayed: false };
  });
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

/** API.md: an Idempotency-Key is a UUID v4. */
export function isUuidV4(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(text);
}
