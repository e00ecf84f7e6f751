// A short-lived in-process cache of QR reads for cheap POS polling (a GET every 2–3 s per till). It only
// holds recorded state: the effective status (expiry) is still computed at each request's time. Entries
// are dropped by this process right after its own commits, and by every process when the QR_CHANGED
// NOTIFY arrives; a listener reconnect clears everything; TTL_MS bounds the staleness if a notification
// were ever lost. A read that overlapped any invalidation is not stored, so a slow read cannot put an
// older state back after a newer one was announced.
import type { QrWithLastPayment } from './store.ts';

export const TTL_MS = 2_000;
const MAX_ENTRIES = 50_000;

export class QrReadCache {
  private readonly entries = new Map<string, { found: QrWithLastPayment; storedAtMs: number }>();
  private invalidations = 0;

  /** The cached state of `qrId` if it is fresh enough, without waiting: a POS poll is usually answered here. */
  peek(qrId: string): QrWithLastPayment | undefined {
    const hit = this.entries.get(qrId);
    return hit && performance.now() - hit.storedAtMs < TTL_MS ? hit.found : undefined;
  }

  async read(qrId: string, load: () => Promise<QrWithLastPayment | undefined>): Promise<QrWithLastPayment | undefined> {
    const hit = this.peek(qrId);
    if (hit) return hit;
    const before = this.invalidations;
    const found = await load();
    if (found && this.invalidations === before) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(qrId, { found, storedAtMs: performance.now() });
    }
    return found;
  }

  invalidate(qrId: string): void {
    this.invalidations++;
    this.entries.delete(qrId);
  }

  clear(): void {
    this.invalidations++;
    this.entries.clear();
  }
}
