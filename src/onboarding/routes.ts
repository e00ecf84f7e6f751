// Onboarding intent routes of the partner API (docs/api-reference.md#create-an-intent, docs/api-reference.md#read-an-intent) and the hosted flow's pages. HTTP only:
// schema in, one service call, schema out.
import type { CapabilityRoutes } from '../context.ts';
import { partnerOf } from '../kernel/principal.ts';
import { requiredIdempotencyScopeOf, sendIdempotentResult } from '../idempotency/http.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import { onboardingPages } from './pages/routes.ts';
import { CreatedIntentSchema, CreateIntentBody, IntentCodeParams, IntentSchema } from './schemas.ts';
import * as onboarding from './service.ts';
import { toIntentView } from './views.ts';

export const onboardingRoutes: CapabilityRoutes = async (app, context) => {
  const { db, clock } = context;
  // The hosted flow lives in its own scope: it alone accepts form posts.
  await app.register(onboardingPages, context);

  const tags = ['onboarding'];
  const security = [{ apiKey: [] }];

  app.post('/api/v2/onboarding/intent', {
    // The answer's url is the hosted flow's bearer: whoever holds it can register the merchant.
    config: { auth: 'partner', idempotency: 'required', showsSecret: true },
    schema: {
      tags, security,
      summary: 'Create an onboarding intent (partner master key; Idempotency-Key required)',
      body: CreateIntentBody,
      response: { 201: CreatedIntentSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 400, 409, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const partnerId = partnerOf(request.principal);
    const result = await onboarding.createIntent(context, partnerId, request.body, requiredIdempotencyScopeOf(request, onboarding.CREATE_INTENT_ROUTE), clock.now());
    return sendIdempotentResult(reply, result);
  });

  app.get('/api/v2/onboarding/intent/:code', {
    config: { auth: 'partner' },
    schema: {
      tags, security,
      summary: 'Read an onboarding intent of this partner (no url)',
      params: IntentCodeParams,
      response: { 200: IntentSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request) => {
    const partnerId = partnerOf(request.principal);
    const now = clock.now();
    return toIntentView(await onboarding.getIntentOfPartner(db, partnerId, request.params.code), now);
  });
};
