// The webhooks module's API views: pure functions from rows to the JSON the API answers (docs/architecture.md#conventions).
import * as events from '../events/service.ts';
import type { AttemptRow, EndpointRow } from './store.ts';
import { toEventPayload } from '../events/views.ts';

/** An endpoint without its secret (every read). */
export function endpointView(endpoint: EndpointRow) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.event_types,
    description: endpoint.description,
    status: endpoint.status,
    created_at: endpoint.created_at.toISOString(),
    updated_at: endpoint.updated_at.toISOString(),
  };
}

/** An endpoint with its signing secret (the one time it is in clear): the answers of create and rotate-secret only. */
export function endpointWithSecret({ endpoint, secret }: { endpoint: EndpointRow; secret: string }) {
  return { ...endpointView(endpoint), secret };
}

/** An event with every delivery attempt made for it. */
export function eventWithAttemptsView({ event, attempts }: { event: events.EventRow; attempts: AttemptRow[] }) {
  return { ...toEventPayload(event), attempts: attempts.map((attempt) => ({ ...attempt, sent_at: attempt.sent_at.toISOString() })) };
}
