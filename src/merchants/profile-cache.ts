// What a QR payload and the pay page print of a merchant (name, city, MCC), cached per process for a
// minute: none of them can change through the API, so a QR create costs one statement instead of two.
// One cache per app, made by the composition root (src/composition.ts) and handed over in the AppContext.
import type { Queryable } from '../db/database.ts';
import { getMerchant } from './service.ts';

export interface MerchantProfile {
  name: string;
  city: string;
  mcc: string;
}

const TTL_MS = 60_000;
/** Past this many merchants the cache starts afresh (a profile then costs one read again). */
const MAX_ENTRIES = 10_000;

export class MerchantProfileCache {
  private readonly entries = new Map<number, { profile: MerchantProfile; expiresAtMs: number }>();

  /** The profile of `businessCode`, read through `db` (the caller's transaction or the database) on a miss; 404 when unknown. */
  async get(db: Queryable, businessCode: number): Promise<MerchantProfile> {
    const cached = this.entries.get(businessCode);
    if (cached && cached.expiresAtMs > performance.now()) return cached.profile;
    const { name, city, mcc } = await getMerchant(db, businessCode);
    const profile = { name, city, mcc };
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(businessCode, { profile, expiresAtMs: performance.now() + TTL_MS });
    return profile;
  }
}
