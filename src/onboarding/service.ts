// The rules of onboarding intents (docs/api-reference.md#onboarding): creation (idempotent), the effective status every read uses,
// the registration the hosted flow submits, completion — in the activation payment's transaction through
// the QR purpose hook, or at submission when the fee is 0 — cancel, expiry, and the partner's events.
import { createHash, hash } from 'node:crypto';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { Database, Queryable, Transaction } from '../db/database.ts';
import * as events from '../events/service.ts';
import { ApiError, notFound, validationError, type FieldError } from '../kernel/errors.ts';
import { runIdempotent, type IdempotencyScope, type IdempotentResult } from '../idempotency/service.ts';
import { randomBase62 } from '../ids.ts';
import type { PayInRail, SandboxPayer } from '../rails/pay-in.ts';
import * as merchants from '../merchants/service.ts';
import * as payouts from '../payouts/service.ts';
import type { PurposePayment } from '../qr/purposes.ts';
import * as qrs from '../qr/service.ts';
import type { CreateIntentBody } from './schemas.ts';
import { effectiveStatus } from './state.ts';
import * as store from './store.ts';
import { toIntentView } from './views.ts';
import type { IntentRow, Metadata, Registration } from './store.ts';

export type { IntentRow, IntentStatus, Metadata, Registration } from './store.ts';

export const CREATE_INTENT_ROUTE = 'POST /api/v2/onboarding/intent';
/** The QR purpose of activation fees: its handler completes the intent inside the payment's transaction. */
export const ACTIVATION_PURPOSE = 'onboarding_activation';
/** The platform's own merchant account (migration 001): it owns activation-fee QRs and collects the fees. */
export const PLATFORM_BUSINESS_CODE = 1000;

// ---------------------------------------------------------------------------------------------------
// Effective status and views

export function flowUrlOf(config: Pick<Config, 'publicBaseUrl'>, token: string): string {
  return `${config.publicBaseUrl.replace(/\/+$/, '')}/onboarding/${token}`;
}

// ---------------------------------------------------------------------------------------------------
// Create and read (partner API)

/** What the schema cannot say about a redirect URL: it must parse, with a host. */
/** A host name, IPv4 address or bracketed IPv6 address, as URL parsing leaves it (lower case, punycode). */
const PLAIN_HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\])$/;

/**
 * The origin of a partner's redirect URL when it is an absolute http(s) URL whose host is a plain name or
 * address, else null. URL parsing lets characters such as `;` through in a host, and the origin goes into
 * the flow pages' Content-Security-Policy: `https://a;frame-ancestors *` must never become a directive.
 */
export function redirectOriginOf(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!PLAIN_HOST.test(url.hostname) || url.username || url.password) return null;
  return url.origin;
}

function checkRedirectUrl(field: string, value: string | undefined, errors: FieldError[]): void {
  if (value === undefined || redirectOriginOf(value) !== null) return;
  errors.push({ field, code: 'invalid_format', message: 'must be an absolute http or https URL with a plain host name and no credentials' });
}

export async function createIntent(
  context: Pick<AppContext, 'db' | 'config' | 'secrets'>,
  partnerId: number,
  body: CreateIntentBody,
  idempotency: IdempotencyScope,
  now: Date,
): Promise<IdempotentResult> {
  const { db, config, secrets } = context;
  const errors: FieldError[] = [];
  checkRedirectUrl('success_url', body.success_url, errors);
  checkRedirectUrl('cancel_url', body.cancel_url, errors);
  if (errors.length > 0) throw validationError(errors);
  const request = { success_url: body.success_url ?? null, cancel_url: body.cancel_url ?? null, metadata: body.metadata ?? {} };
  const issued = { token: '' };
  const result = await runIdempotent(db, idempotency, request, now, async (tx) => {
    issued.token = randomBase62(32);
    const code = `onb_${randomBase62(22)}`;
    const intent = await store.insertIntent(tx, {
      code,
      partnerId,
      tokenHash: tokenHashOf(issued.token),
      tokenSealed: secrets.seal(issued.token, sealedTokenContext(code)),
      successUrl: request.success_url,
      cancelUrl: request.cancel_url,
      metadata: request.metadata as Metadata,
      expiresAt: new Date(now.getTime() + config.onboardingIntentTtlMs),
    }, now);
    // The stored answer (a plain row for 24 h) leaves the url out: it carries the flow's bearer token.
    return { statusCode: 201, body: { code: intent.code, expires_at: intent.expires_at.toISOString() } };
  });
  return withFlowUrl(context, partnerId, result, result.replayed ? null : issued.token);
}

