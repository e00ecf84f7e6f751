// The bank's payment callback (§14.3): POST /rails/baneco/{BANECO_CALLBACK_SECRET}/api/qrsimple/notifyPaymentQR.
// The bank does not sign it, so its body is only a hint naming a QR: the QR's status is read at the bank
// and what it lists is recorded; the bank is answered `{"responseCode": 0}` only after that committed, and
// HTTP 503 when the bank's status read got no answer or the database failed, so the bank calls again.
// A wrong secret is the ordinary 404 of an unknown path. The route is not in /openapi.json: it is the
// bank's, not the API's.
import type { CapabilityRoutes } from '../context.ts';
import { handleNotFound } from '../http/error-handler.ts';
import { bankContextOf, confirmRailQr } from './service.ts';

/** Seconds the bank is asked to wait before calling again. */
const CALLBACK_RETRY_AFTER_SECONDS = 5;

export const bankRoutes: CapabilityRoutes = async (app, context) => {
  const bank = bankContextOf(context);
  if (!bank) return;

  app.post<{ Params: { secret: string } }>(`/rails/${bank.rail}/:secret/api/qrsimple/notifyPaymentQR`, {
    schema: { hide: true },
    // Before the body is read: with a wrong secret every body — malformed JSON, another media type, a
    // hostile key — gets the very answer of a path that does not exist, so nothing tells a prober the route is here.
    onRequest: async (request, reply) => {
      if (!bank.payIn.isCallbackSecret(request.params.secret)) {
        await handleNotFound(request, reply);
        return reply;
      }
      return undefined;
    },
  }, async (request, reply) => {
    const hint = bank.payIn.readPaymentHint(request.body);
    if (hint.kind === 'unreadable') {
      // The problem names a field, never a value; the path (the secret) is not logged.
      request.log.warn({ problem: hint.problem }, 'bank payment callback unreadable');
      return reply.code(200).send({ responseCode: 1, message: 'unreadable notification' });
    }
    let confirmed;
    try {
      confirmed = await confirmRailQr(bank, hint.qrReference, context.clock.now());
    } catch (error) {
      request.log.error({ err: error instanceof Error ? { name: error.name, message: error.message } : 'error' }, 'bank payment callback: recording failed');
      confirmed = { outcome: 'unknown' as const };
    }
    if (confirmed.outcome === 'unknown') {
      return reply.code(503).header('Retry-After', String(CALLBACK_RETRY_AFTER_SECONDS)).send({ responseCode: 1, message: 'try again later' });
    }
    return reply.code(200).send({ responseCode: 0, message: '' });
  });
};
