// Guessing the operator's or the metrics token is a security matter, not a fairness one: every wrong
// bearer token spends one of a client network's few chances, and a network without chances left is
// refused (429) before its token is even compared — the right token included, so a guesser cannot tell
// when it found it. It is not the per-key or per-address rate limit: RATE_LIMIT=off and
// PUBLIC_RATE_LIMIT=off, which benchmarks set, leave it on.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { clientNetworkOf } from '../ip.ts';
import { ApiError } from '../kernel/errors.ts';
import type { Clock } from '../time.ts';
import { RateLimiter } from './rate-limit.ts';

/** Wrong tokens a client network may send before it is locked out. */
export const TOKEN_FAILURES_ALLOWED = 10;
/** How long a locked-out network waits until all its chances are back; one returns every 90 s. */
export const TOKEN_LOCKOUT_MS = 15 * 60_000;

export class TokenLockout {
  private readonly chances: RateLimiter;

  /** `clock`: the context's, as for the rate limits (a chance comes back when the service clock says so). */
  constructor(clock: Clock) {
    this.chances = new RateLimiter({
      ratePerSecond: TOKEN_FAILURES_ALLOWED / (TOKEN_LOCKOUT_MS / 1000),
      burst: TOKEN_FAILURES_ALLOWED,
    }, clock);
  }

  /**
   * Admits a request whose `Authorization: Bearer` must be `token`: nothing when it is, else the refusal —
   * `wrongToken` for a wrong one (spending a chance), or 429 with Retry-After while the network is locked out.
   */
  check(request: FastifyRequest, token: string, wrongToken: () => ApiError): ApiError | undefined {
    const network = clientNetworkOf(request.ip);
    const standing = this.chances.peek(network);
    if (!standing.allowed) {
      // Retry-After only: the RateLimit-* headers describe the caller's request budget, which this is not.
      return new ApiError('RATE_LIMITED', {
        message: 'Too many wrong tokens from this network: it is locked out for a while (see Retry-After).',
        headers: { 'Retry-After': String(standing.retryAfterSeconds) },
      });
    }
    if (isBearerAuthorization(request.headers.authorization, token)) return undefined;
    // Only a token sent is a guess: a scraper set up without one must not lock its network out.
    if (request.headers.authorization !== undefined) this.chances.take(network);
    return wrongToken();
  }
}

/** Constant-time comparison of `Authorization: Bearer …` with a configured token (ADMIN_TOKEN, METRICS_TOKEN). */
export function isBearerAuthorization(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/i.exec(header ?? ''); // auth schemes are case-insensitive (RFC 9110 §11.1)
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

