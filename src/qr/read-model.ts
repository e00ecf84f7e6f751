// The QR read side: what a POS terminal polling every 2–3 s and a kiosk's long poll read. One per process,
// made by the composition root: one watcher (one LISTEN, one read cache, shared with the hosted pay pages),
// and the API's answer of a cached read — its ETag and JSON — built once and kept until the QR's effective
// state can next change by itself (its expiry). The view is a pure function of the row and the effective
// state, and a new read is a new object, so a change is never missed.
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { notFound } from '../kernel/errors.ts';
import type { Clock } from '../time.ts';
import { etagOf, ifNoneMatchHits } from './state.ts';
import type { QrWithLastPayment } from './store.ts';
import { toQrView } from './views.ts';
import { holdWhileUnchanged, QrWatcher } from './watch.ts';

/** The API's answer to GET /api/v2/simple-qrs/:id. */
export interface QrReadAnswer {
  etag: string;
  /** The QR as JSON (sent as is, not serialized again). */
  json: string;
  /** If-None-Match named the current ETag: answer 304 without a body. */
  notModified: boolean;
}

interface CachedView {
  etag: string;
  json: string;
  validUntilMs: number;
}

export class QrReadModel {
  readonly watcher: QrWatcher;
  private readonly views = new WeakMap<QrWithLastPayment, CachedView>();

  // Not a Pick of the AppContext: the AppContext holds this model (composition.ts), and that import would be a cycle.
  constructor(private readonly context: { config: Config; db: Database; clock: Clock }) {
    this.watcher = new QrWatcher(context.db);
  }

  start(): Promise<void> {
    return this.watcher.start();
  }

  stop(): Promise<void> {
    return this.watcher.stop();
  }

  /**
   * GET /api/v2/simple-qrs/:id: the merchant's QR (404 for an unknown or another merchant's), held while
   * unchanged for up to `waitSeconds` when asked. A poll answered from the cache without a wait returns
   * at once, not a promise: the common POS request waits on nothing.
   */
  read(businessCode: number, pathId: string, request: { ifNoneMatch?: string; waitSeconds?: number }): QrReadAnswer | Promise<QrReadAnswer> {
    // Cached and notified under the id as stored (lower case); a path may spell the UUID in upper case.
    const qrId = pathId.toLowerCase();
    const cached = this.watcher.cache.peek(qrId);
    if (cached && request.waitSeconds === undefined) return this.answer(ownedBy(businessCode, cached), this.context.clock.now(), request.ifNoneMatch);
    return this.readAndHold(businessCode, qrId, cached, request);
  }

  private async readAndHold(
    businessCode: number, qrId: string, cached: QrWithLastPayment | undefined, request: { ifNoneMatch?: string; waitSeconds?: number },
  ): Promise<QrReadAnswer> {
    const reread = async () => ownedBy(businessCode, await this.watcher.readById(qrId));
    let found = cached ? ownedBy(businessCode, cached) : await reread();
    let now = this.context.clock.now();
    if (request.waitSeconds !== undefined) {
      const heldTag = request.ifNoneMatch ?? this.viewOf(found, now).etag;
      ({ found, now } = await holdWhileUnchanged(this.watcher, this.context.clock, found, heldTag, request.waitSeconds, reread));
    }
    return this.answer(found, now, request.ifNoneMatch);
  }

  private answer(found: QrWithLastPayment, now: Date, ifNoneMatch: string | undefined): QrReadAnswer {
    const { etag, json } = this.viewOf(found, now);
    return { etag, json, notModified: ifNoneMatchHits(ifNoneMatch, etag) };
  }

  private viewOf(found: QrWithLastPayment, now: Date): CachedView {
    let view = this.views.get(found);
    if (!view || now.getTime() >= view.validUntilMs) {
      const { status, expires_at: expiresAt } = found.qr;
      const validUntilMs = status === 'ACTIVE' && expiresAt !== null && expiresAt > now ? expiresAt.getTime() : Infinity;
      view = { etag: etagOf(found.qr, now), json: JSON.stringify(toQrView(this.context.config, found, now)), validUntilMs };
      this.views.set(found, view);
    }
    return view;
  }
}

/** `found` if it is a QR of this merchant; another merchant's QR is not found (404), never forbidden. */
function ownedBy(businessCode: number, found: QrWithLastPayment | undefined): QrWithLastPayment {
  if (!found || found.qr.business_code !== businessCode) throw notFound('QR');
  return found;
}
