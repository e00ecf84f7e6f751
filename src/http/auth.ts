// Who is calling: API keys (merchant keys, terminal keys and partner master keys) and the operator's bearer
// token. A key works only in the mode it was made in (`_test_` keys in sandbox, `_live_` in live).
// Verified keys are cached for at most 5 s per process, and every instance drops its cache when a key is
// revoked or a merchant changes (NOTIFY), so revocation and suspension take effect within 5 s everywhere.
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import type { Mode } from '../config.ts';
import type { Database } from '../db/database.ts';
import { clientNetworkOf } from '../ip.ts';
import { ApiError } from '../kernel/errors.ts';
import type { AuthRequirement, Principal } from '../kernel/principal.ts';
import { hashApiKey, keyModeOf } from '../merchants/keys.ts';
import * as merchants from '../merchants/service.ts';
import { rateLimited, takeOrRefuse, type RateLimiter } from './rate-limit.ts';
import type { TokenLockout } from './token-lockout.ts';
import type { Clock } from '../time.ts';

/**
 * How long a verified key (or a key found unknown) is believed without asking the database. Measured on
 * performance.now(), not the service clock the rate limits use: it bounds how stale this process may be
 * about a revocation in real time — a test's TestClock, standing still, would keep an entry forever, and
 * moving it by days would say nothing about staleness. A revocation clears it at once (NOTIFY); the 5 s
 * are the bound should a notification be lost.
 */
const CACHE_TTL_MS = 5_000;
const KEY_USE_WRITE_INTERVAL_MS = 60_000;
/** Unknown keys remembered (hash only) so a client repeating one costs no lookup; past this many, forgotten. */
const MAX_REMEMBERED_UNKNOWN_KEYS = 10_000;

export class KeyVerifier {
  private readonly cache = new Map<string, { principal: Principal; expiresAtMs: number }>();
  /** Hashes of keys that were looked up and not found, until when: a refusal then costs no database read. */
  private readonly unknown = new Map<string, number>();
  private readonly lastUseWrittenMs = new Map<number, number>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly mode: Mode,
    /**
     * Per client network (PUBLIC_RATE_LIMIT): a lookup that finds no key spends a token of the caller's
     * network, and a network without tokens gets no lookup. Keys that exist never spend one, so many
     * terminals behind one address are not throttled by it.
     */
    private readonly unknownKeyLimiter: RateLimiter | null,
    private readonly onBackgroundError: (error: unknown, context: string) => void,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(merchants.AUTH_CHANGED_CHANNEL, () => this.cache.clear(), () => this.cache.clear());
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = null;
    this.cache.clear();
  }

  /**
   * The principal of a key that exists and is not revoked, or the 401 (or 429) its request gets: at once
   * when the key was verified in the last 5 s (most requests, so they wait on no promise), else once the
   * database has answered. Only keys of this mode are ever cached, so the mode is checked on a miss alone.
   */
  verify(apiKey: string, clientAddress: string): Principal | ApiError | Promise<Principal | ApiError> {
    const keyHash = hashApiKey(apiKey);
    const cached = this.cache.get(keyHash);
    const nowMs = performance.now();
    if (cached && cached.expiresAtMs > nowMs) return this.used(cached.principal);
    // Only a well-formed key of this mode, not known to be unknown, is worth a database lookup.
    const mode = keyModeOf(apiKey);
    if (mode === null) return new ApiError('API_KEY_INVALID');
    if (mode !== this.mode) return wrongModeError(mode, this.mode);
    if ((this.unknown.get(keyHash) ?? 0) > nowMs) return new ApiError('API_KEY_INVALID');
    const clientNetwork = clientNetworkOf(clientAddress);
    const budget = this.unknownKeyLimiter?.peek(clientNetwork);
    if (budget && !budget.allowed) return rateLimited(budget);
    return this.lookUp(keyHash, clientNetwork);
  }

  private async lookUp(keyHash: string, clientNetwork: string): Promise<Principal | ApiError> {
    const owner = await merchants.findKeyOwner(this.db, keyHash);
    const principal = owner ? toPrincipal(owner) : null;
    if (!principal) {
      this.cache.delete(keyHash);
      this.unknownKeyLimiter?.take(clientNetwork);
      if (this.unknown.size >= MAX_REMEMBERED_UNKNOWN_KEYS) this.unknown.clear();
      this.unknown.set(keyHash, performance.now() + CACHE_TTL_MS);
      return new ApiError('API_KEY_INVALID');
    }
    this.unknown.delete(keyHash);
    this.cache.set(keyHash, { principal, expiresAtMs: performance.now() + CACHE_TTL_MS });
    return this.used(principal);
  }

  private used(principal: Principal): Principal {
    this.recordUse(principal.keyId, this.clock.now());
    return principal;
  }

  /**
   * Writes `last_used_at` at most once a minute per key, off the request's path. Measured on the service
   * clock, the same one the written time and the SQL guard use (the 5 s cache uses the monotonic clock).
   */
  private recordUse(keyId: number, now: Date): void {
    const last = this.lastUseWrittenMs.get(keyId);
    if (last !== undefined && now.getTime() - last < KEY_USE_WRITE_INTERVAL_MS) return;
    this.lastUseWrittenMs.set(keyId, now.getTime());
    merchants.recordKeyUse(this.db, keyId, now).catch((error) => this.onBackgroundError(error, 'record key use'));
  }
}

