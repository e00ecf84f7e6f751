// Operator API of the rails under /admin/v1/rails (docs/api-reference.md#rails): settling a transfer batch
// whose upload's answer never came. Only registered when ADMIN_TOKEN is set.
import type { CapabilityRoutes } from '../context.ts';
import { errorResponses, OPERATOR_ERRORS } from '../kernel/schemas.ts';
import { resolveBatch } from '../transfers/batches.ts';
import { BatchIdParams, BatchSchema, ResolveBatchBody } from '../transfers/schemas.ts';
import { toBatchResource } from '../transfers/views.ts';

export const railAdminRoutes: CapabilityRoutes = async (app, { db, clock }) => {
  app.post('/rails/batches/:batchId/resolve', {
    config: { auth: 'admin' },
    schema: {
      tags: ['operator'], security: [{ adminToken: [] }],
      summary: "Settle a batch's transfers still IN_TRANSIT after checking with the bank: COMPLETED, or FAILED (their funds return)",
      params: BatchIdParams,
      body: ResolveBatchBody,
      response: { 200: BatchSchema, ...errorResponses(...OPERATOR_ERRORS, 404, 409, 413, 415, 422) },
    },
  }, async (request) => toBatchResource(await db.transaction((tx) => resolveBatch(tx, request.params.batchId, request.body.to, clock.now()))));
};
