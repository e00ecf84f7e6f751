// Transfer routes (docs/api-reference.md#transfers): HTTP only — schema in, one service call, schema out.
import { sandboxHelpersOf, type CapabilityRoutes } from '../context.ts';
import { merchantOf } from '../kernel/principal.ts';
import { requiredIdempotencyScopeOf, sendIdempotentResult } from '../idempotency/http.ts';
import { pageBody, pageRequest } from '../kernel/pagination.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import { configuredBanks, toBankList } from './banks.ts';
import {
  AdvanceTransferBody, BankListSchema, CancelTransferBody, ListTransfersQuery, TransferIdParams, TransferPageSchema,
  TransferSchema, createTransferBodySchema, type CreateTransferBody,
} from './schemas.ts';
import * as transfers from './service.ts';
import { toTransferResource } from './views.ts';

export const transferRoutes: CapabilityRoutes = async (app, context) => {
  const { config, db, replica, clock } = context;
  const banks = configuredBanks(config);
  const CreateTransferBodySchema = createTransferBodySchema(banks);

  app.post('/api/v2/transfers', {
    config: { auth: 'merchant', module: 'ach', idempotency: 'required' },
    schema: {
      tags: ['transfers'],
      security: [{ apiKey: [] }],
      summary: 'Pay out to a bank account; the amount is debited at once',
      description: 'Needs an Idempotency-Key (UUID v4). A 201 and a 400 INSUFFICIENT_FUNDS are replayed for the same key and body.',
      body: CreateTransferBodySchema,
      response: { 201: TransferSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 400, 409, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const result = await transfers.createTransfer(context.transferCreations, {
      businessCode: merchantOf(request.principal),
      idempotencyScope: requiredIdempotencyScopeOf(request, transfers.CREATE_TRANSFER_ROUTE),
    }, request.body as CreateTransferBody, clock.now());
    return sendIdempotentResult(reply, result);
  });

  app.get('/api/v2/transfers/:id', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['transfers'],
      security: [{ apiKey: [] }],
      summary: 'One transfer',
      params: TransferIdParams,
      response: { 200: TransferSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request) => toTransferResource(await transfers.getTransfer(db, merchantOf(request.principal), request.params.id)));

  app.get('/api/v2/transfers', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['transfers'],
      security: [{ apiKey: [] }],
      summary: 'The merchant\'s transfers, newest first',
      querystring: ListTransfersQuery,
      response: { 200: TransferPageSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 422) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    return pageBody(page, await transfers.listTransfers(replica, merchantOf(request.principal), request.query.status ?? null, page), toTransferResource);
  });

  app.post('/api/v2/transfers/:id/cancel', {
    config: { auth: 'merchant' },
    schema: {
      tags: ['transfers'],
      security: [{ apiKey: [] }],
      summary: 'Cancel a PENDING transfer; its amount returns to the balance',
      params: TransferIdParams,
      body: CancelTransferBody,
      response: { 200: TransferSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 409, 415, 422) },
    },
  }, async (request) => {
    const businessCode = merchantOf(request.principal);
    return toTransferResource(await transfers.cancelTransfer(db, businessCode, request.params.id, clock.now()));
  });

  app.get('/api/v2/banks', {
    config: { auth: 'merchant_or_partner' },
    schema: {
      tags: ['transfers'],
      security: [{ apiKey: [] }],
      summary: 'Banks a transfer can be sent to (bank_code of the destination)',
      response: { 200: BankListSchema, ...errorResponses(...AUTHENTICATED_ERRORS) },
    },
  }, async () => toBankList(banks));

  // The sandbox rail's test helper exists only in MODE=sandbox on the sandbox rail (404 elsewhere, like every sandbox endpoint).
  const sandbox = sandboxHelpersOf(context);
  if (sandbox) {
    app.post('/api/v2/sandbox/transfers/:id/advance', {
      config: { auth: 'merchant' },
      schema: {
        tags: ['sandbox'],
        security: [{ apiKey: [] }],
        summary: 'Sandbox: move a transfer through its lifecycle now, as the rail would',
        params: TransferIdParams,
        body: AdvanceTransferBody,
        response: { 200: TransferSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 415, 422) },
      },
    }, async (request) => {
      const businessCode = merchantOf(request.principal);
      const { to, failure_code: failureCode } = request.body;
      return toTransferResource(await transfers.advanceTransfer(db, sandbox.payOut, businessCode, request.params.id, { to, failureCode }, clock.now()));
    });
  }
};
