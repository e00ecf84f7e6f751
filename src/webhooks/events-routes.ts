// Events API (docs/api-reference.md#events-api): the caller's events, one event with its delivery attempts, and redelivery. It
// lives in the webhooks module because attempts and redelivery are delivery facts; events themselves are
// read through the events service.
import { Type } from '@sinclair/typebox';
import type { AppContext, CapabilityRoutes } from '../context.ts';
import * as events from '../events/service.ts';
import { notFound } from '../kernel/errors.ts';
import { PageSchema, pageMeta, pageOffset, pageRequest } from '../kernel/pagination.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import * as schemas from './schemas.ts';
import * as webhooks from './service.ts';

const tags = ['events'];
const security = [{ apiKey: [] }];
const routeConfig = { auth: 'merchant_or_partner' as const };

export const eventRoutes: CapabilityRoutes = async (app, { db, clock }) => {
  app.get('/api/v2/events', {
    config: routeConfig,
    schema: {
      tags, security, summary: 'Your events, newest first, optionally of one type',
      querystring: schemas.EventListQuery,
      response: { 200: PageSchema(schemas.EventSchema), ...errorResponses(...AUTHENTICATED_ERRORS, 422) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const owner = webhooks.ownerOfPrincipal(request.principal);
    const { events: rows, total } = await events.listEventPage(db, owner, { type: request.query.type, limit: page.perPage, offset: pageOffset(page) });
    return { data: rows.map(events.toEventPayload), meta: pageMeta(total, page) };
  });

  app.get('/api/v2/events/:id', {
    config: routeConfig,
    schema: {
      tags, security, summary: 'One event with every delivery attempt made for it',
      params: schemas.EventIdParams,
      response: { 200: schemas.EventWithAttemptsSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request) => {
    const found = await webhooks.getEventWithAttempts(db, webhooks.ownerOfPrincipal(request.principal), request.params.id);
    if (!found) throw notFound('event');
    return {
      ...events.toEventPayload(found.event),
      attempts: found.attempts.map((attempt) => ({ ...attempt, sent_at: attempt.sent_at.toISOString() })),
    };
  });

  app.post('/api/v2/events/:id/redeliver', {
    config: routeConfig,
    schema: {
      tags, security,
      summary: 'Send the event again now to every enabled endpoint that takes its type, with the same webhook-id',
      params: schemas.EventIdParams,
      body: Type.Optional(Type.Object({}, { additionalProperties: false })),
      response: { 202: schemas.RedeliverySchema, ...errorResponses(...AUTHENTICATED_ERRORS, 400, 404, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const owner = webhooks.ownerOfPrincipal(request.principal);
    const endpointIds = await db.transaction((tx) => webhooks.redeliverEvent(tx, owner, request.params.id, clock.now()));
    if (!endpointIds) throw notFound('event');
    return reply.code(202).send({ id: request.params.id, endpoint_ids: endpointIds });
  });
};
