// What every capability is given, made once by the composition root (src/composition.ts): the validated
// config, the database, the clock, and the app's registries and caches. Nothing reads process.env or the
// system time around it, and no module keeps state of its own at module level.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import type { Database, LaggingReads } from './db/database.ts';
import type { SecretBox } from './kernel/secret-box.ts';
import type { MerchantDisplayCache } from './merchants/display-cache.ts';
import type { PaymentPurposes } from './qr/purposes.ts';
import type { Rail } from './rails/rail.ts';
import type { Clock } from './time.ts';

/** What the composition root starts from: the rest of the context is made from these. */
export interface BaseContext {
  config: Config;
  db: Database;
  clock: Clock;
  /** The read replica of DATABASE_REPLICA_URL (db/replica.ts); the primary when there is none. */
  replica?: LaggingReads;
}

export interface AppContext extends BaseContext {
  /**
   * Where reads that may lag go — lists, movements, statements, the journal export: the replica, or `db`.
   * Never a read that must see the caller's own writes (a QR's status, idempotency, balances, money).
   */
  replica: LaggingReads;
  /** Handlers of the internal QR purposes (qr/purposes.ts). */
  purposes: PaymentPurposes;
  /** Merchant name, city and MCC for QR payloads and pages. */
  merchantDisplays: MerchantDisplayCache;
  /** Seals and opens the secrets the service stores (ENCRYPTION_KEYS; kernel/secret-box.ts). */
  secrets: SecretBox;
  /**
   * The rail RAIL names, built once by the composition root (docs/rails.md). Never the sandbox's in
   * MODE=live: config.ts refuses that pair, so a live service always has a bank's rail.
   */
  rail: Rail;
}

/** The sandbox's helpers (pretend payments, advance) exist only in MODE=sandbox on the sandbox rail. */
export function sandboxHelpersOf(context: Pick<AppContext, 'config' | 'rail'>) {
  const { rail, config } = context;
  if (config.mode !== 'sandbox' || !rail.sandboxPayer || rail.payOut.kind !== 'instant' || !rail.refunds) return null;
  return { payer: rail.sandboxPayer, payOut: rail.payOut, refunds: rail.refunds };
}

/** A capability's routes: a typed plugin registered by the composition root (src/http/app.ts). */
export type CapabilityRoutes<Options extends object = AppContext> = FastifyPluginAsyncTypebox<Options>;
