// The composition root of the application's parts: the one place that knows every capability's
// registries and caches, builds every long-lived part (the QR render threads and read model, the transfer
// creation queue, the key cache), and wires them into the AppContext that startup.ts (the HTTP app and the
// workers), the CLI and the tests all use. Capabilities never import this file.
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext, BaseContext, Lifecycle } from './context.ts';
import { primaryReads } from './db/replica.ts';
import { KeyVerifier } from './http/auth.ts';
import { RateLimiter } from './http/rate-limit.ts';
import { createLogger, logBackgroundError } from './kernel/logging.ts';
import { SecretBox } from './kernel/secret-box.ts';
import { MerchantDisplayCache } from './merchants/display-cache.ts';
import { ACTIVATION_PURPOSE, completeByActivationPayment } from './onboarding/service.ts';
import { RenderPool } from './qr/png.ts';
import { PaymentPurposes, type PaymentPurposeHandler } from './qr/purposes.ts';
import { QrReadModel } from './qr/read-model.ts';
import { renderInline } from './qr/service.ts';
import type { Rail } from './rails/rail.ts';
import { banecoRail } from './rails/baneco/index.ts';
import { sandboxRail } from './rails/sandbox/index.ts';
import { transferCreationQueue } from './transfers/service.ts';

export interface ComposeOptions {
  /** Further QR purposes (tests add their own to exercise the purpose hook). */
  purposes?: Readonly<Record<string, PaymentPurposeHandler>>;
  /**
   * Where the parts report what fails off a request's path (a key's last use not written): the service's
   * logger. Without one, a logger at LOG_LEVEL is made at the first such failure (the CLI never has one).
   */
  log?: FastifyBaseLogger;
}

export function createAppContext(base: BaseContext, options: ComposeOptions = {}): AppContext {
  const { config, db, clock } = base;
  let log = options.log;
  const onBackgroundError = (error: unknown, what: string) => logBackgroundError(log ??= createLogger(config.logLevel), error, what);
  const renderThreads = new RenderThreads();
  const qrReads = new QrReadModel(base);
  const publicLimiter = config.publicRateLimit ? new RateLimiter(config.publicRateLimit, clock) : null;
  const keys = new KeyVerifier(db, clock, config.mode, publicLimiter, onBackgroundError);
  return {
    ...base,
    replica: base.replica ?? primaryReads(db),
    purposes: new PaymentPurposes({
      // The merchant an activation payment creates gets the configured default plan.
      [ACTIVATION_PURPOSE]: (tx, paid) => completeByActivationPayment(tx, config, paid),
      ...options.purposes,
    }),
    merchantDisplays: new MerchantDisplayCache(),
    secrets: new SecretBox(config.encryptionKeys),
    rail: railFor(base),
    renderQrImage: (payload) => renderThreads.render(payload),
    qrReads,
    transferCreations: transferCreationQueue(db),
    keys,
    publicLimiter,
    lifecycle: new PartsLifecycle(renderThreads, qrReads, keys),
  };
}

/**
 * Starts and stops what holds threads or LISTENs. Started by what serves requests (startService, the tests'
 * apps) and never by the CLI, which builds this same context: nothing it runs renders a QR image, holds a
 * poll or verifies a key, so it must not pay for render threads (spawned by RenderPool's constructor, hence
 * made here at start) nor hold LISTENs on the database it works on.
 */
class PartsLifecycle implements Lifecycle {
  private started = false;

  constructor(
    private readonly renderThreads: RenderThreads,
    private readonly qrReads: QrReadModel,
    private readonly keys: KeyVerifier,
  ) {}

  async start(): Promise<void> {
    if (this.started) return; // a second LISTEN of each would deliver every change twice, and leak on stop
    this.started = true;
    this.renderThreads.start();
    await this.qrReads.start();
    await this.keys.start();
  }

  async stop(drain: () => Promise<void> = async () => {}): Promise<void> {
    // The held long polls first (they answer at once), or the drain would wait out their ?wait.
    await this.qrReads.stop();
    try {
      await drain();
    } finally {
      // After the drain: a render in flight on a thread that is terminated would never be answered.
      await this.renderThreads.stop();
      await this.keys.stop();
      this.started = false;
    }
  }
}

/**
 * QR images rendered on a pool of worker threads (qr/png.ts), so rendering (~1.1 ms of CPU per image) runs
 * beside the event loop instead of inside it; inline while no pool runs (before start, after stop).
 */
class RenderThreads {
  private pool: RenderPool | null = null;

  render(payload: string): Promise<string> {
    return this.pool ? this.pool.render(payload) : renderInline(payload);
  }

  start(): void {
    this.pool ??= new RenderPool();
  }

  async stop(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.close();
  }
}

/**
 * The rail RAIL names. config.ts refuses MODE=live on the sandbox rail, so a live service always has a
 * bank's rail. A config typed by hand (tests, tools) does not pass through that check: the same refusal is
 * made here, so the pretend bank can never stand in for a bank in live mode.
 */
function railFor({ config, db, clock }: BaseContext): Rail {
  switch (config.rail.kind) {
    case 'sandbox':
      if (config.mode === 'live') throw new Error('RAIL=sandbox cannot run with MODE=live: set RAIL=baneco (src/config.ts refuses it)');
      return sandboxRail();
    case 'baneco':
      return banecoRail({ config: config.rail.baneco, serviceTimeZone: config.serviceTimeZone, db, clock });
  }
}
