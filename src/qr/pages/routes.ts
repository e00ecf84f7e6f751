// Routes of the hosted payment page (no API key): the page, its receipt, its QR image to save, its public
// status endpoint (ETag and long poll like the API) and, in sandbox mode, the "Simulate payment" form post.
// Pages speak the payer's language (kernel/page-kit.ts pageLocale).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sandboxHelpersOf, type CapabilityRoutes } from '../../context.ts';
import { attachmentDisposition } from '../../kernel/content-disposition.ts';
import { readCookie, scopedCookie } from '../../kernel/cookies.ts';
import { acceptFormPostsOnly, formErrorsOf } from '../../kernel/forms.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { hostedPage, pageLocale, sendPage } from '../../kernel/page-kit.ts';
import { compileBodyCheck } from '../../kernel/validation.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { errorResponses, StrictObject } from '../../kernel/schemas.ts';
import { bindReceiptKey, newReceiptKey, receiptPayment } from '../receipts.ts';
import { QR_AMOUNT_BOUNDS, SandboxPaymentForm } from '../schemas.ts';
import * as qrs from '../service.ts';
import { effectiveState, ifNoneMatchHits } from '../state.ts';
import type { QrWithLastPayment } from '../service.ts';
import type { QrRow } from '../store.ts';
import { pngOfDataUri } from '../png.ts';
import { holdWhileUnchanged } from '../watch.ts';
import { renderNotFoundPage, renderPayPage, type SimulateFormState } from './pay-page.ts';
import { PublicStatusSchema, publicStatusTag, toPublicStatus } from './public-status.ts';
import { qrFileName } from './qr-file-name.ts';
import { renderNoReceiptPage, renderReceiptPage } from './receipt-page.ts';

const TokenParams = Type.Object({ token: Type.String() });

const PAY_FORM_FIELDS = ['source_bank', 'account_number', 'account_titular', 'amount'] as const;
type PayFormValues = Record<(typeof PAY_FORM_FIELDS)[number], string>;
const checkPayForm = compileBodyCheck(SandboxPaymentForm);
/** The pay form's message for a failing field, in the payer's language; an amount's within the QR's own bounds. */
function payFormMessage(locale: Locale, qr: QrRow, field: (typeof PAY_FORM_FIELDS)[number]): string {
  if (field !== 'amount') return locale.t(`pay.form.${field}`);
  return locale.t('pay.form.amount', {
    min: locale.money(qr.min_amount_centavos ?? QR_AMOUNT_BOUNDS.min),
    max: locale.money(qr.max_amount_centavos ?? QR_AMOUNT_BOUNDS.max),
    example: locale.amountInput(2550),
  });
}
/** The cookie holding the receipt key of the payments this browser made through the form (receipts.ts). */
const RECEIPT_COOKIE = 'mps_receipt';
const RECEIPT_COOKIE_MAX_AGE_SECONDS = 30 * 24 * 3600;
const StatusQuery = StrictObject({ wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 })) });
const QrImageQuery = StrictObject({ download: Type.Optional(Type.Literal('1')) });

