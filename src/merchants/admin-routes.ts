// Operator API under /admin/v1 (docs/api-reference.md#operator-api): partners, merchants, keys, suspension and the ACH module.
// Only registered when ADMIN_TOKEN is set; every route needs `Authorization: Bearer`.
import { Type } from '@sinclair/typebox';
import type { CapabilityRoutes } from '../context.ts';
import { errorResponses, OPERATOR_ERRORS } from '../kernel/schemas.ts';
import * as schemas from './schemas.ts';
import * as merchants from './service.ts';
import { toApiKeyListing, toCreatedMerchantView, toCreatedPartnerView, toMerchantView, toPartnerView } from './views.ts';

const tags = ['operator'];
const security = [{ adminToken: [] }];

export const adminRoutes: CapabilityRoutes = async (app, { config, db, clock }) => {
  const adminRoute = { auth: 'admin' as const };
  /** Routes whose answer shows a new key once. */
  const showsKey = { auth: 'admin' as const, showsSecret: true as const };

  app.post('/partners', {
    config: showsKey,
    schema: {
      tags, security, summary: 'Create a partner and its first master key',
      body: schemas.CreatePartnerBody,
      response: { 201: schemas.CreatedPartnerSchema, ...errorResponses(...OPERATOR_ERRORS, 400, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const created = await merchants.createPartner(db, request.body.name, config.mode, clock.now());
    return reply.code(201).send(toCreatedPartnerView(created));
  });

  app.get('/partners', {
    config: adminRoute,
    schema: {
      tags, security, summary: 'List partners',
      response: { 200: Type.Object({ data: Type.Array(schemas.PartnerSchema) }), ...errorResponses(...OPERATOR_ERRORS) },
    },
  }, async () => {
    return { data: (await merchants.listPartners(db)).map(toPartnerView) };
  });

  app.post('/partners/:partner_id/master-keys', {
    config: showsKey,
    schema: {
      tags, security, summary: 'Create another master key for a partner (to rotate: create, switch, then revoke the old one)',
      params: schemas.PartnerIdParams,
      response: { 201: schemas.CreatedMasterKeySchema, ...errorResponses(...OPERATOR_ERRORS, 404, 422) },
    },
  }, async (request, reply) => {
    const key = await merchants.createPartnerMasterKey(db, request.params.partner_id, config.mode, clock.now());
    return reply.code(201).send({ master_key: key.masterKey, key_prefix: key.keyPrefix });
  });

  app.get('/partners/:partner_id/api-keys', {
    config: adminRoute,
    schema: {
      tags, security, summary: 'List the master keys of a partner',
      params: schemas.PartnerIdParams,
      response: { 200: Type.Object({ data: Type.Array(schemas.ApiKeyListingSchema) }), ...errorResponses(...OPERATOR_ERRORS, 404, 422) },
    },
  }, async (request) => {
    const keys = await merchants.listPartnerApiKeys(db, request.params.partner_id);
    return { data: keys.map(toApiKeyListing) };
  });

  app.post('/merchants', {
    config: showsKey,
    schema: {
      tags, security, summary: 'Create a merchant with its balance, price plan and first API key',
      body: schemas.CreateMerchantBody,
      response: { 201: schemas.CreatedMerchantSchema, ...errorResponses(...OPERATOR_ERRORS, 400, 404, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const body = request.body;
    const created = await merchants.createMerchant(db, {
      name: body.name,
      city: body.city,
      mcc: body.mcc,
      achEnabled: body.ach_enabled,
      partnerId: body.partner_id,
      plan: merchants.planWith(config.defaultPricePlan, body.pricing),
    }, config.mode, clock.now());
    return reply.code(201).send(toCreatedMerchantView(created));
  });

  app.get('/merchants', {
    config: adminRoute,
    schema: {
      tags, security, summary: 'List merchants',
      response: { 200: Type.Object({ data: Type.Array(schemas.MerchantSchema) }), ...errorResponses(...OPERATOR_ERRORS) },
    },
  }, async () => ({ data: (await merchants.listMerchants(db)).map(toMerchantView) }));

  app.get('/merchants/:business_code', {
    config: adminRoute,
    schema: {
      tags, security, summary: 'Get a merchant',
      params: schemas.BusinessCodeParams,
      response: { 200: schemas.MerchantSchema, ...errorResponses(...OPERATOR_ERRORS, 404, 422) },
    },
  }, async (request) => toMerchantView(await merchants.getMerchant(db, request.params.business_code)));

  app.patch('/merchants/:business_code', {
    config: adminRoute,
    schema: {
      tags, security, summary: 'Turn the ACH module on or off; suspend or reactivate a merchant; change its price plan (applies forward only)',
      params: schemas.BusinessCodeParams,
      body: schemas.UpdateMerchantBody,
      response: { 200: schemas.MerchantSchema, ...errorResponses(...OPERATOR_ERRORS, 400, 404, 413, 415, 422) },
    },
  }, async (request) => {
    const merchant = await merchants.updateMerchant(db, request.params.business_code, {
      achEnabled: request.body.ach_enabled,
      status: request.body.status,
      plan: merchants.planChangeOf(request.body.pricing),
    }, clock.now());
    return toMerchantView(merchant);
  });

  app.post('/merchants/:business_code/api-keys', {
    config: showsKey,
    schema: {
      tags, security, summary: 'Create another API key for a merchant: a full merchant key, or a terminal key for a POS or kiosk',
      params: schemas.BusinessCodeParams,
      body: schemas.CreateMerchantKeyBody,
      response: { 201: schemas.CreatedMerchantKeySchema, ...errorResponses(...OPERATOR_ERRORS, 400, 404, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const kind = request.body.kind ?? 'merchant';
    const key = await merchants.createMerchantApiKey(db, request.params.business_code, config.mode, clock.now(), kind);
    return reply.code(201).send({ api_key: key.apiKey, key_prefix: key.keyPrefix, kind: key.kind });
  });

  app.get('/merchants/:business_code/api-keys', {
    config: adminRoute,
    schema: {
      tags, security, summary: 'List the API keys of a merchant (prefixes only)',
      params: schemas.BusinessCodeParams,
      response: { 200: Type.Object({ data: Type.Array(schemas.ApiKeyListingSchema) }), ...errorResponses(...OPERATOR_ERRORS, 404, 422) },
    },
  }, async (request) => {
    const keys = await merchants.listMerchantApiKeys(db, request.params.business_code);
    return { data: keys.map(toApiKeyListing) };
  });

  app.delete('/api-keys/:key_prefix', {
    config: adminRoute,
    schema: {
      tags, security, summary: 'Revoke an API key or master key (effective within 5 s on every instance)',
      params: schemas.KeyPrefixParams,
      response: { 204: Type.Null(), ...errorResponses(...OPERATOR_ERRORS, 404, 422) },
    },
  }, async (request, reply) => {
    await merchants.revokeApiKey(db, request.params.key_prefix, clock.now());
    return reply.code(204).send(null);
  });
};
