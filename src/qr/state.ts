// The effective status of a QR (docs/api-reference.md#qr-statuses-and-expiry): the one rule every read,
// write, view and ETag uses, so an expiry is seen at once, before any sweep records it.
import type { CancelReason, QrRow, QrStatus } from './store.ts';


export interface EffectiveState {
  status: QrStatus;
  canceledAt: Date | null;
  cancelReason: CancelReason | null;
  updatedAt: Date;
}

/**
 * The state a QR has at `now`: an ACTIVE QR whose expires_at has come reads CANCELED ("expired") with
 * canceled_at = updated_at = expires_at, exactly what the sweeper later records, so the sweep changes
 * neither the body nor the ETag. A QR is payable while now < expires_at.
 */
export function effectiveState(qr: QrRow, now: Date): EffectiveState {
  if (qr.status === 'ACTIVE' && qr.expires_at !== null && qr.expires_at.getTime() <= now.getTime()) {
    return { status: 'CANCELED', canceledAt: qr.expires_at, cancelReason: 'expired', updatedAt: qr.expires_at };
  }
  return { status: qr.status, canceledAt: qr.canceled_at, cancelReason: qr.cancel_reason, updatedAt: qr.updated_at };
}

/** A strong ETag of the effective state: it changes with every payment, cancel or expiry, and nothing else. */
export function etagOf(qr: QrRow, now: Date): string {
  const state = effectiveState(qr, now);
  // Tags are per URL, so no id is needed; leaving it out also keeps the QR id off the public pay-page status.
  return `"${state.status[0]}${qr.payments_count}-${state.updatedAt.getTime().toString(36)}"`;
}

/** True when an If-None-Match header names `etag` (or is `*`); weak comparison, as RFC 9110 asks for it. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true; // what a polling client sends: the tag it was given
  for (const tag of header.split(',')) {
    const trimmed = tag.trim();
    if (trimmed === '*' || trimmed.replace(/^W\//, '') === etag) return true;
  }
  return false;
}
