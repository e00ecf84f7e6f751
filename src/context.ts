// What every capability is given, made once by the composition root (src/composition.ts): the validated
// config, the database, the clock, the app's registries and caches, and the long-lived parts that serve
// requests, with the one lifecycle that starts and stops them. Nothing reads process.env or the system time
// around it, and no module keeps state of its own at module level.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import type { Database, LaggingReads } from './db/database.ts';
import type { KeyVerifier } from './http/auth.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { SecretBox } from './kernel/secret-box.ts';
import type { MerchantDisplayCache } from './merchants/display-cache.ts';
import type { PaymentPurposes } from './qr/purposes.ts';
import type { QrReadModel } from './qr/read-model.ts';
import type { Rail } from './rails/rail.ts';
import type { Clock } from './time.ts';
import type { TransferCreationQueue } from './transfers/service.ts';

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
  /**
   * A QR's PNG data URI: rendered on a pool of worker threads (qr/png.ts) while the lifecycle runs, inline
   * otherwise (~1.1 ms of CPU each).
   */
  renderQrImage: (payload: string) => Promise<string>;
  /** The QR read side (qr/read-model.ts): one LISTEN and one read cache, shared by the API's polls and the pay pages. */
  qrReads: QrReadModel;
  /** Transfer creations written in batches (group commit, db/group-commit.ts): one queue per process. */
  transferCreations: TransferCreationQueue;
  /** Verified API keys, cached for 5 s and dropped on NOTIFY (http/auth.ts). */
  keys: KeyVerifier;
  /**
   * Per client network (PUBLIC_RATE_LIMIT; null: off). Keyless routes spend from it, and so does a key lookup
   * that finds no key: the route guards and `keys` share it.
   */
  publicLimiter: RateLimiter | null;
  /** Starts and stops the parts above that hold threads or LISTENs (composition.ts). */
  lifecycle: Lifecycle;
}

/**
 * The one start and stop of the context's long-lived parts, driven by what serves requests with it
 * (startService in src/startup.ts, and the tests' apps). A context that is never started holds no thread and
 * no LISTEN (the CLI's).
 */
export interface Lifecycle {
  /** Spawns the render threads and opens the LISTENs of the QR read model and the key cache; once. */
  start(): Promise<void>;
  /**
   * Stops them around `drain` — the HTTP server finishing the requests in flight (`() => app.close()`): held
   * long polls are answered before it, the render threads and the key cache stopped after it.
   */
  stop(drain?: () => Promise<void>): Promise<void>;
}

/** The sandbox's helpers (pretend payments, advance) exist only in MODE=sandbox on the sandbox rail. */
export function sandboxHelpersOf(context: Pick<AppContext, 'config' | 'rail'>) {
  const { rail, config } = context;
  if (config.mode !== 'sandbox' || !rail.sandboxPayer || rail.payOut.kind !== 'instant' || !rail.refunds) return null;
  return { payer: rail.sandboxPayer, payOut: rail.payOut, refunds: rail.refunds };
}

/** A capability's routes: a typed plugin registered by the composition root (src/http/app.ts). */
export type CapabilityRoutes<Options extends object = AppContext> = FastifyPluginAsyncTypebox<Options>;
