// The composition root of the application's parts: the one place that knows every capability's
// registries and caches, and wires them into the AppContext that startup.ts (the HTTP app and the
// workers), the CLI and the tests all use. Capabilities never import this file.
import type { AppContext, BaseContext } from './context.ts';
import { primaryReads } from './db/replica.ts';
import { SecretBox } from './kernel/secret-box.ts';
import { MerchantDisplayCache } from './merchants/display-cache.ts';
import { ACTIVATION_PURPOSE, completeByActivationPayment } from './onboarding/service.ts';
import { PaymentPurposes, type PaymentPurposeHandler } from './qr/purposes.ts';
import type { Rail } from './rails/rail.ts';
import { banecoRail } from './rails/baneco/index.ts';
import { sandboxRail } from './rails/sandbox/index.ts';

export interface ComposeOptions {
  /** Further QR purposes (tests add their own to exercise the purpose hook). */
  purposes?: Readonly<Record<string, PaymentPurposeHandler>>;
}

export function createAppContext(base: BaseContext, options: ComposeOptions = {}): AppContext {
  return {
    ...base,
    replica: base.replica ?? primaryReads(base.db),
    purposes: new PaymentPurposes({
      // The merchant an activation payment creates gets the configured default plan.
      [ACTIVATION_PURPOSE]: (tx, paid) => completeByActivationPayment(tx, base.config, paid),
      ...options.purposes,
    }),
    merchantDisplays: new MerchantDisplayCache(),
    secrets: new SecretBox(base.config.encryptionKeys),
    rail: railFor(base),
  };
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
