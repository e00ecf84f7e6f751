// The owner's events pages (docs/console.md#keys-webhooks-and-events): the business's events newest first with
// a type filter and "redeliver every failed event"; one event's facts, its data summarised, where its delivery
// to each endpoint stands, every attempt made, and its "Redeliver" button.
import { escapeHtml } from '../../kernel/html.ts';
import type { Page, PageRequest } from '../../kernel/pagination.ts';
import { EVENT_TYPES, type EventRow } from '../../events/service.ts';
import type { AttemptRow, DeliveryStateRow, EndpointRow } from '../../webhooks/service.ts';
import { csrfField, formAlert, type Framed, framedPage } from './layout.ts';
import { doneNotice, facts, filterForm, hrefWith, pager } from './lists.ts';

const frame = (framed: Framed, title: string, body: string) => framedPage(framed, '/console/events', title, body);

export interface EventsPage extends Framed {
  type: string;
  request: PageRequest;
  page: Page<EventRow>;
  notice: string | null;
  maxPerClick: number;
}

export function renderEventsPage(view: EventsPage): string {
  const { locale, csrf, type, request, page } = view;
  const rows = page.items.map((event) => `<li class="row" data-event="${escapeHtml(event.id)}">
    <div class="what"><p><a href="${escapeHtml(locale.href(`/console/events/${encodeURIComponent(event.id)}`))}" class="code">${escapeHtml(event.type)}</a></p>
    <p class="hint">${escapeHtml(locale.dateTime(event.created_at))} · <span class="code">${escapeHtml(event.id)}</span></p></div>
  </li>`);
  const body = `${doneNotice(view.notice)}<section class="card" aria-labelledby="events-heading">
  <h1 id="events-heading">${locale.html('console.events.title')}</h1>
  <p class="hint">${locale.html('console.events.text')}</p>
  ${filterForm(locale, '/console/events', [{
    name: 'type', label: locale.t('console.events.filter.type'), value: type,
    options: [{ value: '', label: locale.t('console.events.filter.all') }, ...EVENT_TYPES.map((value) => ({ value, label: value }))],
  }])}
  ${rows.length === 0 ? `<p id="no-events">${locale.html('console.events.none')}</p>` : `<ul class="rows" id="events">
  ${rows.join('\n  ')}
  </ul>`}
  ${pager(locale, '/console/events', { type }, request, page)}
</section>
<section class="card" aria-labelledby="redeliver-failed-heading">
  <h2 id="redeliver-failed-heading">${locale.html('console.events.failed.heading')}</h2>
  <p class="hint">${locale.html('console.events.failed.text', { max: view.maxPerClick })}</p>
  <form method="post" action="${escapeHtml(locale.href('/console/events/redeliver-failed'))}" id="redeliver-failed-form">
  ${csrfField(csrf)}
  <button type="submit" id="redeliver-failed-button">${locale.html('console.events.failed.submit')}</button>
  </form>
</section>`;
  return frame(view, locale.t('console.events.title'), body);
}

/** An event's data as facts: each field's value, an object or list as wrapped JSON (never wider than the phone). */
function dataFacts(data: Record<string, unknown>): string {
  return facts(Object.entries(data).map(([name, value]) => [name,
    value !== null && typeof value === 'object' ? { html: `<pre class="data">${escapeHtml(JSON.stringify(value, null, 2))}</pre>` } : String(value)] as const), 'event-data');
}

/** Attempts an event's page lists at most: the newest. */
export const ATTEMPTS_SHOWN = 50;

export interface EventPage extends Framed {
  event: EventRow;
  data: Record<string, unknown>;
  attempts: readonly AttemptRow[];
  deliveries: readonly DeliveryStateRow[];
  endpoints: ReadonlyMap<string, EndpointRow>;
  notice: string | null;
  alert?: string;
}

