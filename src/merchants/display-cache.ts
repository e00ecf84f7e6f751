// What a QR payload and the pay page print of a merchant (name, city, MCC), cached per process for a
// minute: none of them can change through the API, so a QR create costs one statement instead of two.
// One cache per app, made by the composition root (src/composition.ts) and handed over in the AppContext.
import type { Queryable } from '../db/database.ts';
import { getMerchant } from './service.ts';

export interface MerchantDisplay {
  name: string;
  city: string;
  mcc: string;
}

const TTL_MS = 60_000;
/** Past this many merchants the cache starts afresh (a profile then costs one read again). */
const MAX_ENTRIES = 10_000;

export class MerchantDisplayCache {
  private readonly entries = new Map<number, { display: MerchantDisplay; expiresAtMs: number }>();

  /** What `businessCode` shows, read through `db` (the caller's transaction or the database) on a miss; 404 when unknown. */
  async get(db: Queryable, businessCode: number): Promise<MerchantDisplay> {
    const cached = this.entries.get(businessCode);
    if (cached && cached.expiresAtMs > performance.now()) return cached.display;
    const { name, city, mcc } = await getMerchant(db, businessCode);
    const display = { name, city, mcc };
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(businessCode, { display, expiresAtMs: performance.now() + TTL_MS });
    return display;
  }
}
