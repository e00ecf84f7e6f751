// createClient: the whole API, one resource per capability, over one transport.
import { balance, banks, refunds, transfers } from './money.ts';
import { onboarding } from './onboarding.ts';
import { sandbox } from './sandbox.ts';
import { simpleQrs } from './simple-qrs.ts';
import { createTransport, type TransportOptions } from './transport.ts';
import { events, webhookEndpoints } from './webhooks.ts';

export type ClientOptions = TransportOptions;

export function createClient(options: ClientOptions) {
  const api = createTransport(options);
  return {
    simpleQrs: simpleQrs(api),
    transfers: transfers(api),
    refunds: refunds(api),
    balance: balance(api),
    banks: banks(api),
    webhookEndpoints: webhookEndpoints(api),
    events: events(api),
    onboarding: onboarding(api),
    sandbox: sandbox(api),
    /** The typed openapi-fetch client underneath, for what the resources do not cover (`api.GET('/api/v2/…')`). */
    api,
  };
}

export type MerchantPaymentsClient = ReturnType<typeof createClient>;
