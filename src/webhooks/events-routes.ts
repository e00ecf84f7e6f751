// Events API (docs/api-reference.md#events-api): the caller's events, one event with its delivery attempts, and redelivery. It
// lives in the webhooks module because attempts and redelivery are delivery facts; events themselves are
// read through the events service.
import { Type } from '@sinclair/typebox';
import type { CapabilityRoutes } from '../context.ts';
import * as events from '../events/service.ts';
import { PageSchema, pageBody, pageRequest } from '../kernel/pagination.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import * as schemas from './schemas.ts';
import * as webhooks from './service.ts';
import { eventWithAttemptsView } from './views.ts';
import { toEventPayload } from '../events/views.ts';

const tags = ['events'];
const security = [{ apiKey: [] }];
const routeConfig = { auth: 'merchant_or_partner' as const };

export const eventRoutes: CapabilityRoutes = async (app, { db, replica, clock }) => {
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
    return pageBody(page, await events.listEventPage(replica.session(), owner, request.query.type ?? null, page), toEventPayload);
  });

  app.get('/api/v2/events/:id', {
    config: routeConfig,
    schema: {
      tags, security, summary: 'One event with every delivery attempt made for it',
      params: schemas.EventIdParams,
      response: { 200: schemas.EventWithAttemptsSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request) => {
    return eventWithAttemptsView(await webhooks.getEventWithAttempts(db, webhooks.ownerOfPrincipal(request.principal), request.params.id));
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
    const endpointIds = await webhooks.redeliver(db, owner, request.params.id, clock.now());
    return reply.code(202).send({ id: request.params.id, endpoint_ids: endpointIds });
  });
};
