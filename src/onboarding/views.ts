// The onboarding module's API view (docs/architecture.md#conventions): an intent as the partner API answers
// it and its events carry.
import type { IntentView } from './schemas.ts';
import { effectiveStatus } from './state.ts';
import type { IntentRow } from './store.ts';

/** The intent as docs/api-reference.md#read-an-intent returns it (no url), which is also the data of every onboarding_intent.* event. */
export function toIntentView(intent: IntentRow, now: Date): IntentView {
  return {
    code: intent.code,
    status: effectiveStatus(intent, now),
    expires_at: intent.expires_at.toISOString(),
    created_at: intent.created_at.toISOString(),
    completed_at: intent.completed_at?.toISOString() ?? null,
    cancelled_at: intent.cancelled_at?.toISOString() ?? null,
    business_code: intent.business_code,
    metadata: intent.metadata,
    success_url: intent.success_url,
    cancel_url: intent.cancel_url,
  };
}