export const payPages: CapabilityRoutes = async (app, context) => {
  const { config, db, clock } = context;
  // The QR routes' watcher: one LISTEN and one read cache per process for the API's polls and the pages.
  const { watcher } = context.qrReads;
  /** Hosted-page routes: their links (and error pages) under PUBLIC_BASE_URL's path. */
  const pageRoute = hostedPage(config.publicBaseUrl);
  // The "Simulate payment" form: MODE=sandbox on the sandbox rail only (a bank's QR is paid in a bank's app).
  const sandboxHelpers = sandboxHelpersOf(context);
  const sandbox = sandboxHelpers !== null;

  acceptFormPostsOnly(app);


  const receiptKeyOf = (request: FastifyRequest) => readCookie(request.headers.cookie, RECEIPT_COOKIE);

  const showPage = async (request: FastifyRequest, reply: FastifyReply, token: string, status = 200, form?: SimulateFormState) => {
    const locale = pageLocale(request, config.serviceTimeZone);
    const found = await watcher.readByPayToken(token);
    if (!found) return sendPage(reply, 404, locale, (nonce) => renderNotFoundPage(locale, nonce));
    const merchant = await context.merchantDisplays.get(db, found.qr.business_code);
    const ownPayment = found.qr.is_multi_use ? await receiptPayment(db, found, receiptKeyOf(request)) : null;
    return sendPage(reply, status, locale, (nonce) => renderPayPage({
      found, merchant, now: clock.now(), locale, sandbox, nonce, form, ownPayment,
    }));
  };

  app.get('/pay/:token', {
    schema: { tags: ['hosted pages'], summary: 'Hosted payment page (HTML)', params: TokenParams, hide: true }, config: pageRoute,
  }, async (request, reply) => showPage(request, reply, request.params.token));

  app.get('/pay/:token/receipt', {
    schema: { tags: ['hosted pages'], summary: 'Printable receipt of the payment (HTML)', params: TokenParams, hide: true }, config: pageRoute,
  }, async (request, reply) => {
    const locale = pageLocale(request, config.serviceTimeZone);
    const found = await qrs.findQrByPayToken(db, request.params.token);
    if (!found) return sendPage(reply, 404, locale, (nonce) => renderNotFoundPage(locale, nonce));
    const payment = await receiptPayment(db, found, receiptKeyOf(request));
    if (!payment) {
      const payable = effectiveState(found.qr, clock.now()).status === 'ACTIVE';
      return sendPage(reply, 404, locale, (nonce) => renderNoReceiptPage(locale, nonce, found.qr, payable));
    }
    const merchant = await context.merchantDisplays.get(db, found.qr.business_code);
    return sendPage(reply, 200, locale, (nonce) => renderReceiptPage({ locale, nonce, qr: found.qr, payment, merchant }));
  });

  // The image the page shows (its qr_image: ours, or on a bank's rail the bank's, unchanged) as a PNG file;
  // `?download=1` is the "Guardar QR" link's, an attachment named for the merchant and amount
  // (qr-file-name.ts). Served in every state, like the image in the page: the page shows the link only
  // while the QR takes payments.
  app.get('/pay/:token/qr.png', {
    schema: { tags: ['hosted pages'], summary: 'The QR image of a payment page (PNG); ?download=1 saves it', params: TokenParams, querystring: QrImageQuery, hide: true },
    config: pageRoute,
  }, async (request, reply) => {
    const found = await watcher.readByPayToken(request.params.token);
    if (!found) {
      const locale = pageLocale(request, config.serviceTimeZone);
      return sendPage(reply, 404, locale, (nonce) => renderNotFoundPage(locale, nonce));
    }
    reply.type('image/png').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    if (request.query.download === '1') {
      const merchant = await context.merchantDisplays.get(db, found.qr.business_code);
      reply.header('content-disposition', attachmentDisposition(qrFileName(merchant.name, found.qr)));
    }
    return reply.send(pngOfDataUri(found.qr.qr_image));
  });

  app.get('/pay/:token/status', {
    config: { etag: true },
    schema: {
      tags: ['hosted pages'],
      summary: 'Public status of a payment page (ETag, ?wait=N long poll); no payer details',
      params: TokenParams,
      querystring: StatusQuery,
      response: { 200: PublicStatusSchema, 304: Type.Null({ description: 'Not modified (no body)' }), ...errorResponses(404, 422, 500, 503) },
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
    if (ifNoneMatchHits(ifNoneMatch, etag)) return reply.code(304).send(undefined as unknown as null); // no body
    return status;
  });

  if (!sandboxHelpers) return; // live mode, or a bank's rail: the form does not exist (404)

  app.post('/pay/:token', {
    schema: { tags: ['hosted pages'], summary: 'Sandbox: simulate a payer paying (form post)', params: TokenParams, hide: true }, config: pageRoute,
  }, async (request, reply) => {
    const token = request.params.token;
    const locale = pageLocale(request, config.serviceTimeZone);
    const found = await qrs.findQrByPayToken(db, token);
    if (!found) return sendPage(reply, 404, locale, (nonce) => renderNotFoundPage(locale, nonce));
    const raw = (request.body ?? {}) as Record<string, unknown>;
    const values = Object.fromEntries(PAY_FORM_FIELDS.map((name) => [name, typeof raw[name] === 'string' ? raw[name].trim() : ''])) as PayFormValues;
    // The payer's fields always; the amount where the payer chooses it (an editable QR: the field comes
    // filled with the suggestion, and emptied it is an error, not the suggestion), typed as they write it.
    const { amount, ...payer } = values;
    const submitted = found.qr.modify_amount ? { ...payer, amount: locale.readAmount(amount) } : payer;
    const errors = formErrorsOf(checkPayForm(submitted), values, locale, (field) => payFormMessage(locale, found.qr, field));
    if (Object.keys(errors).length > 0) return showPage(request, reply, token, 422, { values, errors });
    const amountCentavos = qrs.qrAmountCentavos('amount' in submitted ? submitted.amount : undefined);
    let received: qrs.ReceivedPayment;
    try {
      received = await qrs.receivePayment(context, sandboxHelpers.payer.toNotice({
        qrId: found.qr.id, businessCode: null, amountCentavos,
        sourceBank: values.source_bank, accountNumber: values.account_number, accountTitular: values.account_titular,
      }), clock.now());
    } catch (error) {
      if (error instanceof ApiError && (error.code === 'QR_NOT_PAYABLE' || error.code === 'VALIDATION_FAILED')) {
        const formErrors = error.code === 'QR_NOT_PAYABLE' ? { _form: locale.t('pay.form.not_payable') } : amountRefusals(locale, found.qr, error);
        return showPage(request, reply, token, error.status, { values, errors: formErrors });
      }
      throw error;
    }
    if (found.qr.is_multi_use) {
      // The receipt key of this payment, for this browser only: the receipt shows it its own payment.
      const receiptKey = newReceiptKey();
      await bindReceiptKey(db, received.payment, receiptKey);
      reply.header('set-cookie', scopedCookie(RECEIPT_COOKIE, receiptKey, {
        path: locale.pathOf(`/pay/${token}`), maxAgeSeconds: RECEIPT_COOKIE_MAX_AGE_SECONDS, secure: config.publicBaseUrl.startsWith('https:'),
      }));
    }
    // Post/redirect/get: a reload of the page never pays twice.
    return reply.code(303).header('location', locale.href(`/pay/${token}`)).send();
  });
};

/** The form's words for the service's refusal of an amount (outside the QR's bounds). */
function amountRefusals(locale: Locale, qr: QrRow, error: ApiError): Record<string, string> {
  const messages: Record<string, string> = {};
  for (const fieldError of error.errors ?? []) {
    messages[fieldError.field] = fieldError.code === 'too_small' && qr.min_amount_centavos !== null
      ? locale.t('pay.form.amount_too_small', { min: locale.money(qr.min_amount_centavos) })
      : fieldError.code === 'too_large' && qr.max_amount_centavos !== null
        ? locale.t('pay.form.amount_too_large', { max: locale.money(qr.max_amount_centavos) })
        : payFormMessage(locale, qr, 'amount');
  }
  return messages;
}
