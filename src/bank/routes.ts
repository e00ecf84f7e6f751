// The bank's callbacks, on the secret path /rails/baneco/{BANECO_CALLBACK_SECRET}/… (contract §14.3, §14.4):
// - api/qrsimple/notifyPaymentQR: the bank does not sign it, so its body is only a hint naming a QR: the
//   QR's status is read at the bank and what it lists is recorded; HTTP 503 when the status read got no
//   answer or the database failed for any payment it lists (the others are recorded all the same), so the
//   bank calls again;
// - api/notifyStatus: one batch item accepted (ACEP) or rejected (RECH): its transfer completes or fails
//   once; `responseCode` 1 for an item that is not ours or a body we cannot read, 503 when the database failed.
// The bank is answered `{"responseCode": 0}` only after the work committed. A wrong secret is the ordinary
// 404 of an unknown path. The routes are not in /openapi.json: they are the bank's, not the API's.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CapabilityRoutes } from '../context.ts';
import { handleNotFound } from '../http/error-handler.ts';
import { bankPayOutOf, receiveItemStatus, type StatusCallbackResult } from './pay-out.ts';
import { bankContextOf, confirmRailQr } from './service.ts';

/** Seconds the bank is asked to wait before calling again. */
const CALLBACK_RETRY_AFTER_SECONDS = 5;

export const bankRoutes: CapabilityRoutes = async (app, context) => {
  const bank = bankContextOf(context);
  if (!bank) return;
  // Before the body is read: with a wrong secret every body — malformed JSON, another media type, a
  // hostile key — gets the very answer of a path that does not exist, so nothing tells a prober a route is here.
  const secretGuard = async (request: FastifyRequest<{ Params: { secret: string } }>, reply: FastifyReply) => {
    if (!bank.payIn.isCallbackSecret(request.params.secret)) {
      await handleNotFound(request, reply);
      return reply;
    }
    return undefined;
  };

  app.post<{ Params: { secret: string } }>(`/rails/${bank.rail}/:secret/api/qrsimple/notifyPaymentQR`, {
    schema: { hide: true },
    onRequest: secretGuard,
  }, async (request, reply) => {
    const hint = bank.payIn.readPaymentHint(request.body);
    if (hint.kind === 'unreadable') {
      // The problem names a field, never a value; the path (the secret) is not logged.
      request.log.warn({ problem: hint.problem }, 'bank payment callback unreadable');
      return reply.code(200).send({ responseCode: 1, message: 'unreadable notification' });
    }
    let confirmed;
    try {
      confirmed = await confirmRailQr(bank, hint.qrReference, context.clock.now(), (error) => {
        request.log.error({ err: { name: error.name, message: error.message }, railReference: error.railReference }, 'bank payment callback: a payment was not recorded');
      });
    } catch (error) {
      request.log.error({ err: error instanceof Error ? { name: error.name, message: error.message } : 'error' }, 'bank payment callback: recording failed');
      confirmed = { outcome: 'unknown' as const };
    }
    // A payment of the QR left unrecorded (the others were recorded): 503 too, so the bank calls again.
    if (confirmed.outcome === 'unknown' || (confirmed.outcome === 'recorded' && confirmed.tally.failed > 0)) {
      return reply.code(503).header('Retry-After', String(CALLBACK_RETRY_AFTER_SECONDS)).send({ responseCode: 1, message: 'try again later' });
    }
    return reply.code(200).send({ responseCode: 0, message: '' });
  });

  const payOut = bankPayOutOf(context);
  if (!payOut) return;
  app.post<{ Params: { secret: string } }>(`/rails/${payOut.rail}/:secret/api/notifyStatus`, {
    schema: { hide: true },
    onRequest: secretGuard,
  }, async (request, reply) => {
    let result: StatusCallbackResult;
    try {
      result = await receiveItemStatus(payOut, request.body);
    } catch (error) {
      request.log.error({ err: error instanceof Error ? { name: error.name, message: error.message } : 'error' }, 'bank status callback: recording failed');
      return reply.code(503).header('Retry-After', String(CALLBACK_RETRY_AFTER_SECONDS)).send({ responseCode: 1, message: 'try again later' });
    }
    switch (result.kind) {
      case 'unreadable':
        request.log.warn({ problem: result.problem }, 'bank status callback unreadable');
        return reply.code(200).send({ responseCode: 1, message: 'unreadable notification' });
      case 'unknown_item':
        request.log.warn('bank status callback for an item that is not ours');
        return reply.code(200).send({ responseCode: 1, message: 'unknown batchDetailId' });
      case 'conflict':
        // Changes nothing; reconciliation reports it (conflicting_status).
        request.log.warn('bank status callback contradicts an earlier one');
        return reply.code(200).send({ responseCode: 0, message: '' });
      case 'applied':
      case 'repeated':
        return reply.code(200).send({ responseCode: 0, message: '' });
    }
  });
};
