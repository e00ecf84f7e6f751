// Balance routes of the merchant API (docs/api-reference.md#balance-and-movements).
import type { CapabilityRoutes } from '../context.ts';
import { merchantOf } from '../kernel/principal.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import { PageSchema, pageBody, pageRequest } from '../kernel/pagination.ts';
import { BalanceSchema, MovementSchema, MovementsQuery } from './schemas.ts';
import * as ledger from './service.ts';
import { toBalanceView, toMovementView } from './views.ts';

export const ledgerRoutes: CapabilityRoutes = async (app, { db }) => {
  app.get('/api/v2/balance', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['balance'],
      security: [{ apiKey: [] }],
      summary: 'The merchant\'s available balance and the amount of transfers still in flight',
      response: { 200: BalanceSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404) },
    },
  }, async (request) => {
    return toBalanceView(await ledger.getBalance(db, merchantOf(request.principal)));
  });

  app.get('/api/v2/balance/movements', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['balance'],
      security: [{ apiKey: [] }],
      summary: 'The merchant\'s balance movements, newest first (date desc, id desc), paginated',
      querystring: MovementsQuery,
      response: { 200: PageSchema(MovementSchema), ...errorResponses(...AUTHENTICATED_ERRORS, 422) },
    },
  }, async (request) => {
    const query = request.query;
    const page = pageRequest(query);
    const type = query.type === undefined || query.type === 'all' ? null : query.type;
    const movements = await ledger.listMovements(db, {
      businessCode: merchantOf(request.principal),
      type,
      beforeId: query.before_id ?? null,
    }, page);
    return pageBody(page, movements, toMovementView);
  });
};
