// Long polling of QRs (docs/api-reference.md#read-a-qr `?wait=N`): one LISTEN per process on QR_CHANGED_CHANNEL (payload: the
// QR id) wakes the in-process waiters of that QR. The notification is sent after commit by whichever
// process recorded the change (and heard by that process at once), so a payment taken by another instance
// wakes the poll too. A notification only
// wakes; each waiter also re-reads at least every RECHECK_MS (the safety net for a lost notification or
// a reconnect of the listening connection).
import type { Database } from '../db/database.ts';
import type { Clock } from '../time.ts';
import { QrReadCache } from './read-cache.ts';
import { findQrById, findQrByPayToken, QR_CHANGED_CHANNEL } from './lookup.ts';
import { effectiveState, etagOf, ifNoneMatchHits } from './state.ts';
import type { QrWithLastPayment } from './store.ts';

/** Longest a waiter sleeps without re-reading its QR. */
export const RECHECK_MS = 2_000;
/** Pay tokens remembered with their QR id; past this many the map starts afresh (a token costs one read again). */
const MAX_REMEMBERED_TOKENS = 50_000;

export class QrWatcher {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Recorded QR state shared by the API and the pay pages; dropped before waiters wake, so they re-read fresh state. */
  readonly cache = new QrReadCache();
  /** Pay token → QR id: a token never changes its QR, so the public page and its long poll read through `cache` too. */
  private readonly qrIdsByToken = new Map<string, string>();
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;

  constructor(private readonly db: Database) {}

  async start(): Promise<void> {
    this.closed = false;
    this.unlisten = await this.db.listen(QR_CHANGED_CHANNEL, (qrId) => this.changed(qrId), () => {
      this.cache.clear();
      this.wakeAll();
    });
  }

  /** A QR by its id, through the shared cache: every poller of one QR costs one database read per cache lifetime. */
  readById(qrId: string): Promise<QrWithLastPayment | undefined> {
    return this.cache.read(qrId, () => findQrById(this.db, qrId));
  }

  /** A QR by its pay token (the public page), through the same cache once its id is known. */
  async readByPayToken(token: string): Promise<QrWithLastPayment | undefined> {
    const qrId = this.qrIdsByToken.get(token);
    if (qrId !== undefined) return this.readById(qrId);
    const found = await findQrByPayToken(this.db, token);
    if (found) {
      if (this.qrIdsByToken.size >= MAX_REMEMBERED_TOKENS) this.qrIdsByToken.clear();
      this.qrIdsByToken.set(token, found.qr.id);
    }
    return found;
  }

  /** Ends every wait (shutdown) and stops listening. */
  async stop(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    await this.unlisten?.();
    this.unlisten = null;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves when `qrId` is reported changed, after `ms`, or at shutdown, whichever comes first. */
  waitForChange(qrId: string, ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.waiters.get(qrId);
      if (!set) this.waiters.set(qrId, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        set!.delete(done);
        if (set!.size === 0 && this.waiters.get(qrId) === set) this.waiters.delete(qrId);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
    });
  }

  /** Number of waiting requests (tests and metrics). */
  get waiting(): number {
    let count = 0;
    for (const set of this.waiters.values()) count += set.size;
    return count;
  }

  /** A change of `qrId` committed (here or in another process): drop its cached state, then wake its waiters. */
  changed(qrId: string): void {
    this.cache.invalidate(qrId);
    this.wake(qrId);
  }

  private wake(qrId: string): void {
    for (const done of [...(this.waiters.get(qrId) ?? [])]) done();
  }

  private wakeAll(): void {
    for (const set of [...this.waiters.values()]) for (const done of [...set]) done();
  }
}

/** The ETag a reader sees of a QR at `now`: the API's, or the public page's (which must not change with what it does not show). */
export type QrTag = (found: QrWithLastPayment, now: Date) => string;

/** The API's tag: every payment, cancel and expiry changes it. */
export const apiTagOf: QrTag = (found, now) => etagOf(found.qr, now);

/**
 * The long poll of docs/api-reference.md#read-a-qr: while the QR is ACTIVE and its tag (`tagOf`) still matches `heldTag` (the caller's
 * If-None-Match, or the tag at arrival), wait for a change, its expiry or `waitSeconds`, re-reading with
 * `reread` after every wake-up. Returns the QR as last read (undefined if it vanished) and the time of that read.
 */
export async function holdWhileUnchanged(
  watcher: QrWatcher,
  clock: Clock,
  initial: QrWithLastPayment,
  heldTag: string,
  waitSeconds: number,
  reread: () => Promise<QrWithLastPayment | undefined>,
  tagOf: QrTag = apiTagOf,
): Promise<{ found: QrWithLastPayment; now: Date }> {
  const deadline = performance.now() + waitSeconds * 1000;
  let found = initial;
  let now = clock.now();
  while (effectiveState(found.qr, now).status === 'ACTIVE' && ifNoneMatchHits(heldTag, tagOf(found, now)) && !watcher.isClosed) {
    const remainingMs = deadline - performance.now();
    if (remainingMs <= 0) break;
    // Wake at expiry too (a few ms after it, so the re-read sees it passed).
    const untilExpiryMs = found.qr.expires_at ? found.qr.expires_at.getTime() - now.getTime() + 5 : Infinity;
    await watcher.waitForChange(found.qr.id, Math.min(remainingMs, RECHECK_MS, untilExpiryMs));
    const again = await reread();
    if (!again) break;
    found = again;
    now = clock.now();
  }
  return { found, now };
}
