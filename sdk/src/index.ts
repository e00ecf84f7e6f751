// @merchant-payments/sdk — a typed client for the Merchant Payments Service (sdk/README.md).
export { createClient, type ClientOptions, type MerchantPaymentsClient } from './client.ts';
export { ApiError, QrNotPaidError, isApiError } from './errors.ts';
export { List, type Page } from './pages.ts';
export type { RetryOptions } from './retry.ts';
export type { WaitOptions } from './simple-qrs.ts';
export type { CallOptions, CreateOptions } from './transport.ts';
export type * from './types.ts';
export { verifyWebhook } from './webhooks.ts';
export type { components, paths } from './generated/openapi.ts';