/**
 * The answer with its url, the same on the first answer and on every replay (also after the intent
 * expired): a replay opens the token sealed on the intent. An answer stored before migration 015 holds its
 * url already and is sent as it was.
 */
async function withFlowUrl(
  { db, config, secrets }: Pick<AppContext, 'db' | 'config' | 'secrets'>,
  partnerId: number,
  result: IdempotentResult,
  freshToken: string | null,
): Promise<IdempotentResult> {
  const body = result.body as { code: string; expires_at: string; url?: string };
  if (result.statusCode !== 201 || body.url !== undefined) return result;
  let token = freshToken;
  if (token === null) {
    const sealed = await store.sealedTokenOfIntent(db, partnerId, body.code);
    if (!sealed) throw new Error(`onboarding intent ${body.code} has no sealed token to answer its replay with`);
    token = secrets.open(sealed, sealedTokenContext(body.code));
  }
  return { ...result, body: { code: body.code, url: flowUrlOf(config, token), expires_at: body.expires_at } };
}

/** The associated data of an intent's sealed token: the token opens on its own intent's row only. */
function sealedTokenContext(code: string): string {
  return `onboarding_intent:${code}`;
}

/** SHA-256 (hex) of a flow token, what the intent keeps; migration 015 computes the same in SQL. */
function tokenHashOf(token: string): string {
  return hash('sha256', token, 'hex');
}

export async function getIntentOfPartner(db: Queryable, partnerId: number, code: string): Promise<IntentRow> {
  const intent = /^onb_[0-9A-Za-z]{22}$/.test(code) ? await store.findIntentOfPartner(db, partnerId, code) : undefined;
  if (!intent) throw notFound('onboarding intent');
  return intent;
}

// ---------------------------------------------------------------------------------------------------
// The hosted flow

/** Once an intent is closed, its own copy of the payout account number is kept masked only. */
async function forgetFullAccountNumber(tx: Transaction, intent: IntentRow): Promise<void> {
  if (intent.payout_account_number !== null) {
    await store.maskPayoutAccountNumber(tx, intent.code, intent.payout_account_number.masked);
  }
}

/** An intent found by its flow token, with the token the request brought (the database keeps its hash only). */
export interface FlowIntent extends IntentRow {
  token: string;
}

export async function findIntentByToken(db: Queryable, token: string): Promise<FlowIntent | undefined> {
  if (!/^[0-9A-Za-z]{32}$/.test(token)) return undefined;
  const intent = await store.findIntentByTokenHash(db, tokenHashOf(token));
  return intent && { ...intent, token };
}

/** SHA-256 of the flow cookie: what the intent keeps to recognise the submitting browser. */
export function browserBindingHash(flowSecret: string): string {
  return createHash('sha256').update(`onboarding-flow\n${flowSecret}`).digest('hex');
}

/** The payment step of a submitted intent: its activation QR, or why it has none. */
export type PaymentStep =
  | { kind: 'awaiting_payment'; intent: IntentRow }
  /**
   * A bank's rail refused the activation QR or did not answer: the registration is kept, the intent has no
   * activation QR yet, and opening the payment step again issues it (preparePaymentStep).
   */
  | { kind: 'payment_unprepared'; intent: IntentRow }
  /** The form was submitted already (a double submit) or the intent closed meanwhile. */
  | { kind: 'not_open'; intent: IntentRow };

export type SubmitOutcome = PaymentStep | { kind: 'completed'; intent: IntentRow };

/**
 * Stores the registration (once: a guarded update) and then either creates the activation-fee QR, or —
 * with a fee of 0 — creates the merchant and completes the intent in the same transaction. The intent is
 * bound to `flowSecret`, a secret the caller issues for this post (never one a browser brought: a cookie
 * planted before the form would otherwise be the one the done page gives the key to). On the sandbox the
 * service draws the QR itself, in the registration's transaction; a bank's QR comes after it (submitOnBankRail).
 */
