// The events' API view (docs/architecture.md#conventions): what the events API lists and a webhook delivers.
import type { EventRow } from './store.ts';

/** The wire form of an event (docs/api-reference.md#events-api). */
export function toEventPayload(event: EventRow): { id: string; type: string; created_at: string; data: Record<string, unknown> } {
  return { id: event.id, type: event.type, created_at: event.created_at.toISOString(), data: event.data };
}
