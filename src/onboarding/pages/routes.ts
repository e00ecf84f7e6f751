// Routes of the hosted onboarding flow (docs/api-reference.md#hosted-onboarding-flow), no API key: the token in the URL finds the intent,
// the flow cookie carries the CSRF secret and binds the submitting browser. Every URL of a closed intent
// answers 410; an unknown token 404. Post/redirect/get after every successful POST, but one: a registration
// stored while a bank's rail issued no activation QR answers the payment step itself (503, "try again").
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sandboxHelpersOf, type CapabilityRoutes } from '../../context.ts';
import { acceptFormPostsOnly } from '../../kernel/forms.ts';
import { ApiError } from '../../kernel/errors.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { basePathOf, hostedPage, pageLocale, sendPage } from '../../kernel/page-kit.ts';
import { configuredBanks } from '../../transfers/banks.ts';
import * as onboarding from '../service.ts';
import { csrfTokenOf, flowCookieHeader, flowSecretOf, isValidCsrfToken, newFlowSecret } from './flow-cookie.ts';
import { emptyForm, readForm, registrationCheck, type FormErrors, type FormValues } from './registration-form.ts';
import {
  renderCancelledPage, renderCookieProblemPage, renderDonePage, renderFormPage, renderGonePage, renderNotFoundPage,
  renderPaymentPage, type GoneReason,
} from './views.ts';
import { effectiveStatus } from '../state.ts';

const TokenParams = Type.Object({ token: Type.String() });
const GONE_REASON: Record<'expired' | 'cancelled' | 'completed', GoneReason> = { expired: 'expired', cancelled: 'cancelled', completed: 'used' };

