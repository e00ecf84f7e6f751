// Balance routes of the merchant API (docs/api-reference.md#balance-and-movements).
import type { AppContext, CapabilityRoutes } from '../context.ts';
import { merchantOf } from '../kernel/principal.ts';
import { notFound } from '../kernel/errors.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import { centavosToAmount } from '../money.ts';
import { PageSchema, pageMeta, pageRequest } from '../kernel/pagination.ts';
import { BalanceSchema, MovementSchema, MovementsQuery } from './schemas.ts';
import * as ledger from './service.ts';

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
    const businessCode = merchantOf(request.principal);
    const balance = await ledger.getBalance(db, businessCode);
    if (!balance) throw notFound('balance');
    return {
      business_code: balance.business_code,
      currency: 'BOB' as const,
      available: centavosToAmount(balance.available_centavos),
      pending_out: centavosToAmount(balance.pending_out_centavos),
    };
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
    const { movements, total } = await ledger.listMovements(db, {
      businessCode: merchantOf(request.principal),
      type,
      beforeId: query.before_id ?? null,
    }, page);
    return { data: movements.map(ledger.toMovementView), meta: pageMeta(total, page) };
  });
};
