// Operator API of the rails under /admin/v1/rails: settling a transfer batch whose upload's answer never
// came (docs/api-reference.md#resolve-a-batch), and reconciling a business day with the bank
// (docs/api-reference.md#reconcile-a-day-with-the-bank). Only registered when ADMIN_TOKEN is set.
import type { CapabilityRoutes } from '../context.ts';
import { ApiError, railRefused, railUnavailable } from '../kernel/errors.ts';
import { errorResponses, OPERATOR_ERRORS } from '../kernel/schemas.ts';
import { resolveBatch } from '../transfers/batches.ts';
import { BatchIdParams, BatchSchema, ResolveBatchBody } from '../transfers/schemas.ts';
import { toBatchResource } from '../transfers/views.ts';
import { checkedDay, reconcileContextOf, reconcileOnDemand } from './reconciliation.ts';
import { ReconciliationQuery, ReconciliationSchema } from './schemas.ts';
import { toReconciliationView } from './views.ts';

export const railAdminRoutes: CapabilityRoutes = async (app, context) => {
  const { db, clock } = context;
  app.post('/rails/batches/:batchId/resolve', {
    config: { auth: 'admin' },
    schema: {
      tags: ['operator'], security: [{ adminToken: [] }],
      summary: "Settle a batch's transfers still IN_TRANSIT after checking with the bank: COMPLETED, or FAILED (their funds return)",
      params: BatchIdParams,
      body: ResolveBatchBody,
      response: { 200: BatchSchema, ...errorResponses(...OPERATOR_ERRORS, 404, 409, 413, 415, 422) },
    },
  }, async (request) => toBatchResource(await resolveBatch(db, request.params.batchId, request.body.to, clock.now())));

  const reconcile = reconcileContextOf(context);
  app.get('/rails/reconciliation', {
    config: { auth: 'admin' },
    schema: {
      tags: ['operator'], security: [{ adminToken: [] }],
      summary: "Compare a business day's bank payments and transfers with what the bank lists and debited (§14.5); the run is stored",
      querystring: ReconciliationQuery,
      // 409: the sandbox rail has no bank; 502/503: the bank refused or did not answer.
      response: { 200: ReconciliationSchema, ...errorResponses(...OPERATOR_ERRORS, 409, 422, 502) },
    },
  }, async (request) => {
    // The day first: a wrong date is the caller's mistake whatever the rail.
    const day = checkedDay(request.query.date, context.config.serviceTimeZone, clock.now());
    if (!reconcile) throw new ApiError('RAIL_NOT_RECONCILABLE');
    const outcome = await reconcileOnDemand(reconcile, day);
    switch (outcome.outcome) {
      case 'reconciled':
        return toReconciliationView(outcome.reconciliation);
      case 'refused':
        throw railRefused(outcome.message);
      case 'unknown':
        throw railUnavailable();
    }
  });
};
