// Routes of the hosted payment page (no API key): the page, its public status endpoint (ETag and
// long poll like the API) and, in sandbox mode, the "Simulate payment" form post.
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { AppContext, CapabilityRoutes } from '../../context.ts';
import { acceptFormPostsOnly, formErrorsOf } from '../../kernel/forms.ts';
import { sendPage } from '../../kernel/page-kit.ts';
import { compileBodyCheck } from '../../kernel/validation.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { errorResponses, StrictObject } from '../../kernel/schemas.ts';
import { sandboxRail } from '../rail.ts';
import { SandboxPaymentForm } from '../schemas.ts';
import * as qrs from '../service.ts';
import { ifNoneMatchHits } from '../state.ts';
import type { QrWithLastPayment } from '../service.ts';
import { holdWhileUnchanged, type QrWatcher } from '../watch.ts';
import { publicStatusTag, renderNotFoundPage, renderPayPage, toPublicStatus, type SimulateFormState } from './pay-page.ts';

const TokenParams = Type.Object({ token: Type.String() });

const PAY_FORM_FIELDS = ['source_bank', 'account_number', 'account_titular', 'amount'] as const;
type PayFormValues = Record<(typeof PAY_FORM_FIELDS)[number], string>;
const checkPayForm = compileBodyCheck(SandboxPaymentForm);
const PAY_FORM_MESSAGES: Record<(typeof PAY_FORM_FIELDS)[number], string> = {
  source_bank: 'Enter the payer\'s bank (up to 100 characters).',
  account_number: 'Enter 4 to 30 digits.',
  account_titular: 'Enter the account holder\'s name (up to 140 characters).',
  amount: 'Enter an amount from 0.10 to 100000.00 with at most two decimals.',
};
const StatusQuery = StrictObject({ wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })) });

/** The pay pages share the QR routes' watcher: one LISTEN and one read cache per process. */
export interface PayPagesOptions extends AppContext {
  watcher: QrWatcher;
}

export const payPages: CapabilityRoutes<PayPagesOptions> = async (app, context) => {
  const { config, db, clock, watcher } = context;
  const sandbox = config.mode === 'sandbox';

  acceptFormPostsOnly(app);


  const showPage = async (reply: FastifyReply, token: string, status = 200, form?: SimulateFormState) => {
    const found = await watcher.readByPayToken(token);
    if (!found) return sendPage(reply, 404, renderNotFoundPage);
    const merchant = await context.merchantDisplays.get(db, found.qr.business_code);
    return sendPage(reply, status, (nonce) => renderPayPage({
      found, merchant, now: clock.now(), zone: config.serviceTimeZone, sandbox, nonce, form,
    }));
  };

  app.get('/pay/:token', {
    schema: { tags: ['hosted pages'], summary: 'Hosted payment page (HTML)', params: TokenParams, hide: true },
  }, async (request, reply) => showPage(reply, request.params.token));

  app.get('/pay/:token/status', {
    schema: {
      tags: ['hosted pages'],
      summary: 'Public status of a payment page (ETag, ?wait=N long poll); no payer details',
      params: TokenParams,
      querystring: StatusQuery,
      response: { ...errorResponses(404, 422, 500, 503) },
    },
  }, async (request, reply) => {
    const token = request.params.token;
    // Through the watcher's cache, shared with the API's polls: a page left open costs no database read of its own.
    let found = await watcher.readByPayToken(token);
    if (!found) throw notFound('payment page');
    const qrId = found.qr.id;
    let now = clock.now();
    const ifNoneMatch = request.headers['if-none-match'];
    // The tag of what the page shows, not the API's: a multi-use QR's payments change neither, so its
    // public tag and long poll reveal no payment feed.
    const publicTagOf = (qr: QrWithLastPayment, at: Date) => publicStatusTag(toPublicStatus(qr, at, config.serviceTimeZone));
    if (request.query.wait !== undefined) {
      ({ found, now } = await holdWhileUnchanged(watcher, clock, found, ifNoneMatch ?? publicTagOf(found, now), request.query.wait,
        () => watcher.readById(qrId), publicTagOf));
    }
    const status = toPublicStatus(found, now, config.serviceTimeZone);
    const etag = publicStatusTag(status);
    reply.header('ETag', etag).header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer');
    if (ifNoneMatchHits(ifNoneMatch, etag)) return reply.code(304).send(); // no body
    return status;
  });

  if (!sandbox) return; // live mode: the form does not exist (404)

  app.post('/pay/:token', {
    schema: { tags: ['hosted pages'], summary: 'Sandbox: simulate a payer paying (form post)', params: TokenParams, hide: true },
  }, async (request, reply) => {
    const token = request.params.token;
    const found = await qrs.findQrByPayToken(db, token);
    if (!found) return sendPage(reply, 404, renderNotFoundPage);
    const raw = (request.body ?? {}) as Record<string, unknown>;
    const values = Object.fromEntries(PAY_FORM_FIELDS.map((name) => [name, typeof raw[name] === 'string' ? raw[name].trim() : ''])) as PayFormValues;
    // The payer's fields always; the amount only where the payer chooses it (an editable QR), and typed.
    const { amount, ...payer } = values;
    const submitted = found.qr.modify_amount && amount !== '' ? { ...payer, amount } : payer;
    const errors = formErrorsOf(checkPayForm(submitted), values, (field) => PAY_FORM_MESSAGES[field]);
    if (Object.keys(errors).length > 0) return showPage(reply, token, 422, { values, errors });
    const amountCentavos = qrs.qrAmountCentavos('amount' in submitted ? submitted.amount : undefined);
    try {
      await qrs.receivePayment(context, sandboxRail.toNotice({
        qrId: found.qr.id, businessCode: null, amountCentavos,
        sourceBank: values.source_bank, accountNumber: values.account_number, accountTitular: values.account_titular,
      }), clock.now());
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'QR_NOT_PAYABLE' || error.code === 'VALIDATION_FAILED')) {
        const formErrors: Record<string, string> = error.code === 'QR_NOT_PAYABLE'
          ? { _form: 'This QR no longer accepts payments.' }
          : Object.fromEntries((error.errors ?? []).map((e) => [e.field, `Amount ${e.message}.`]));
        return showPage(reply, token, error.status, { values, errors: formErrors });
      }
      throw error;
    }
    // Post/redirect/get: a reload of the receipt never pays twice.
    return reply.code(303).header('location', `/pay/${token}`).send();
  });
};
