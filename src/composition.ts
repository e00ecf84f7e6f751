// The composition root of the application's parts: the one place that knows every capability's
// registries and caches, and wires them into the AppContext that main.ts, the CLI, the workers and the
// tests all use. Capabilities never import this file.
import type { AppContext, BaseContext } from './context.ts';
import { MerchantProfileCache } from './merchants/profile-cache.ts';
import { ACTIVATION_PURPOSE, completeByActivationPayment } from './onboarding/service.ts';
import { PaymentPurposes, type PaymentPurposeHandler } from './qr/purposes.ts';

export interface ComposeOptions {
  /** Further QR purposes (tests add their own to exercise the purpose hook). */
  purposes?: Readonly<Record<string, PaymentPurposeHandler>>;
}

export function createAppContext(base: BaseContext, options: ComposeOptions = {}): AppContext {
  return {
    ...base,
    purposes: new PaymentPurposes({ [ACTIVATION_PURPOSE]: completeByActivationPayment, ...options.purposes }),
    merchantProfiles: new MerchantProfileCache(),
  };
}
