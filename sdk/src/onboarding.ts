// Partner onboarding (with a partner master key): single-use registration links for new merchants.
import { idempotencyKey, unwrap, type Api, type CallOptions, type CreateOptions } from './transport.ts';
import type { OnboardingIntentCreate } from './types.ts';

export function onboarding(api: Api) {
  return {
    /** A hosted registration link (`url`) to hand to the new merchant. */
    createIntent: (body: OnboardingIntentCreate, options: CreateOptions = {}) =>
      unwrap(api.POST('/api/v2/onboarding/intent', {
        body, params: { header: { 'Idempotency-Key': idempotencyKey(options.idempotencyKey) } }, signal: options.signal,
      })),
    getIntent: (code: string, options: CallOptions = {}) =>
      unwrap(api.GET('/api/v2/onboarding/intent/{code}', { params: { path: { code } }, signal: options.signal })),
  };
}
