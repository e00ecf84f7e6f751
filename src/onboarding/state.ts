// The effective status of an onboarding intent: the one rule the API, the hosted flow and the sweeper use.
import type { IntentRow, IntentStatus } from './store.ts';

/** An open intent whose expires_at has come reads expired at once, before any sweep (docs/api-reference.md#read-an-intent). */
export function effectiveStatus(intent: IntentRow, now: Date): IntentStatus {
  if (intent.status === 'open' && intent.expires_at.getTime() <= now.getTime()) return 'expired';
  return intent.status;
}
