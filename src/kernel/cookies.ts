// Cookies of the hosted pages (the onboarding flow's secret, a payer's receipt key, the console's session):
// reading one from the Cookie header, and the Set-Cookie of one scoped to a path. Every cookie is HttpOnly,
// and Secure when PUBLIC_BASE_URL is https (the caller passes `secure`).

/** The value of one cookie of a Cookie header (RFC 6265 §5.4 pairs), or null. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const pair of header.split(';')) {
    const index = pair.indexOf('=');
    if (index < 0) continue;
    if (pair.slice(0, index).trim() === name) return pair.slice(index + 1).trim();
  }
  return null;
}

export interface CookieOptions {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
  /**
   * Lax (the default) is sent when a person follows a link from elsewhere — the onboarding flow and the pay
   * page are opened from a partner's site or a chat. Strict is never sent with a request another site
   * started, not even a link: the console's session, which no other site has any reason to use.
   */
  sameSite?: 'Lax' | 'Strict';
}

/** Set-Cookie of an HttpOnly cookie that only `path` (and below) receives, for `maxAgeSeconds` (0: delete it). */
export function scopedCookie(name: string, value: string, options: CookieOptions): string {
  return `${name}=${value}; Path=${options.path}; Max-Age=${Math.max(0, Math.ceil(options.maxAgeSeconds))}; HttpOnly; SameSite=${options.sameSite ?? 'Lax'}${options.secure ? '; Secure' : ''}`;
}