export async function submitRegistration(
  context: Pick<AppContext, 'db' | 'config' | 'merchantDisplays' | 'rail'>,
  token: string,
  registration: Registration,
  flowSecret: string,
  now: Date,
): Promise<SubmitOutcome> {
  const { db, config } = context;
  const payIn = context.rail?.payIn ?? null;
  if (payIn !== null) return submitOnBankRail(context, payIn, token, registration, flowSecret, now);
  return db.transaction(async (tx): Promise<SubmitOutcome> => {
    const stored = await storeRegistration(tx, config, token, registration, flowSecret, now);
    if (stored.kind !== 'stored') return stored;
    const submitted = stored.intent;
    const { qr } = await qrs.createQrWithPurpose(tx, context, PLATFORM_BUSINESS_CODE, activationQrInput(submitted, config, now), ACTIVATION_PURPOSE, now);
    await store.setActivationQr(tx, submitted.code, qr.id);
    return { kind: 'awaiting_payment', intent: { ...submitted, activation_qr_id: qr.id } };
  });
}

/**
 * The registration's guarded update, inside `tx`; with a fee of 0 the merchant too. `stored`: the intent
 * now awaits its activation QR.
 */
async function storeRegistration(
  tx: Transaction,
  config: Pick<Config, 'onboardingActivationFeeCentavos' | 'defaultPricePlan'>,
  token: string,
  registration: Registration,
  flowSecret: string,
  now: Date,
): Promise<SubmitOutcome | { kind: 'stored'; intent: IntentRow }> {
  const submitted = await store.submitRegistration(tx, tokenHashOf(token), registration, browserBindingHash(flowSecret), now);
  if (!submitted) {
    const current = await store.findIntentByTokenHash(tx, tokenHashOf(token));
    if (!current) throw notFound('onboarding intent');
    return { kind: 'not_open', intent: current };
  }
  if (config.onboardingActivationFeeCentavos === 0) {
    return { kind: 'completed', intent: await completeWithMerchant(tx, config, submitted, now) };
  }
  return { kind: 'stored', intent: submitted };
}

/** The activation-fee QR of a submitted intent: the fee, single use, lapsing with the intent. */
function activationQrInput(intent: IntentRow, config: Pick<Config, 'onboardingActivationFeeCentavos'>, now: Date): qrs.CreateQrInput {
  // QR expirations reach at most 365 days ahead (docs/api-reference.md#create-a-qr); an intent TTL beyond that is cut there.
  const minutesLeft = Math.min(365 * 24 * 60, Math.max(1, Math.ceil((intent.expires_at.getTime() - now.getTime()) / 60_000)));
  return {
    amountCentavos: config.onboardingActivationFeeCentavos,
    modifyAmount: false,
    isMultiUse: false,
    description: `Activation fee — ${intent.trade_name ?? ''}`.slice(0, 140),
    // the QR lapses with the intent (rounded up to the minute); the purpose handler refuses a late payment anyway
    qrExpiration: `+${minutesLeft}m`,
  };
}

/**
 * The submission on a bank's rail, whose call never runs inside a transaction (it may take seconds):
 * (1) the registration is stored in its own transaction, guarded as on the sandbox; (2) the bank issues the
 * activation QR, outside any transaction, and (3) it is stored and attached in another (issueActivationQr).
 * A bank that refuses or does not answer loses nothing: the intent stays submitted without a QR.
 */
async function submitOnBankRail(
  context: Pick<AppContext, 'db' | 'config'>,
  payIn: PayInRail,
  token: string,
  registration: Registration,
  flowSecret: string,
  now: Date,
): Promise<SubmitOutcome> {
  const stored = await context.db.transaction((tx) => storeRegistration(tx, context.config, token, registration, flowSecret, now));
  if (stored.kind !== 'stored') return stored;
  return issueActivationQr(context, payIn, stored.intent, now);
}

/**
 * The payment step of a submitted intent that is open. On a bank's rail an intent left without its
 * activation QR (the submission's bank call was refused or unanswered) gets it now: opening the payment
 * step again is the retry. Otherwise nothing is called.
 */
export async function preparePaymentStep(context: Pick<AppContext, 'db' | 'config' | 'rail'>, intent: IntentRow, now: Date): Promise<PaymentStep> {
  const payIn = context.rail?.payIn ?? null;
  if (intent.activation_qr_id !== null || payIn === null) return { kind: 'awaiting_payment', intent };
  return issueActivationQr(context, payIn, intent, now);
}