function toPrincipal(owner: merchants.KeyOwnerRow): Principal | null {
  if (owner.owner_kind === 'merchant' && owner.business_code !== null) {
    return {
      kind: 'merchant',
      keyId: owner.key_id,
      keyPrefix: owner.key_prefix,
      businessCode: owner.business_code,
      suspended: owner.merchant_status === 'suspended',
      achEnabled: owner.ach_enabled === true,
      terminal: owner.scope === 'terminal',
    };
  }
  if (owner.owner_kind === 'partner' && owner.partner_id !== null) {
    return { kind: 'partner', keyId: owner.key_id, keyPrefix: owner.key_prefix, partnerId: owner.partner_id };
  }
  return null;
}

/** A key of the other mode: refused, and told why (a sandbox key sent to live is the usual slip). */
function wrongModeError(keyMode: Mode, serviceMode: Mode): ApiError {
  const keyWord = keyMode === 'sandbox' ? 'a sandbox (_test_) key' : 'a live (_live_) key';
  const serviceWord = serviceMode === 'sandbox' ? 'sandbox mode: use a _test_ key' : 'live mode: use a _live_ key';
  return new ApiError('API_KEY_INVALID', { message: `This is ${keyWord}; this service runs in ${serviceWord}.` });
}

export interface AuthenticationDeps {
  verifier: KeyVerifier;
  /** Per key (RATE_LIMIT); null: off. */
  rateLimiter: RateLimiter | null;
  adminToken: string | null;
  /** METRICS_TOKEN; null: /metrics is open. */
  metricsToken: string | null;
  /** Wrong operator or metrics tokens lock a client network out (token-lockout.ts); always on. */
  tokenLockout: TokenLockout;
}

/**
 * The onRequest hook of a route that needs a caller: 401 → 429 → 403, before the body is read
 * (docs/api-reference.md#order-of-checks). Built once per route when the route is added, so a request
 * does not look its route's options up (Fastify builds that object anew on each access).
 */
export function authenticationHook(
  requirement: Exclude<AuthRequirement, 'none'>,
  route: FastifyContextConfig | undefined,
  { verifier, rateLimiter, adminToken, metricsToken, tokenLockout }: AuthenticationDeps,
) {
  if (requirement === 'admin') {
    const wrongToken = () => new ApiError('ADMIN_TOKEN_INVALID');
    return async (request: FastifyRequest) => {
      const refusal = adminToken ? tokenLockout.check(request, adminToken, wrongToken) : wrongToken();
      if (refusal) throw refusal;
    };
  }
  if (requirement === 'metrics') {
    // With METRICS_TOKEN set, only a scraper holding it reads the service's internals (the operator's 401).
    const wrongToken = () => new ApiError('ADMIN_TOKEN_INVALID', { message: 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.' });
    return async (request: FastifyRequest) => {
      const refusal = metricsToken ? tokenLockout.check(request, metricsToken, wrongToken) : undefined;
      if (refusal) throw refusal;
    };
  }
  const module = route?.module;
  const terminalAllowed = route?.terminal === true;
  /** The checks after the key is known (429 → 403); the refusal, or undefined once the caller is admitted. */
  const admit = (request: FastifyRequest, reply: FastifyReply, principal: Principal | ApiError): ApiError | undefined => {
    if (principal instanceof ApiError) return principal;
    if (rateLimiter) {
      const refusal = takeOrRefuse(rateLimiter, principal.keyPrefix, reply);
      if (refusal) return refusal;
    }
    if (principal.kind === 'merchant' && principal.terminal && !terminalAllowed) return new ApiError('KEY_SCOPE_INSUFFICIENT');
    if (requirement === 'merchant' && principal.kind !== 'merchant') return new ApiError('MERCHANT_KEY_REQUIRED');
    if (requirement === 'partner' && principal.kind !== 'partner') return new ApiError('MASTER_KEY_REQUIRED');
    if (principal.kind === 'merchant') {
      if (principal.suspended) return new ApiError('MERCHANT_SUSPENDED');
      if (module === 'ach' && !principal.achEnabled) return new ApiError('MODULE_NOT_ENABLED');
    }
    request.principal = principal;
    return undefined;
  };
  // Callback style rather than async: a key verified in the last few seconds is admitted without a promise.
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const header = request.headers['x-api-key'];
    if (typeof header !== 'string' || header === '') return done(new ApiError('API_KEY_MISSING'));
    const verified = verifier.verify(header, request.ip);
    if (verified instanceof Promise) verified.then((principal) => done(admit(request, reply, principal)), done);
    else done(admit(request, reply, verified));
  };
}