export function renderEventPage(view: EventPage): string {
  const { locale, csrf, event, attempts, deliveries, endpoints } = view;
  const where = (endpointId: string) => endpoints.get(endpointId)?.url ?? endpointId;
  const deliveryRows = deliveries.map((delivery) => {
    const state = delivery.status === 'pending'
      ? locale.t('console.events.delivery.pending', { when: locale.dateTime(delivery.next_attempt_at) })
      : locale.t(delivery.status === 'succeeded' ? 'console.events.delivery.succeeded' : 'console.events.delivery.failed');
    return `<li class="row" data-delivery="${escapeHtml(delivery.endpoint_id)}" data-state="${delivery.status}">
    <div class="what"><p class="code">${escapeHtml(where(delivery.endpoint_id))}</p>
    <p class="hint">${escapeHtml(state)} · ${locale.html('console.events.delivery.attempts', { count: delivery.attempts_total })}</p></div>
  </li>`;
  });
  // An event redelivered often to many endpoints can have hundreds of attempts: the page shows the newest
  // ATTEMPTS_SHOWN (the API's GET /api/v2/events/{id} has them all), so it stays a phone's page.
  const attemptRows = attempts.slice(-ATTEMPTS_SHOWN).map((attempt) => `<li class="row" data-attempt="${escapeHtml(`${attempt.endpoint_id}:${attempt.attempt}`)}">
    <div class="what"><p><strong>${attempt.status_code !== null ? locale.html('console.events.attempt.status', { status: attempt.status_code }) : escapeHtml(attempt.error ?? '')}</strong>
      ${attempt.status_code !== null && attempt.error ? ` · ${escapeHtml(attempt.error)}` : ''}</p>
    <p class="hint">${escapeHtml(locale.dateTime(attempt.sent_at))} · ${locale.html('console.events.attempt.number', { attempt: attempt.attempt, ms: attempt.duration_ms })}</p>
    <p class="hint code">${escapeHtml(where(attempt.endpoint_id))}</p></div>
  </li>`);
  const body = `${doneNotice(view.notice)}<section class="card" aria-labelledby="event-heading">
  <h1 id="event-heading" class="code">${escapeHtml(event.type)}</h1>
  ${facts([
    [locale.t('console.events.id'), event.id],
    [locale.t('console.events.created'), locale.dateTime(event.created_at)],
  ], 'event-facts')}
  <h2>${locale.html('console.events.data')}</h2>
  ${dataFacts(view.data)}
</section>
<section class="card" aria-labelledby="deliveries-heading">
  <h2 id="deliveries-heading">${locale.html('console.events.deliveries')}</h2>
  ${deliveryRows.length === 0 ? `<p>${locale.html('console.events.no_deliveries')}</p>` : `<ul class="rows" id="deliveries">\n  ${deliveryRows.join('\n  ')}\n  </ul>`}
  <h2 id="attempts-heading">${locale.html('console.events.attempts')}</h2>
  ${attempts.length > ATTEMPTS_SHOWN ? `<p class="hint" id="attempts-more">${locale.html('console.events.attempts_more', { shown: ATTEMPTS_SHOWN, total: attempts.length })}</p>` : ''}
  ${attemptRows.length === 0 ? `<p>${locale.html('console.events.no_attempts')}</p>` : `<ul class="rows" id="attempts">\n  ${attemptRows.join('\n  ')}\n  </ul>`}
</section>
<section class="card" aria-labelledby="redeliver-heading">
  <h2 id="redeliver-heading">${locale.html('console.events.redeliver.heading')}</h2>
  <p class="hint">${locale.html('console.events.redeliver.text')}</p>
  ${formAlert(view.alert)}
  <form method="post" action="${escapeHtml(locale.href(`/console/events/${encodeURIComponent(event.id)}/redeliver`))}" id="redeliver-form">
  ${csrfField(csrf)}
  <button type="submit" id="redeliver-button">${locale.html('console.events.redeliver.submit')}</button>
  </form>
  <a class="button-link secondary" id="events-back" href="${escapeHtml(hrefWith(locale, '/console/events', {}))}">${locale.html('console.events.back')}</a>
</section>`;
  return frame(view, event.type, body);
}
