// The composition root of the application's parts: the one place that knows every capability's
// registries and caches, and wires them into the AppContext that startup.ts (the HTTP app and the
// workers), the CLI and the tests all use. Capabilities never import this file.
import type { AppContext, BaseContext } from './context.ts';
import { primaryReads } from './db/replica.ts';
import { SecretBox } from './kernel/secret-box.ts';
import { MerchantDisplayCache } from './merchants/display-cache.ts';
import { ACTIVATION_PURPOSE, completeByActivationPayment } from './onboarding/service.ts';
import { PaymentPurposes, type PaymentPurposeHandler } from './qr/purposes.ts';

export interface ComposeOptions {
  /** Further QR purposes (tests add their own to exercise the purpose hook). */
  purposes?: Readonly<Record<string, PaymentPurposeHandler>>;
}

export function createAppContext(base: BaseContext, options: ComposeOptions = {}): AppContext {
  return {
    ...base,
    replica: base.replica ?? primaryReads(base.db),
    purposes: new PaymentPurposes({ [ACTIVATION_PURPOSE]: completeByActivationPayment, ...options.purposes }),
    merchantDisplays: new MerchantDisplayCache(),
    secrets: new SecretBox(base.config.encryptionKeys),
  };
}
