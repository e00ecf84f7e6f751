// Webhook endpoints API (docs/api-reference.md#webhooks-and-events): merchants with their API key, partners with their master key. The
// signing secret is shown on create and rotate-secret only.
import { Type } from '@sinclair/typebox';
import type { CapabilityRoutes } from '../context.ts';
import { PageSchema, pageBody, pageRequest } from '../kernel/pagination.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import * as schemas from './schemas.ts';
import * as webhooks from './service.ts';
import { destinationPolicyOf } from './ssrf.ts';
import { endpointView, endpointWithSecret } from './views.ts';

const tags = ['webhooks'];
const security = [{ apiKey: [] }];
const routeConfig = { auth: 'merchant_or_partner' as const };
/** Create and rotate-secret show the signing secret, once. */
const showsSecret = { auth: 'merchant_or_partner' as const, showsSecret: true as const };
const WRITE_ERRORS = [...AUTHENTICATED_ERRORS, 400, 413, 415, 422] as const;

export const webhookEndpointRoutes: CapabilityRoutes = async (app, { config, db, clock, secrets }) => {
  const destinations = destinationPolicyOf(config);
  app.post('/api/v2/webhook-endpoints', {
    config: showsSecret,
    schema: {
      tags, security, summary: 'Register an endpoint that receives signed event webhooks; the secret is shown once',
      body: schemas.CreateEndpointBody,
      response: { 201: schemas.EndpointWithSecretSchema, ...errorResponses(...WRITE_ERRORS) },
    },
  }, async (request, reply) => {
    const owner = webhooks.ownerOfPrincipal(request.principal);
    const endpoint = await webhooks.createEndpoint(db, owner, request.body, destinations, clock.now(), secrets);
    return reply.code(201).send(endpointWithSecret(endpoint));
  });

  app.get('/api/v2/webhook-endpoints', {
    config: routeConfig,
    schema: {
      tags, security, summary: 'List your webhook endpoints, newest first',
      querystring: schemas.EndpointListQuery,
      response: { 200: PageSchema(schemas.EndpointSchema), ...errorResponses(...AUTHENTICATED_ERRORS, 422) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return pageBody(page, await webhooks.listEndpoints(db, webhooks.ownerOfPrincipal(request.principal), page), endpointView);
  });

  app.get('/api/v2/webhook-endpoints/:id', {
    config: routeConfig,
    schema: {
      tags, security, summary: 'One webhook endpoint (without its secret)',
      params: schemas.EndpointIdParams,
      response: { 200: schemas.EndpointSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request) => {
    return endpointView(await webhooks.getEndpoint(db, webhooks.ownerOfPrincipal(request.principal), request.params.id));
  });

  app.patch('/api/v2/webhook-endpoints/:id', {
    config: routeConfig,
    schema: {
      tags, security, summary: 'Change the URL, event filter, description or status of an endpoint',
      params: schemas.EndpointIdParams,
      body: schemas.UpdateEndpointBody,
      response: { 200: schemas.EndpointSchema, ...errorResponses(...WRITE_ERRORS, 404) },
    },
  }, async (request) => {
    const owner = webhooks.ownerOfPrincipal(request.principal);
    return endpointView(await webhooks.updateEndpoint(db, owner, request.params.id, request.body, destinations, clock.now()));
  });

  app.delete('/api/v2/webhook-endpoints/:id', {
    config: routeConfig,
    schema: {
      tags, security, summary: 'Delete an endpoint; its pending deliveries are dropped',
      params: schemas.EndpointIdParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request, reply) => {
    const owner = webhooks.ownerOfPrincipal(request.principal);
    await webhooks.deleteEndpoint(db, owner, request.params.id, clock.now());
    return reply.code(204).send(null);
  });

  app.post('/api/v2/webhook-endpoints/:id/rotate-secret', {
    config: showsSecret,
    schema: {
      tags, security,
      summary: 'Replace the signing secret; for 24 hours deliveries carry signatures with both the new and the previous secret, '
        + 'unless expire_previous_now stops the previous one at once',
      params: schemas.EndpointIdParams,
      body: Type.Optional(schemas.RotateSecretBody),
      response: { 200: schemas.EndpointWithSecretSchema, ...errorResponses(...WRITE_ERRORS, 404) },
    },
  }, async (request) => {
    const owner = webhooks.ownerOfPrincipal(request.principal);
    const expirePreviousNow = request.body?.expire_previous_now ?? false;
    return endpointWithSecret(await webhooks.rotateSecret(db, owner, request.params.id, clock.now(), secrets, { expirePreviousNow }));
  });
};
