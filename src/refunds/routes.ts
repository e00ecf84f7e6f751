// Refund routes (docs/api-reference.md#refunds) and the sandbox helpers for refunds and late payments.
// HTTP only: schema in, one service call, schema out.
import { Type } from '@sinclair/typebox';
import { sandboxHelpersOf, type CapabilityRoutes } from '../context.ts';
import { requiredIdempotencyScopeOf, sendIdempotentResult } from '../idempotency/http.ts';
import { pageBody, pageRequest } from '../kernel/pagination.ts';
import { merchantOf } from '../kernel/principal.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import { PaymentSchema, QrIdParams, SandboxPaymentBody } from '../qr/schemas.ts';
import { qrAmountCentavos } from '../qr/service.ts';
import { AdvanceRefundBody, CreateRefundBody, ListRefundsQuery, RefundIdParams, RefundPageSchema, RefundSchema } from './schemas.ts';
import * as refunds from './service.ts';
import { toRefundResource } from './views.ts';

export const refundRoutes: CapabilityRoutes = async (app, context) => {
  const { db, replica, clock } = context;
  const tags = ['refunds'];
  const security = [{ apiKey: [] }];

  app.post('/api/v2/refunds', {
    config: { auth: 'merchant', idempotency: 'required' },
    schema: {
      tags, security,
      summary: 'Give a payer back all or part of a payment; the amount is debited at once',
      description: 'Needs an Idempotency-Key (UUID v4). A 201 and a 400 INSUFFICIENT_FUNDS are replayed for the same key and body.',
      body: CreateRefundBody,
      response: { 201: RefundSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 400, 404, 409, 413, 415, 422) },
    },
  }, async (request, reply) => {
    const result = await refunds.createRefund(context, {
      businessCode: merchantOf(request.principal),
      idempotencyScope: requiredIdempotencyScopeOf(request, refunds.CREATE_REFUND_ROUTE),
    }, request.body, clock.now());
    return sendIdempotentResult(reply, result);
  });

  app.get('/api/v2/refunds/:id', {
    config: { auth: 'merchant' },
    schema: {
      tags, security,
      summary: 'One refund',
      params: RefundIdParams,
      response: { 200: RefundSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404) },
    },
  }, async (request) => toRefundResource(await refunds.getRefund(db, merchantOf(request.principal), request.params.id)));

  app.get('/api/v2/refunds', {
    config: { auth: 'merchant' },
    schema: {
      tags, security,
      summary: 'The merchant\'s refunds, newest first, by payment and status',
      querystring: ListRefundsQuery,
      response: { 200: RefundPageSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 422) },
    },
  }, async (request) => {
    const page = pageRequest(request.query);
    const filter = { businessCode: merchantOf(request.principal), paymentId: request.query.payment_id ?? null, status: request.query.status ?? null };
    return pageBody(page, await refunds.listRefunds(replica, filter, page), toRefundResource);
  });

  // Sandbox helpers exist only in MODE=sandbox on the sandbox rail; elsewhere the paths are not found (404).
  const sandbox = sandboxHelpersOf(context);
  if (sandbox) {
    app.post('/api/v2/sandbox/refunds/:id/advance', {
      config: { auth: 'merchant' },
      schema: {
        tags: ['sandbox'], security,
        summary: 'Sandbox: pay a PENDING refund back now (COMPLETED), or fail it (FAILED), as the rail would',
        params: RefundIdParams,
        body: AdvanceRefundBody,
        response: { 200: RefundSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 413, 415, 422) },
      },
    }, async (request) => {
      const businessCode = merchantOf(request.principal);
      const { to, failure_code: failureCode } = request.body;
      return toRefundResource(await refunds.advanceRefund(db, sandbox.refunds, businessCode, request.params.id, { to, failureCode }, clock.now()));
    });

    app.post('/api/v2/sandbox/simple-qrs/:id/late-payments', {
      config: { auth: 'merchant', terminal: true },
      schema: {
        tags: ['sandbox'], security,
        summary: 'Sandbox: a payer\'s bank reports money for a QR, as a live rail may after the QR stopped taking payments',
        description: 'A QR that can still be paid takes it as an ordinary payment (refund: null); one that cannot records it and refunds it in full at once.',
        params: QrIdParams,
        body: SandboxPaymentBody,
        response: {
          201: Type.Composite([PaymentSchema, Type.Object({ refund: Type.Union([RefundSchema, Type.Null()]) })]),
          ...errorResponses(...AUTHENTICATED_ERRORS, 404, 413, 415, 422),
        },
      },
    }, async (request, reply) => {
      const body = request.body;
      const notice = sandbox.payer.toNotice({
        qrId: request.params.id,
        businessCode: merchantOf(request.principal),
        amountCentavos: qrAmountCentavos(body.amount),
        sourceBank: body.source_bank,
        accountNumber: body.account_number,
        accountTitular: body.account_titular,
      });
      return reply.code(201).send(refunds.toNoticeView(await refunds.receiveNotice(context, notice, clock.now())));
    });
  }
};
