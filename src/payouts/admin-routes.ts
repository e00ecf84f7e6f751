// Operator API for payout schedules under /admin/v1 (docs/api-reference.md#payout-schedules): HTTP only —
// schema in, one service call, schema out. Only registered when ADMIN_TOKEN is set.
import type { CapabilityRoutes } from '../context.ts';
import { errorResponses, OPERATOR_ERRORS } from '../kernel/schemas.ts';
import { BusinessCodeParams } from '../merchants/schemas.ts';
import { configuredBanks } from '../transfers/banks.ts';
import { PayoutScheduleSchema, putPayoutScheduleBodySchema, type PutPayoutScheduleBody } from './schemas.ts';
import * as payouts from './service.ts';
import { toPayoutScheduleResource } from './views.ts';

const tags = ['operator'];
const security = [{ adminToken: [] }];

export const payoutAdminRoutes: CapabilityRoutes = async (app, { config, db, clock }) => {
  const PutPayoutScheduleBodySchema = putPayoutScheduleBodySchema(configuredBanks(config));

  app.put('/merchants/:business_code/payout-schedule', {
    config: { auth: 'admin' },
    schema: {
      tags, security,
      summary: "Set a merchant's payout schedule: daily, weekly or manual (off); takes effect from the next PAYOUT_TIME",
      description: 'minimum and keep left out take their defaults (10.00 and 0); destination left out keeps the stored one '
        + '(the onboarding payout account or an earlier PUT) and is required when there is none. daily or weekly need the ACH module.',
      params: BusinessCodeParams,
      body: PutPayoutScheduleBodySchema,
      response: { 200: PayoutScheduleSchema, ...errorResponses(...OPERATOR_ERRORS, 400, 403, 404, 413, 415, 422) },
    },
  }, async (request) => toPayoutScheduleResource(await payouts.setPayoutSchedule(
    { db, config }, request.params.business_code, request.body as PutPayoutScheduleBody, clock.now(),
  )));

  app.get('/merchants/:business_code/payout-schedule', {
    config: { auth: 'admin' },
    schema: {
      tags, security,
      summary: "A merchant's payout schedule (manual with the defaults when none was set) and its latest run",
      params: BusinessCodeParams,
      response: { 200: PayoutScheduleSchema, ...errorResponses(...OPERATOR_ERRORS, 404, 422) },
    },
  }, async (request) => toPayoutScheduleResource(await payouts.getPayoutSchedule(db, request.params.business_code)));
};
