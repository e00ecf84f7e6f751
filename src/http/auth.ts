// Who is calling: API keys (merchant keys, terminal keys and partner master keys) and the operator's bearer
// token. A key works only in the mode it was made in (`_test_` keys in sandbox, `_live_` in live).
// Verified keys are cached for at most 5 s per process, and every instance drops its cache when a key is
// revoked or a merchant changes (NOTIFY), so revocation and suspension take effect within 5 s everywhere.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Mode } from '../config.ts';
import type { Database } from '../db/database.ts';
import { hashApiKey, keyShapeOf } from '../merchants/keys.ts';
import * as merchants from '../merchants/service.ts';
import { ApiError } from './errors.ts';
import type { Clock } from '../time.ts';

export type Principal =
  | {
    kind: 'merchant'; keyId: number; keyPrefix: string; businessCode: number; suspended: boolean; achEnabled: boolean;
    /** A terminal key (POS, kiosk): QRs and their payments only (docs/api-reference.md#terminal-keys). */
    terminal: boolean;
  }
  | { kind: 'partner'; keyId: number; keyPrefix: string; partnerId: number };

/** Who may call a route. */
export type AuthRequirement = 'none' | 'merchant' | 'partner' | 'merchant_or_partner' | 'admin';

/** The idempotency scope of a caller: the merchant of a key, or the partner of a master key. */
export function callerScope(principal: Principal): string {
  return principal.kind === 'merchant' ? `merchant:${principal.businessCode}` : `partner:${principal.partnerId}`;
}

const CACHE_TTL_MS = 5_000;
const KEY_USE_WRITE_INTERVAL_MS = 60_000;

export class KeyVerifier {
  private readonly cache = new Map<string, { principal: Principal; expiresAtMs: number }>();
  private readonly lastUseWrittenMs = new Map<number, number>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly mode: Mode,
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
   * The principal of a live key, or the 401 it gets: at once when the key was verified in the last 5 s (most
   * requests, so they wait on no promise), else once the database has answered. Only keys of this mode are
   * ever cached, so the mode is checked on a miss alone.
   */
  verify(apiKey: string, beforeLookup?: () => ApiError | undefined): Principal | ApiError | Promise<Principal | ApiError> {
    const keyHash = hashApiKey(apiKey);
    const cached = this.cache.get(keyHash);
    if (cached && cached.expiresAtMs > performance.now()) return this.used(cached.principal);
    // Only a well-formed key of this mode is worth a database lookup, and the caller may refuse it first
    // (the per-address limit on keys not verified lately).
    const shape = keyShapeOf(apiKey);
    if (!shape) return new ApiError('API_KEY_INVALID');
    if (shape.mode !== this.mode) return wrongModeError(shape.mode, this.mode);
    const refusal = beforeLookup?.();
    if (refusal) return refusal;
    return this.lookUp(keyHash);
  }

  private async lookUp(keyHash: string): Promise<Principal | ApiError> {
    const owner = await merchants.findKeyOwner(this.db, keyHash);
    const principal = owner ? toPrincipal(owner) : null;
    if (!principal) {
      this.cache.delete(keyHash);
      return new ApiError('API_KEY_INVALID');
    }
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

/** Constant-time comparison of `Authorization: Bearer …` with a configured token (ADMIN_TOKEN, METRICS_TOKEN). */
export function isBearerAuthorization(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/i.exec(header ?? ''); // auth schemes are case-insensitive (RFC 9110 §11.1)
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/** The business_code of the merchant calling a `auth: 'merchant'` route. */
export function merchantOf(principal: Principal | null): number {
  if (principal?.kind !== 'merchant') throw new Error('merchant route reached without a merchant principal');
  return principal.businessCode;
}

/** The partner id of the partner calling a `auth: 'partner'` route. */
export function partnerOf(principal: Principal | null): number {
  if (principal?.kind !== 'partner') throw new Error('partner route reached without a partner principal');
  return principal.partnerId;
}