/** Thrown inside the activation QR's transaction when the intent took another QR first, or closed. */
class ActivationQrNotAttached extends Error {}

/**
 * Steps (2) and (3) on a bank's rail: the bank issues the QR (outside any transaction), then the QR is
 * inserted and attached to the intent in one transaction. The attach is guarded (an open intent without an
 * activation QR): of two retries racing, one attaches its QR and the other's transaction rolls back, its
 * bank QR handed to the cancel queue (qrs.createBankQrWithPurpose) — as is one whose write failed.
 */
async function issueActivationQr(context: Pick<AppContext, 'db' | 'config'>, payIn: PayInRail, intent: IntentRow, now: Date): Promise<PaymentStep> {
  try {
    const attached = await qrs.createBankQrWithPurpose(context, payIn, PLATFORM_BUSINESS_CODE, activationQrInput(intent, context.config, now),
      ACTIVATION_PURPOSE, now, async (tx, { qr }) => {
        const updated = await store.attachActivationQr(tx, intent.code, qr.id, now);
        if (!updated) throw new ActivationQrNotAttached();
        return updated;
      });
    return { kind: 'awaiting_payment', intent: attached };
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'RAIL_REFUSED' || error.code === 'RAIL_UNAVAILABLE')) {
      return { kind: 'payment_unprepared', intent };
    }
    if (!(error instanceof ActivationQrNotAttached)) throw error;
  }
  // Lost the race: the winner's QR is the one to pay, unless the intent closed meanwhile.
  const current = (await store.findIntentByCode(context.db, intent.code))!;
  const payable = effectiveStatus(current, now) === 'open' && current.activation_qr_id !== null;
  return { kind: payable ? 'awaiting_payment' : 'not_open', intent: current };
}

/**
 * Creates the merchant of a submitted intent and completes the intent, with its event, inside `tx`. The
 * guarded transition decides: a second completer finds the intent no longer open and rolls back.
 */
async function completeWithMerchant(tx: Transaction, config: Pick<Config, 'defaultPricePlan'>, intent: IntentRow, now: Date): Promise<IntentRow> {
  // An open intent with a registration holds the full number (the database's submission check and the
  // masking of closed intents only); a masked copy must never become a payout account.
  if (intent.payout_account_number === null) throw new Error(`intent ${intent.code} has no full payout account number to complete with`);
  const merchant = await merchants.createRegisteredMerchant(tx, {
    name: intent.trade_name!,
    city: intent.city!,
    mcc: intent.mcc ?? undefined,
    achEnabled: false,
    partnerId: intent.partner_id,
    plan: config.defaultPricePlan,
    profile: { legalName: intent.legal_name!, taxId: intent.tax_id!, email: intent.email!, phone: intent.phone! },
    payoutAccount: {
      bankCode: intent.payout_bank_code!,
      accountNumber: intent.payout_account_number,
      accountHolder: intent.payout_account_holder!,
    },
  }, now);
  // It starts with a manual payout schedule to that account, which the operator can switch on (docs/payouts.md).
  await payouts.startManualSchedule(tx, merchant.business_code, {
    bankCode: intent.payout_bank_code!,
    accountNumber: intent.payout_account_number,
    accountTitular: intent.payout_account_holder!,
  }, now);
  const completed = await store.completeIntent(tx, intent.code, merchant.business_code, now);
  if (!completed) throw new ApiError('QR_NOT_PAYABLE', { message: 'This onboarding link is no longer open.' });
  await forgetFullAccountNumber(tx, completed);
  await events.emit(tx, { kind: 'partner', partnerId: completed.partner_id }, 'onboarding_intent.completed', toIntentView(completed, now), now);
  return completed;
}

/**
 * The activation fee's purpose handler, inside the payment's transaction: the intent must still be open
 * (not expired, not cancelled, not completed), else the payment is refused and no money moves. The
 * composition root registers it for ACTIVATION_PURPOSE. The refusal is 409 QR_NOT_PAYABLE: what is refused
 * is a payment of the activation QR, which is that code's meaning; the contract's catalogue has no
 * onboarding code, and the flow's pages answer a closed link with their own 410 page, never this code.
 */
