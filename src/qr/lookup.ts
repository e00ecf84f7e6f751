// Finding one QR by what a caller holds — its id (the API, a rail's notice) or its pay token (the hosted
// page) — where a malformed one is simply not found, never a cast error from the database; and the channel
// that announces a QR's change. The service and the read side (watch.ts, read-model.ts) both use them. They
// are not in service.ts because the read side must not import the service: the AppContext holds the read
// model, and the service imports the AppContext, so that import would close a cycle (madge, .ci/run).
import type { Queryable } from '../db/database.ts';
import * as store from './store.ts';
import type { QrWithLastPayment } from './store.ts';

/**
 * Channel carrying the id of a QR that changed (payment, cancel, expiry sweep), sent after the commit: it
 * drops the QR from the read caches and wakes its long polls, in this process at once (db/notifier.ts).
 */
export const QR_CHANGED_CHANNEL = 'mps_qr_changed';

export async function findQrByPayToken(db: Queryable, payToken: string): Promise<QrWithLastPayment | undefined> {
  return /^[0-9A-Za-z]{22}$/.test(payToken) ? store.findQrByPayToken(db, payToken) : undefined;
}

export async function findQrById(db: Queryable, qrId: string): Promise<QrWithLastPayment | undefined> {
  return isUuid(qrId) ? store.findQrById(db, qrId) : undefined;
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}
