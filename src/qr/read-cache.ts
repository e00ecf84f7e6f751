// A short-lived in-process cache of QR reads for cheap POS polling (a GET every 2–3 s per till). It only
// holds recorded state: the effective status (expiry) is still computed at each request's time. Entries
// are dropped by this process right after its own commits, and by every process when the QR_CHANGED
// NOTIFY arrives; a listener reconnect clears everything; an entry lives at most TTL_MS, which bounds the
// staleness if a notification were ever lost. A read that overlapped any invalidation is not stored, so a
// slow read cannot put an older state back after a newer one was announced.
import type { QrWithLastPayment } from './store.ts';

export const TTL_MS = 2_000;
/**
 * Entries live between 3/4 of TTL_MS and TTL_MS: QRs first read together (a shop opening, a batch of
 * tills) would otherwise all be re-read from the database in the same instant every TTL_MS.
 */
const TTL_SPREAD_MS = TTL_MS / 4;
const MAX_ENTRIES = 50_000;
/**
 * Entries stored between two sweeps of the expired ones. An entry lives 2 s but stays in the map until
 * something removes it; a QR nobody reads again (most QRs, once paid) would otherwise sit there, ~5 KB
 * with its image, until MAX_ENTRIES (measured: +1 MiB of heap a minute in a soak of mixed traffic).
 */
const SWEEP_EVERY_STORES = 1_000;

type Found = QrWithLastPayment | undefined;

export class QrReadCache {
  private readonly entries = new Map<string, { found: QrWithLastPayment; expiresAtMs: number }>();
  /** Reads in flight: requests that miss together share one database read. */
  private readonly loading = new Map<string, Promise<Found>>();
  private invalidations = 0;
  private storesSinceSweep = 0;

  /** The cached state of `qrId` if it is fresh enough, without waiting: a POS poll is usually answered here. */
  peek(qrId: string): QrWithLastPayment | undefined {
    const hit = this.entries.get(qrId);
    if (!hit) return undefined;
    if (performance.now() < hit.expiresAtMs) return hit.found;
    this.entries.delete(qrId);
    return undefined;
  }

  /** Entries held, expired or not (tests). */
  get size(): number {
    return this.entries.size;
  }

  read(qrId: string, load: () => Promise<Found>): Promise<Found> {
    const hit = this.peek(qrId);
    if (hit) return Promise.resolve(hit);
    const inFlight = this.loading.get(qrId);
    if (inFlight) return inFlight;
    const pending = this.load(qrId, load).finally(() => {
      if (this.loading.get(qrId) === pending) this.loading.delete(qrId);
    });
    this.loading.set(qrId, pending);
    return pending;
  }

  /** Drops `qrId`, and its read in flight: a request that arrives after a change must not join a read begun before it. */
  invalidate(qrId: string): void {
    this.invalidations++;
    this.entries.delete(qrId);
    this.loading.delete(qrId);
  }

  clear(): void {
    this.invalidations++;
    this.entries.clear();
    this.loading.clear();
  }

  private sweepExpired(): void {
    this.storesSinceSweep = 0;
    const nowMs = performance.now();
    for (const [qrId, entry] of this.entries) if (entry.expiresAtMs <= nowMs) this.entries.delete(qrId);
  }

  private async load(qrId: string, load: () => Promise<Found>): Promise<Found> {
    const before = this.invalidations;
    const found = await load();
    if (found && this.invalidations === before) {
      if (++this.storesSinceSweep >= SWEEP_EVERY_STORES) this.sweepExpired();
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(qrId, { found, expiresAtMs: performance.now() + TTL_MS - Math.random() * TTL_SPREAD_MS });
    }
    return found;
  }
}
