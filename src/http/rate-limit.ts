// Token buckets in this process (docs/api-reference.md#rate-limits): one per API key, and one per client
// address for what comes without a known key (hosted pages, unknown keys). With N instances the effective
// limit is N times the configured one, which the docs say plainly rather than hide.
import type { FastifyReply } from 'fastify';
import type { RateLimitConfig } from '../config.ts';
import { ApiError } from '../kernel/errors.ts';
import type { Clock } from '../time.ts';

export interface RateLimitDecision {
  allowed: boolean;
  /** Bucket capacity (RateLimit-Limit). */
  limit: number;
  /** Whole tokens left after this request (RateLimit-Remaining). */
  remaining: number;
  /** Seconds until the bucket is full again (RateLimit-Reset). */
  resetSeconds: number;
  /** Whole seconds, at least 1, until one token is available (Retry-After on a 429). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAtMs: number;
}

/** Buckets idle long enough to be full again are dropped once the map holds this many. */
const PRUNE_THRESHOLD = 10_000;

/**
 * Token buckets keyed by a string, refilled by the context's clock: the service clock, not
 * performance.now(), so that a test's TestClock stands still unless the test moves it and a bucket is
 * refilled only when the test says time passed — never because a loaded machine was slow.
 *
 * The service clock is a wall clock, and that is enough here; the Clock offers no monotonic reading:
 * a step back (NTP) makes a negative elapsed time, clamped at 0 below, so the bucket is refilled by nothing
 * for that one decision and counts on from the new reading — nobody is locked out — and a step forward
 * refills it at most to its burst, once: one extra burst per key, or for the token lockout one network's
 * chances back early, a step that a caller cannot cause. A second, monotonic time source in the Clock would
 * be another thing for every clock (the tests' included) to keep in step with the first. Reading it makes
 * a Date per decision, about what a performance.now() costs: small beside the request it decides.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly config: RateLimitConfig,
    private readonly clock: Clock,
  ) {}

  /** Spends one token of `key` if there is one. */
  take(key: string): RateLimitDecision {
    return this.decide(key, true);
  }

  /** Whether `key` has a token now, without spending it (a cost charged only if it turns out to be one). */
  peek(key: string): RateLimitDecision {
    return this.decide(key, false);
  }

  private decide(key: string, spend: boolean): RateLimitDecision {
    const { ratePerSecond, burst } = this.config;
    const nowMs = this.clock.now().getTime();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= PRUNE_THRESHOLD) this.pruneFullBuckets(nowMs);
      bucket = { tokens: burst, updatedAtMs: nowMs };
      this.buckets.set(key, bucket);
    }
    // Clamped: a clock set back refills nothing (see the class comment).
    const elapsedSeconds = Math.max(0, nowMs - bucket.updatedAtMs) / 1000;
    bucket.tokens = Math.min(burst, bucket.tokens + elapsedSeconds * ratePerSecond);
    bucket.updatedAtMs = nowMs;
    const allowed = bucket.tokens >= 1;
    if (allowed && spend) bucket.tokens -= 1;
    return {
      allowed,
      limit: burst,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((burst - bucket.tokens) / ratePerSecond),
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond)),
    };
  }

  private pruneFullBuckets(nowMs: number): void {
    const { ratePerSecond, burst } = this.config;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((nowMs - bucket.updatedAtMs) / 1000) * ratePerSecond >= burst) this.buckets.delete(key);
    }
  }
}

/** The RateLimit-* headers of a decision (docs/api-reference.md#rate-limits). */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
  };
}

/** The 429 of a refused decision, with its RateLimit-* headers and Retry-After. */
export function rateLimited(decision: RateLimitDecision): ApiError {
  return new ApiError('RATE_LIMITED', { headers: { ...rateLimitHeaders(decision), 'Retry-After': String(decision.retryAfterSeconds) } });
}

/**
 * Takes a token of `key` from `limiter`, sets the RateLimit-* headers of the answer, and returns the 429
 * (with Retry-After) when the bucket is empty.
 */
export function takeOrRefuse(limiter: RateLimiter, key: string, reply: FastifyReply): ApiError | undefined {
  const decision = limiter.take(key);
  if (!decision.allowed) return rateLimited(decision);
  // Three calls rather than rateLimitHeaders(): no object per admitted request on the polling path.
  reply.header('RateLimit-Limit', decision.limit);
  reply.header('RateLimit-Remaining', decision.remaining);
  reply.header('RateLimit-Reset', decision.resetSeconds);
  return undefined;
}
