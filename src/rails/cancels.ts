// Bank QRs waiting to be cancelled at the bank (migration 017's rail_qr_cancels): a merchant's cancel, an
// expiry, a QR issued for a request that lost its idempotency key. A request is written in the transaction
// that decided it, and the poll repeats the bank's cancel every interval until the bank answers at all.
import type { Queryable } from '../db/database.ts';
import type { RailName } from './names.ts';

/** Asks for the bank QR to be cancelled (once: a repeated request changes nothing). */
export async function requestRailCancel(tx: Queryable, rail: RailName, railReference: string, now: Date): Promise<void> {
  await tx.query(
    `insert into rail_qr_cancels (rail, rail_reference, requested_at, next_try_at) values ($1::text, $2::text, $3::timestamptz, $3::timestamptz)
     on conflict (rail, rail_reference) do nothing`,
    [rail, railReference, now],
  );
}

/**
 * Claims up to `limit` due cancels in one statement: each is leased until `now + retryMs` (SKIP LOCKED: two
 * workers never take the same one), so a call that never answers is tried again after the lease.
 */
export async function claimDueRailCancels(db: Queryable, rail: RailName, now: Date, retryMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ rail_reference: string }>(
    `update rail_qr_cancels set next_try_at = $2::timestamptz + make_interval(secs => $3::double precision / 1000)
      where (rail, rail_reference) in (
        select rail, rail_reference from rail_qr_cancels
         where rail = $1::text and next_try_at <= $2::timestamptz
         order by next_try_at limit $4::integer for update skip locked)
     returning rail_reference`,
    [rail, now, retryMs, limit],
  );
  return rows.map((row) => row.rail_reference);
}

/** The bank answered the cancel (done, or refused: nothing left to ask). */
export async function finishRailCancel(db: Queryable, rail: RailName, railReference: string): Promise<void> {
  await db.query('delete from rail_qr_cancels where rail = $1::text and rail_reference = $2::text', [rail, railReference]);
}

/** Whether a cancel of the QR is still waiting (tests and the poll's report). */
export async function isRailCancelPending(db: Queryable, rail: RailName, railReference: string): Promise<boolean> {
  const { rows } = await db.query('select 1 from rail_qr_cancels where rail = $1::text and rail_reference = $2::text', [rail, railReference]);
  return rows.length > 0;
}