export async function completeByActivationPayment(tx: Transaction, config: Pick<Config, 'defaultPricePlan'>, paid: PurposePayment): Promise<void> {
  const intent = await store.lockOpenIntentOfActivationQr(tx, paid.qr.id, paid.now);
  if (!intent) throw new ApiError('QR_NOT_PAYABLE', { message: 'This onboarding link has expired, was cancelled or is already used.' });
  await completeWithMerchant(tx, config, intent, paid.now);
}

/** Thrown inside the cancel transaction to undo the QR's cancel when the intent turned out closed. */
class IntentNotOpen extends Error {}

/**
 * Cancel from any step: open → cancelled with its event; the activation QR, if any, is canceled too. Locks
 * in the order a payment takes them — the QR row first, then the intent — so a payment racing a cancel
 * waits for it instead of deadlocking; whichever commits first wins and the other changes nothing.
 */
export async function cancelByToken(db: Database, config: Pick<Config, 'publicBaseUrl'>, token: string, now: Date): Promise<IntentRow | undefined> {
  try {
    return await db.transaction(async (tx) => {
      const current = await store.findIntentByTokenHash(tx, tokenHashOf(token));
      if (!current) throw new IntentNotOpen();
      if (current.activation_qr_id) {
        await tx.query('savepoint cancel_activation_qr');
        try {
          await qrs.cancelQrIn(tx, config, PLATFORM_BUSINESS_CODE, current.activation_qr_id, now);
        } catch (error) {
          // Already paid or lapsed: the guarded intent update below decides.
          if (!(error instanceof ApiError)) throw error;
          await tx.query('rollback to savepoint cancel_activation_qr');
        }
      }
      const intent = await store.cancelIntent(tx, tokenHashOf(token), now);
      if (!intent) throw new IntentNotOpen();
      await forgetFullAccountNumber(tx, intent);
      await events.emit(tx, { kind: 'partner', partnerId: intent.partner_id }, 'onboarding_intent.cancelled', toIntentView(intent, now), now);
      return intent;
    });
  } catch (error) {
    if (error instanceof IntentNotOpen) return undefined;
    throw error;
  }
}

/**
 * The done page's first visit by the submitting browser: creates the merchant's first API key, once.
 * Undefined for any other visit (another browser, a second visit, an intent not completed).
 */
export async function issueFirstApiKey(
  db: Database,
  config: Pick<Config, 'mode'>,
  token: string,
  flowSecret: string | null,
  now: Date,
): Promise<{ intent: IntentRow; apiKey: string; keyPrefix: string } | undefined> {
  if (flowSecret === null) return undefined;
  return db.transaction(async (tx) => {
    const current = await store.findIntentByTokenHash(tx, tokenHashOf(token));
    if (!current || current.browser_binding_hash !== browserBindingHash(flowSecret)) return undefined;
    const intent = await store.markApiKeyIssued(tx, tokenHashOf(token), now);
    if (!intent) return undefined;
    const key = await merchants.createMerchantApiKeyIn(tx, intent.business_code!, config.mode, now);
    return { intent, ...key };
  });
}

/** Sandbox "Simulate payment" on the activation step: a payer's bank pays the activation QR. */
export async function simulateActivationPayment(
  context: Pick<AppContext, 'db' | 'config' | 'purposes'>,
  payer: SandboxPayer,
  intent: IntentRow,
  now: Date,
): Promise<void> {
  if (!intent.activation_qr_id) throw new ApiError('QR_NOT_PAYABLE', { message: 'There is no activation payment to make.' });
  await qrs.receivePayment(context, payer.toNotice({
    qrId: intent.activation_qr_id,
    businessCode: PLATFORM_BUSINESS_CODE,
    amountCentavos: null,
    accountTitular: intent.legal_name ?? undefined,
  }), now);
}

export async function findActivationQr(db: Queryable, intent: IntentRow): Promise<qrs.QrWithLastPayment | undefined> {
  return intent.activation_qr_id ? qrs.findQrById(db, intent.activation_qr_id) : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Expiry

/** Records up to `limit` intents past their expiry as expired with their onboarding_intent.expired events; returns how many. */
export async function sweepExpiredIntents(db: Database, now: Date, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const expired = await store.expireDueIntents(tx, now, limit);
    for (const intent of expired) {
      await forgetFullAccountNumber(tx, intent);
      await events.emit(tx, { kind: 'partner', partnerId: intent.partner_id }, 'onboarding_intent.expired', toIntentView(intent, now), now);
    }
    return expired.length;
  });
}
