// Operator API for refunds under /admin/v1 (docs/api-reference.md#resolve-a-refund): recording what became of
// a refund that the rail cannot pay back by itself. Only registered when ADMIN_TOKEN is set.
import type { CapabilityRoutes } from '../context.ts';
import { errorResponses, OPERATOR_ERRORS } from '../kernel/schemas.ts';
import { RefundIdParams, RefundSchema, ResolveRefundBody } from './schemas.ts';
import * as refunds from './service.ts';
import { toRefundResource } from './views.ts';

export const refundAdminRoutes: CapabilityRoutes = async (app, { db, clock }) => {
  app.post('/refunds/:id/resolve', {
    config: { auth: 'admin' },
    schema: {
      tags: ['operator'], security: [{ adminToken: [] }],
      summary: 'Record what became of a PENDING refund the rail cannot pay back by itself: COMPLETED, or FAILED (its funds return to the balance)',
      params: RefundIdParams,
      body: ResolveRefundBody,
      response: { 200: RefundSchema, ...errorResponses(...OPERATOR_ERRORS, 404, 409, 413, 415, 422) },
    },
  }, async (request) => {
    const { to, note } = request.body;
    return toRefundResource(await refunds.resolveRefund(db, request.params.id, { to, note: note ?? null }, clock.now()));
  });
};
