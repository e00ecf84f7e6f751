// Simple QR routes of the merchant API (docs/api-reference.md#qr-payments) and the sandbox payment endpoint
// (docs/api-reference.md#sandbox-qr-payments). HTTP only: schema in, one service or read-model call,
// schema out. The render threads and the read model they use are the AppContext's (built, started and
// stopped by the composition root's lifecycle); the machinery lives in png.ts and read-model.ts.
import { Type } from '@sinclair/typebox';
import { sandboxHelpersOf, type CapabilityRoutes } from '../context.ts';
import { merchantOf } from '../kernel/principal.ts';
import { idempotencyScopeOf, sendIdempotentResult } from '../idempotency/http.ts';
import { pageBody, pageRequest } from '../kernel/pagination.ts';
import { AUTHENTICATED_ERRORS, errorResponses } from '../kernel/schemas.ts';
import {
  CreateQrBody, GetQrQuery, ListPaymentsQuery, ListQrsQuery, PaymentPageSchema, PaymentSchema, QrIdParams, QrPageSchema,
  QrSchema, SandboxPaymentBody, type QrView,
} from './schemas.ts';
import * as qrs from './service.ts';
import { toPaymentView, toQrView } from './views.ts';
import { payPages } from './pages/routes.ts';

export const qrRoutes: CapabilityRoutes = async (app, context) => {
  const { config, db, replica, clock, qrReads: reads } = context;
  // The hosted pages live in their own scope: it alone accepts form posts.
  await app.register(payPages, context);

  const tags = ['simple-qrs'];
  const security = [{ apiKey: [] }];

  app.post('/api/v2/simple-qrs', {
    config: { auth: 'merchant', terminal: true, idempotency: 'optional' },
    schema: {
      tags, security,
      summary: 'Create a payment QR',
      body: CreateQrBody,
      response: { 201: QrSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 400, 409, 413, 415, 422, 502) },
    },
  }, async (request, reply) => {
    const result = await qrs.createQr(context, {
      businessCode: merchantOf(request.principal),
      body: request.body,
      idempotency: idempotencyScopeOf(request, qrs.CREATE_QR_ROUTE),
    }, clock.now(), context.renderQrImage);
    return sendIdempotentResult(reply, result);
  });

  app.get('/api/v2/simple-qrs/:id', {
    config: { auth: 'merchant', terminal: true, etag: true },
    schema: {
      tags, security,
      summary: 'Read a QR (ETag / If-None-Match → 304; ?wait=N long poll)',
      params: QrIdParams,
      querystring: GetQrQuery,
      response: { 200: QrSchema, 304: Type.Null({ description: 'Not modified: If-None-Match names the current ETag (no body)' }), ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request, reply) => {
    const pending = reads.read(merchantOf(request.principal), request.params.id, {
      ifNoneMatch: request.headers['if-none-match'],
      waitSeconds: request.query.wait,
    });
    const answer = pending instanceof Promise ? await pending : pending;
    reply.header('ETag', answer.etag); // Cache-Control: private, no-cache, from the route's etag option (src/http/route-guards.ts)
    if (answer.notModified) return reply.code(304).send(undefined as unknown as null); // no body, no Content-Length: 4 for "null"
    return reply.type('application/json; charset=utf-8').send(answer.json as unknown as QrView);
  });

  app.get('/api/v2/simple-qrs', {
    config: { auth: 'merchant', terminal: true },
    schema: {
      tags, security,
      summary: 'List QRs, newest first (status filters by effective status)',
      querystring: ListQrsQuery,
      response: { 200: QrPageSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 422) },
    },
  }, async (request) => {
    const businessCode = merchantOf(request.principal);
    const page = pageRequest(request.query);
    const now = clock.now();
    const filter = { status: request.query.status ?? null, externalReference: request.query.external_reference ?? null };
    const qrPage = await qrs.listQrsOfMerchant(replica.session(), businessCode, filter, now, page);
    return pageBody(page, qrPage, (found) => toQrView(config, found, now));
  });

  app.post('/api/v2/simple-qrs/:id/cancel', {
    config: { auth: 'merchant', terminal: true },
    schema: {
      tags, security,
      summary: 'Cancel an ACTIVE QR',
      params: QrIdParams,
      body: { type: 'object', additionalProperties: false, properties: {} },
      response: { 200: QrSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 409, 413, 415, 422) },
    },
  }, async (request) => {
    const businessCode = merchantOf(request.principal);
    const now = clock.now();
    const canceled = await qrs.cancelQr(db, config, businessCode, request.params.id, now);
    return toQrView(config, canceled, now);
  });

  app.get('/api/v2/simple-qrs/:id/payments', {
    config: { auth: 'merchant', terminal: true },
    schema: {
      tags, security,
      summary: 'Payments of a QR, newest first',
      params: QrIdParams,
      querystring: ListPaymentsQuery,
      response: { 200: PaymentPageSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 422) },
    },
  }, async (request) => {
    const businessCode = merchantOf(request.principal);
    const page = pageRequest(request.query);
    return pageBody(page, await qrs.listPaymentsOfQr(db, businessCode, request.params.id, page), toPaymentView);
  });

  // Sandbox endpoints exist only in MODE=sandbox on the sandbox rail; elsewhere the path is not found (404).
  const sandbox = sandboxHelpersOf(context);
  if (sandbox) {
    app.post('/api/v2/sandbox/simple-qrs/:id/payments', {
      config: { auth: 'merchant', terminal: true },
      schema: {
        tags: ['sandbox'], security,
        summary: 'Simulate a payer\'s bank paying a QR (sandbox only)',
        params: QrIdParams,
        body: SandboxPaymentBody,
        response: { 201: PaymentSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 404, 409, 413, 415, 422) },
      },
    }, async (request, reply) => {
      const businessCode = merchantOf(request.principal);
      const body = request.body;
      const notice = sandbox.payer.toNotice({
        qrId: request.params.id,
        businessCode,
        amountCentavos: qrs.qrAmountCentavos(body.amount),
        sourceBank: body.source_bank,
        accountNumber: body.account_number,
        accountTitular: body.account_titular,
      });
      const { payment } = await qrs.receivePayment(context, notice, clock.now());
      return reply.code(201).send(toPaymentView(payment));
    });
  }
};
