// Who is calling, as routes and services see it once authentication admitted the request (src/http/auth.ts
// verifies keys and builds it).

export type Principal =
  | {
    kind: 'merchant'; keyId: number; keyPrefix: string; businessCode: number; suspended: boolean; achEnabled: boolean;
    /** A terminal key (POS, kiosk): QRs and their payments only (docs/api-reference.md#terminal-keys). */
    terminal: boolean;
  }
  | { kind: 'partner'; keyId: number; keyPrefix: string; partnerId: number };

/** Who may call a route. */
export type AuthRequirement = 'none' | 'merchant' | 'partner' | 'merchant_or_partner' | 'admin' | 'metrics';

/** The requirements met by a bearer token of the configuration (ADMIN_TOKEN, METRICS_TOKEN) rather than an API key. */
export const BEARER_TOKEN_REQUIREMENTS: ReadonlySet<AuthRequirement> = new Set(['admin', 'metrics']);

/** The idempotency scope of a caller: the merchant of a key, or the partner of a master key. */
export function callerScope(principal: Principal): string {
  return principal.kind === 'merchant' ? `merchant:${principal.businessCode}` : `partner:${principal.partnerId}`;
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
