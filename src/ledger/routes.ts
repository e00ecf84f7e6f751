// Balance routes of the merchant API (docs/api-reference.md#balance-and-movements).
import type { CapabilityRoutes } from '../context.ts';
import { merchantOf } from '../kernel/principal.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import { PageSchema, pageBody, pageRequest } from '../kernel/pagination.ts';
import { BalanceSchema, MovementSchema, MovementsQuery, StatementQuery, StatementSchema } from './schemas.ts';
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { dayRange, exportEntries, statementOf } from './statements.ts';
import * as ledger from './service.ts';
import { bankNameLookup, configuredBanks } from '../transfers/banks.ts';
import { toBalanceView, toEntryCsvRow, toMovementView, toStatementView } from './views.ts';

export const ledgerRoutes: CapabilityRoutes = async (app, { config, db, replica, clock }) => {
  const bankName = bankNameLookup(configuredBanks(config));
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
    const movements = await ledger.listMovements(replica.session(), {
      businessCode: merchantOf(request.principal),
      type,
      beforeId: query.before_id ?? null,
    }, page);
    return pageBody(page, movements, toMovementView);
  });

  app.get('/api/v2/balance/statement', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['balance'],
      security: [{ apiKey: [] }],
      summary: 'What available did each day (in SERVICE_TIMEZONE): opening, payments, refunds, transfers, returns, fees, closing',
      querystring: StatementQuery,
      response: { 200: StatementSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 422) },
    },
  }, async (request) => {
    const range = dayRange(request.query.from, request.query.to, config.serviceTimeZone, clock.now());
    return toStatementView(await statementOf(replica.session(), merchantOf(request.principal), range));
  });

  app.get('/api/v2/balance/entries.csv', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['balance'],
      security: [{ apiKey: [] }],
      summary: 'The journal entries that changed available, as CSV (RFC 4180, UTF-8, header row), streamed',
      querystring: StatementQuery,
      response: {
        // Typed as the stream the handler sends; documented as the text it becomes.
        200: { description: 'CSV attachment', content: { 'text/csv': { schema: Type.Unsafe<Readable>({ type: 'string' }) } } },
        ...errorResponses(...AUTHENTICATED_ERRORS, 422),
      },
    },
  }, async (request, reply) => {
    const businessCode = merchantOf(request.principal);
    const range = dayRange(request.query.from, request.query.to, config.serviceTimeZone, clock.now());
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="entries-${businessCode}-${range.from}-${range.to}.csv"`)
      .send(exportEntries(replica.session(), businessCode, range, (line, zone) => toEntryCsvRow(line, zone, bankName)));
  });
};
