// The owner's events (docs/console.md#keys-webhooks-and-events; contract §13): the business's events newest
// first (a type filter, pages), one event with its data, its deliveries and every attempt, "Redeliver" (the
// API's redelivery, its per-event limit in force) and "Redeliver every failed event" (webhooks/service.ts
// redeliverFailed: the newest failed events, a bounded number per click). The owner is the session's
// merchant; another merchant's event is not found (404).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as events from '../../events/service.ts';
import { toEventPayload } from '../../events/views.ts';
import { ApiError } from '../../kernel/errors.ts';
import type { App } from '../../kernel/routes.ts';
import { StringEnum } from '../../kernel/schemas.ts';
import * as webhooks from '../../webhooks/service.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { foundOrNull, type ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { consolePageRequest, ConsolePageQuery } from './lists.ts';
import { renderEventPage, renderEventsPage } from './events-view.ts';
import { merchantOwner } from './webhooks.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const Count = Type.Integer({ minimum: 0, maximum: 1_000_000 });
const EventsQuery = Type.Object({
  ...ConsolePageQuery,
  type: Type.Optional(StringEnum(['', ...events.EVENT_TYPES] as const)),
  // What "redeliver every failed event" did (post/redirect/get).
  requeued: Type.Optional(Count), deliveries: Type.Optional(Count), limited: Type.Optional(Count), more: Type.Optional(Type.Boolean()),
});
const EventParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const EventQuery = Type.Object({ queued: Type.Optional(Count) });

export function eventRoutes(app: App, kit: ConsoleKit): void {
  const { db, clock } = kit.context;

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.not_found.title', 'console.events.not_found', { href: '/console/events', label: 'console.events.back' }, 'not-found'), null);

  const eventPage = async (request: FastifyRequest, reply: FastifyReply, id: string, status: number, notice: string | null, alert?: string) => {
    const owner = merchantOwner(request);
    const found = await foundOrNull(() => webhooks.getEventWithAttempts(db, owner, id));
    if (!found) return notFound(request, reply);
    const deliveries = await webhooks.deliveriesOfEvent(db, owner, found.event.id);
    const { items } = await webhooks.listEndpoints(db, owner, { page: 1, perPage: webhooks.MAX_ENDPOINTS_PER_OWNER });
    return kit.send(request, reply, status, (locale, nonce) => renderEventPage({
      locale, nonce, session: sessionOf(request), csrf: csrfOf(request), event: found.event, data: toEventPayload(found.event).data,
      attempts: found.attempts, deliveries, endpoints: new Map(items.map((endpoint) => [endpoint.id, endpoint])), notice, alert,
    }), `/console/events/${encodeURIComponent(found.event.id)}`);
  };

  app.get('/console/events', { schema: { ...hidden, querystring: EventsQuery, summary: 'Console: the business\'s events (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const { query } = request;
    const type = query.type ? query.type as events.EventType : null;
    const pageRequest = consolePageRequest(query);
    const page = await events.listEventPage(db, merchantOwner(request), type, pageRequest);
    return kit.send(request, reply, 200, (locale, nonce) => {
      const notice = query.requeued === undefined ? null
        : [
          locale.t('console.events.failed.done', { events: query.requeued ?? 0, deliveries: query.deliveries ?? 0 }),
          query.limited ? locale.t('console.events.failed.limited', { count: query.limited }) : '',
          query.more ? locale.t('console.events.failed.more') : '',
        ].filter(Boolean).join(' ');
      return renderEventsPage({
        locale, nonce, session: sessionOf(request), csrf: csrfOf(request), type: type ?? '', request: pageRequest, page, notice, maxPerClick: webhooks.REDELIVER_FAILED_MAX_EVENTS,
      });
    }, '/console/events');
  });

  app.post('/console/events/redeliver-failed', { schema: { ...hidden, summary: 'Console: redeliver every failed event (the newest, a bounded number a click)' }, config: kit.route('owner') }, async (request, reply) => {
    const done = await webhooks.redeliverFailed(db, merchantOwner(request), clock.now());
    return kit.redirect(request, reply, `/console/events?requeued=${done.events}&deliveries=${done.deliveries}&limited=${done.limited}${done.more ? '&more=true' : ''}`);
  });

  app.get('/console/events/:id', { schema: { ...hidden, params: EventParams, querystring: EventQuery, summary: 'Console: an event with its deliveries and attempts (HTML)' }, config: kit.route('owner') }, (request, reply) => {
    const queued = request.query.queued;
    return eventPage(request, reply, request.params.id, 200, queued === undefined ? null : kit.localeOf(request).t('console.events.redeliver.done', { count: queued }));
  });

  app.post('/console/events/:id/redeliver', { schema: { ...hidden, params: EventParams, summary: 'Console: redeliver an event to every enabled endpoint that takes it' }, config: kit.route('owner') }, async (request, reply) => {
    const locale = kit.localeOf(request);
    let endpointIds: string[];
    try {
      endpointIds = await webhooks.redeliver(db, merchantOwner(request), request.params.id, clock.now());
    } catch (error) {
      if (error instanceof ApiError && error.code === 'NOT_FOUND') return notFound(request, reply);
      if (error instanceof ApiError && error.code === 'RATE_LIMITED') {
        const seconds = Number(error.headers['Retry-After'] ?? '0');
        const alert = locale.t('console.events.redeliver.limited', { max: webhooks.REDELIVERIES_PER_EVENT, when: locale.dateTime(new Date(clock.now().getTime() + seconds * 1000)) });
        return eventPage(request, reply, request.params.id, 429, null, alert);
      }
      throw error;
    }
    return kit.redirect(request, reply, `/console/events/${encodeURIComponent(request.params.id)}?queued=${endpointIds.length}`);
  });
}
