// Cookies of the hosted pages (the onboarding flow's secret, a payer's receipt key): reading one from
// the Cookie header, and the Set-Cookie of one scoped to a single page's path.

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

/** Set-Cookie of an HttpOnly, SameSite=Lax cookie that only `path` (and below) receives, for `maxAgeSeconds`. */
export function scopedCookie(name: string, value: string, options: { path: string; maxAgeSeconds: number; secure: boolean }): string {
  return `${name}=${value}; Path=${options.path}; Max-Age=${Math.max(0, Math.ceil(options.maxAgeSeconds))}; HttpOnly; SameSite=Lax${options.secure ? '; Secure' : ''}`;
}
