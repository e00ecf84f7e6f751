// Operator API of the books under /admin/v1 (docs/api-reference.md#operator-api): the ledger check and the
// revenue report. Only registered when ADMIN_TOKEN is set; every route needs `Authorization: Bearer`.
import type { CapabilityRoutes } from '../context.ts';
import { errorResponses, OPERATOR_ERRORS } from '../kernel/schemas.ts';
import * as merchants from '../merchants/service.ts';
import { revenueOf } from './revenue.ts';
import { LedgerCheckSchema, RevenueSchema, StatementQuery } from './schemas.ts';
import * as ledger from './service.ts';
import { dayRange } from './statements.ts';
import { toLedgerReportView, toRevenueView } from './views.ts';

const tags = ['operator'];
const security = [{ adminToken: [] }];

export const ledgerAdminRoutes: CapabilityRoutes = async (app, { config, db, replica, clock }) => {
  app.get('/ledger/check', {
    config: { auth: 'admin' },
    schema: {
      tags, security, summary: 'The ledger check: balanced entries, account heads, running balances, the balance invariant, movements against the journal, statement buckets',
      response: { 200: LedgerCheckSchema, ...errorResponses(...OPERATOR_ERRORS) },
    },
  }, async () => toLedgerReportView(await ledger.checkLedger(db)));

  app.get('/revenue', {
    config: { auth: 'admin' },
    schema: {
      tags, security,
      summary: 'What the merchants\' fees earned, net of transfer fees given back, by day (SERVICE_TIMEZONE) and by merchant; activation fees apart',
      querystring: StatementQuery,
      response: { 200: RevenueSchema, ...errorResponses(...OPERATOR_ERRORS, 422) },
    },
  }, async (request) => {
    const range = dayRange(request.query.from, request.query.to, config.serviceTimeZone, clock.now());
    const reads = replica.session();
    const report = await revenueOf(reads, range, await merchants.platformBusinessCode(reads));
    return toRevenueView(report, await merchants.merchantNames(reads, report.merchants.map((m) => m.businessCode)));
  });
};
