// `qr_expiration` (docs/api-reference.md#create-a-qr): an absolute wall-clock time in SERVICE_TIMEZONE or a relative `+N unit`,
// in the future and at most 365 days ahead.
import type { FieldError } from '../kernel/errors.ts';
import { formatWallClock, parseWallClock } from '../time.ts';

export const MAX_EXPIRATION_MS = 365 * 86_400_000;

const RELATIVE = /^\+\s*(\d{1,7})\s*(m|min|mins|minute|minutes|h|hour|hours|d|day|days)$/i;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

export type ParsedExpiration =
  | { ok: true; expiresAt: Date; qrExpiration: string }
  | { ok: false; error: FieldError };

/** Reads `qr_expiration` at `now`; `qrExpiration` is the expiry as wall-clock text in `zone`. */
export function parseExpiration(text: string, now: Date, zone: string): ParsedExpiration {
  const field = 'qr_expiration';
  let expiresAt: Date | null;
  const relative = RELATIVE.exec(text.trim());
  if (relative) {
    const count = Number(relative[1]);
    const unitMs = UNIT_MS[relative[2]!.toLowerCase()[0]!]!;
    expiresAt = new Date(now.getTime() + count * unitMs);
  } else {
    expiresAt = parseWallClock(text, zone);
    if (!expiresAt) {
      return { ok: false, error: { field, code: 'invalid_format', message: 'must be `YYYY-MM-DD HH:mm:ss` (service time zone) or `+N` with a unit m, min, minute(s), h, hour(s), d, day(s), e.g. `+5m`' } };
    }
  }
  if (expiresAt.getTime() <= now.getTime()) {
    return { ok: false, error: { field, code: 'expiration_in_past', message: `must be in the future (now is ${formatWallClock(now, zone)} in ${zone})` } };
  }
  if (expiresAt.getTime() - now.getTime() > MAX_EXPIRATION_MS) {
    return { ok: false, error: { field, code: 'too_large', message: 'must be at most 365 days ahead' } };
  }
  return { ok: true, expiresAt, qrExpiration: formatWallClock(expiresAt, zone) };
}