export const onboardingPages: CapabilityRoutes = async (app, context) => {
  const { config, db, clock } = context;
  const pageRoute = hostedPage(config.publicBaseUrl);
  // "Simulate payment" on the activation step: MODE=sandbox on the sandbox rail only.
  const sandboxHelpers = sandboxHelpersOf(context);
  const sandbox = sandboxHelpers !== null;
  const banks = configuredBanks(config);
  const checkRegistration = registrationCheck(banks);
  const secureCookie = config.publicBaseUrl.startsWith('https:');
  const basePath = basePathOf(config.publicBaseUrl); // the flow cookie's scope is the path the browser sees

  acceptFormPostsOnly(app);

  /**
   * A flow page in the visitor's language; its forms may also post to the cancel_url's origin (the cancel
   * POST redirects there). Its language switch leads to the flow's page (every post answers under another
   * URL); the done page, which shows the key once, has none.
   */
  const sendFlowPage = (request: FastifyRequest, reply: FastifyReply, status: number, intent: onboarding.FlowIntent | null,
    render: (locale: Locale, nonce: string) => string, options: { languageSwitch: boolean } = { languageSwitch: true }) => {
    const token = (request.params as { token: string }).token;
    const locale = pageLocale(request, config.serviceTimeZone, options.languageSwitch ? `/onboarding/${encodeURIComponent(token)}` : null);
    const cancelOrigin = intent?.cancel_url ? onboarding.redirectOriginOf(intent.cancel_url) : null;
    return sendPage(reply, status, locale, (nonce) => render(locale, nonce), { formActionOrigins: cancelOrigin ? [cancelOrigin] : [] });
  };
  const notFoundPage = (request: FastifyRequest, reply: FastifyReply) => sendFlowPage(request, reply, 404, null, renderNotFoundPage);
  const gonePage = (request: FastifyRequest, reply: FastifyReply, status: 'expired' | 'cancelled' | 'completed') =>
    sendFlowPage(request, reply, 410, null, (locale, nonce) => renderGonePage(locale, nonce, GONE_REASON[status]));
  /** Where to send the browser next, keeping a language chosen with ?lang=. */
  const redirect = (request: FastifyRequest, reply: FastifyReply, path: string) =>
    reply.code(303).header('location', pageLocale(request, config.serviceTimeZone).href(path)).send();

  /**
   * The intent of the URL while it is open; otherwise the 404 / 410 page has been sent and null comes back.
   * With `completedToDone`, a completed intent redirects to its done page instead: a form sent twice (a
   * double click, a second tab) whose twin completed the intent first follows it there, as one that lost
   * the race inside the transaction does; the done page shows the key only to the browser it belongs to.
   */
  const openIntent = async (
    request: FastifyRequest, reply: FastifyReply, token: string, now: Date, { completedToDone = false } = {},
  ): Promise<onboarding.FlowIntent | null> => {
    const intent = await onboarding.findIntentByToken(db, token);
    if (!intent) {
      await notFoundPage(request, reply);
      return null;
    }
    const status = effectiveStatus(intent, now);
    if (status === 'completed' && completedToDone) {
      await redirect(request, reply, `/onboarding/${intent.token}/done`);
      return null;
    }
    if (status !== 'open') {
      await gonePage(request, reply, status);
      return null;
    }
    return intent;
  };

  /** The browser's flow secret, or a new one set as the flow cookie. */
  const ensureFlowSecret = (request: FastifyRequest, reply: FastifyReply, intent: onboarding.FlowIntent, now: Date): string => {
    const existing = flowSecretOf(request.headers.cookie);
    if (existing) return existing;
    const secret = newFlowSecret();
    reply.header('set-cookie', flowCookieHeader(secret, basePath, intent.token, intent.expires_at, now, secureCookie));
    return secret;
  };

  /** The checked flow secret of a POST, or null after sending the 403 page (missing cookie or wrong CSRF field). */
  const checkedSecret = async (request: FastifyRequest, reply: FastifyReply, intent: onboarding.FlowIntent): Promise<string | null> => {
    const secret = flowSecretOf(request.headers.cookie);
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (isValidCsrfToken(secret, intent.token, body.csrf_token)) return secret;
    await sendFlowPage(request, reply, 403, intent, (locale, nonce) => renderCookieProblemPage(locale, nonce, intent.token));
    return null;
  };

  const showForm = (request: FastifyRequest, reply: FastifyReply, status: number, intent: onboarding.FlowIntent, secret: string,
    values: FormValues, errors: FormErrors) =>
    sendFlowPage(request, reply, status, intent, (locale, nonce) => renderFormPage({
      locale, nonce, intent, token: intent.token, csrf: csrfTokenOf(secret, intent.token), values,
      errors, banks, feeCentavos: config.onboardingActivationFeeCentavos, now: clock.now(),
    }));

  /** The payment step; `unprepared`: a bank's rail issued no activation QR yet, and the page offers to try again. */
  const showPayment = async (request: FastifyRequest, reply: FastifyReply, status: number, intent: onboarding.FlowIntent, secret: string,
    { error, unprepared = false }: { error?: 'onboarding.payment.not_accepted'; unprepared?: boolean } = {}) => {
    const qr = await onboarding.findActivationQr(db, intent);
    const bankName = banks.find((bank) => bank.bankCode === intent.payout_bank_code)?.name ?? String(intent.payout_bank_code);
    return sendFlowPage(request, reply, status, intent, (locale, nonce) => renderPaymentPage({
      locale, nonce, intent, token: intent.token, csrf: csrfTokenOf(secret, intent.token), qrImage: qr?.qr.qr_image ?? null,
      feeCentavos: qr?.qr.amount_centavos ?? config.onboardingActivationFeeCentavos, bankName, sandbox, now: clock.now(),
      error: error && locale.t(error), unprepared,
    }));
  };

  /**
   * The payment step of a submitted intent. On a bank's rail, an intent still without its activation QR
   * gets it now (the retry of a refused or unanswered bank call); 503 with the offer to try again when the
   * bank refuses or does not answer again.
   */
  const showPaymentStep = async (request: FastifyRequest, reply: FastifyReply, intent: onboarding.FlowIntent, secret: string, now: Date) => {
    const step = await onboarding.preparePaymentStep(context, intent, now);
    // Closed while its QR was being issued (a cancel in another tab): the URL's own page says so.
    if (step.kind === 'not_open') return redirect(request, reply, `/onboarding/${intent.token}`);
    const unprepared = step.kind === 'payment_unprepared';
    return showPayment(request, reply, unprepared ? 503 : 200, { ...step.intent, token: intent.token }, secret, { unprepared });
  };

  const hidden = { tags: ['hosted pages'], params: TokenParams, hide: true };

  app.get('/onboarding/:token', { schema: { ...hidden, summary: 'Hosted onboarding: the current step (HTML)' }, config: pageRoute }, async (request, reply) => {
    const now = clock.now();
    const intent = await openIntent(request, reply, request.params.token, now);
    if (!intent) return reply;
    const secret = ensureFlowSecret(request, reply, intent, now);
    if (intent.submitted_at === null) return showForm(request, reply, 200, intent, secret, emptyForm(), {});
    return showPaymentStep(request, reply, intent, secret, now);
  });

  app.post('/onboarding/:token', { schema: { ...hidden, summary: 'Hosted onboarding: submit the registration form' }, config: pageRoute }, async (request, reply) => {
    const now = clock.now();
    const intent = await openIntent(request, reply, request.params.token, now, { completedToDone: true });
    if (!intent) return reply;
    // Sent again after the form was stored (a second tab, whose field was made for the cookie the post
    // replaced): nothing to change, so no CSRF check is needed to show the next step.
    if (intent.submitted_at !== null) return redirect(request, reply, `/onboarding/${intent.token}`);
    const secret = await checkedSecret(request, reply, intent);
    if (!secret) return reply;
    const values = readForm((request.body ?? {}) as Record<string, unknown>);
    const checked = checkRegistration(values, pageLocale(request, config.serviceTimeZone));
    if ('errors' in checked) return showForm(request, reply, 422, intent, secret, values, checked.errors);
    // The browser is bound to the intent with a secret issued now, never the cookie it brought: any
    // well-formed cookie passes the CSRF check, and one planted before the form (a sibling domain, a
    // shared machine) would take the merchant's first key on the done page (session fixation).
    const bound = newFlowSecret();
    const outcome = await onboarding.submitRegistration(context, intent.token, checked.registration, bound, now);
    if (outcome.kind !== 'not_open') reply.header('set-cookie', flowCookieHeader(bound, basePath, intent.token, intent.expires_at, now, secureCookie));
    // Stored, but the bank issued no activation QR: this answer is the payment step with the offer to try
    // again, rather than a redirect whose page would call the bank again at once (twice the wait for nothing).
    if (outcome.kind === 'payment_unprepared') {
      return showPayment(request, reply, 503, { ...outcome.intent, token: intent.token }, bound, { unprepared: true });
    }
    // A double submit lands here too: the loser follows the winner to the next step.
    const next = outcome.intent.status === 'completed' ? `/onboarding/${intent.token}/done` : `/onboarding/${intent.token}`;
    return redirect(request, reply, next);
  });

  app.post('/onboarding/:token/cancel', { schema: { ...hidden, summary: 'Hosted onboarding: cancel' }, config: pageRoute }, async (request, reply) => {
    const now = clock.now();
    const intent = await openIntent(request, reply, request.params.token, now);
    if (!intent) return reply;
    if (!(await checkedSecret(request, reply, intent))) return reply;
    const cancelled = await onboarding.cancelByToken(db, config, intent.token, now);
    if (!cancelled) {
      const current = (await onboarding.findIntentByToken(db, intent.token))!;
      return gonePage(request, reply, effectiveStatus(current, clock.now()) as 'expired' | 'cancelled' | 'completed');
    }
    // The parsed form: percent-encoded ASCII, whatever the partner typed (a header cannot carry raw Unicode).
    if (cancelled.cancel_url) return reply.code(303).header('location', new URL(cancelled.cancel_url).href).send();
    return sendFlowPage(request, reply, 200, null, renderCancelledPage);
  });

  app.get('/onboarding/:token/done', { schema: { ...hidden, summary: 'Hosted onboarding: the first API key, once' }, config: pageRoute }, async (request, reply) => {
    const now = clock.now();
    const intent = await onboarding.findIntentByToken(db, request.params.token);
    if (!intent) return notFoundPage(request, reply);
    const status = effectiveStatus(intent, now);
    if (status === 'open') return redirect(request, reply, `/onboarding/${intent.token}`); // not paid yet
    if (status !== 'completed') return gonePage(request, reply, status);
    const issued = await onboarding.issueFirstApiKey(db, config, intent.token, flowSecretOf(request.headers.cookie), now);
    if (!issued) return gonePage(request, reply, 'completed');
    let successLink: string | null = null;
    if (issued.intent.success_url) {
      const url = new URL(issued.intent.success_url);
      url.searchParams.set('code', issued.intent.code);
      successLink = url.toString();
    }
    return sendFlowPage(request, reply, 200, null, (locale, nonce) => renderDonePage({
      locale, nonce, merchantName: issued.intent.trade_name!, businessCode: issued.intent.business_code!, apiKey: issued.apiKey,
      successLink, withPayment: issued.intent.activation_qr_id !== null,
    }), { languageSwitch: false });
  });

  app.get('/onboarding/:token/status', { schema: { ...hidden, summary: 'Hosted onboarding: status for the payment step (JSON)' } }, async (request, reply) => {
    const intent = await onboarding.findIntentByToken(db, request.params.token);
    if (!intent) return reply.code(404).header('cache-control', 'no-store').send({ status: 'not_found' });
    const status = effectiveStatus(intent, clock.now());
    return reply.code(status === 'open' ? 200 : 410).header('cache-control', 'no-store').send({ status });
  });

  if (!sandboxHelpers) return; // live mode, or a bank's rail: payments come from payers' banks only

  app.post('/onboarding/:token/simulate-payment', { schema: { ...hidden, summary: 'Sandbox: pay the activation fee' }, config: pageRoute }, async (request, reply) => {
    const now = clock.now();
    const intent = await openIntent(request, reply, request.params.token, now, { completedToDone: true });
    if (!intent) return reply;
    const secret = await checkedSecret(request, reply, intent);
    if (!secret) return reply;
    if (intent.submitted_at === null) return redirect(request, reply, `/onboarding/${intent.token}`);
    try {
      await onboarding.simulateActivationPayment(context, sandboxHelpers.payer, intent, now);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'QR_NOT_PAYABLE') throw error;
      const current = (await onboarding.findIntentByToken(db, intent.token))!;
      const status = effectiveStatus(current, clock.now());
      if (status === 'completed') return redirect(request, reply, `/onboarding/${intent.token}/done`);
      if (status !== 'open') return gonePage(request, reply, status);
      return showPayment(request, reply, 409, current, secret, { error: 'onboarding.payment.not_accepted' });
    }
    return redirect(request, reply, `/onboarding/${intent.token}/done`);
  });
};
