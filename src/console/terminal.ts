// The POS terminal of the console (docs/console.md#pos-terminal; contract §13): what the terminal's pages ask of
// the QR capability, in the console's terms. It holds no SQL and no rule of its own about QRs: a charge is a
// QR made by the API's own create (qr/service.ts createQr: its checks, its events, the rail in force — on a
// bank's rail the bank issues it), a cancel is the API's cancel, and the status is read through the QR read
// side every long poll shares (qr/watch.ts), so a payment recorded by any process wakes the terminal at once.
import type { AppContext } from '../context.ts';
import type { IdempotencyScope } from '../idempotency/service.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import { getMerchant } from '../merchants/service.ts';
import { formatCentavos } from '../money.ts';
import type { CreateQrBody, QrView } from '../qr/schemas.ts';
import * as qrs from '../qr/service.ts';
import { effectiveState } from '../qr/state.ts';
import { holdWhileUnchanged } from '../qr/watch.ts';
import { formatWallClock } from '../time.ts';
import { createHash } from 'node:crypto';

/** The idempotency route of the terminal's charges: its keys never meet the API's (POST /api/v2/simple-qrs). */
export const TERMINAL_CHARGE_ROUTE = 'POST /console/terminal';
/** Every terminal QR is single use and expires five minutes after it is made (§13). */
export const TERMINAL_EXPIRY = '+5m';
/** How long a second tap of "Cobrar" waits for the first to finish before it gives up (it then replays it). */
const KEY_IN_USE_RETRIES = 40;
const KEY_IN_USE_PAUSE_MS = 100;

export type TerminalContext = Pick<AppContext, 'db' | 'config' | 'merchantDisplays' | 'rail' | 'clock' | 'qrReads' | 'renderQrImage'>;

export interface Charge {
  /** The amount as the API takes it (`12.50`), checked by the API's schema already (terminal-form.ts). */
  amount: string;
  description: string | undefined;
  /** The form's idempotency key (a UUID v4 minted with the keypad page). */
  key: string;
}

/** The body of the API request a terminal charge is: the same schema checks it (terminal-form.ts). */
export function chargeBody(businessCode: number, amount: string, description: string | undefined): CreateQrBody {
  return { business_code: businessCode, amount, qr_expiration: TERMINAL_EXPIRY, ...(description === undefined ? {} : { description }) };
}

/**
 * Makes the QR of a charge, once per form: a second submit of the same form (a double tap, a reload of the
 * post) replays the first QR. While the first is still being made its key is locked (IDEMPOTENCY_KEY_IN_USE);
 * the second waits for it rather than showing the cashier an error, then replays it. Returns the QR's id.
 */
export async function chargeAtTerminal(context: TerminalContext, businessCode: number, charge: Charge): Promise<string> {
  // The API admits no key of a suspended merchant (MERCHANT_SUSPENDED); a console session does not get round that.
  if ((await getMerchant(context.db, businessCode)).status === 'suspended') throw new ApiError('MERCHANT_SUSPENDED');
  const idempotency: IdempotencyScope = {
    caller: `merchant:${businessCode}`, // the merchant's scope, as kernel/principal.ts callerScope writes it
    route: TERMINAL_CHARGE_ROUTE,
    key: charge.key,
  };
  const body = chargeBody(businessCode, charge.amount, charge.description);
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await qrs.createQr(context, { businessCode, body, idempotency }, context.clock.now(), context.renderQrImage);
      return (result.body as QrView).id;
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'IDEMPOTENCY_KEY_IN_USE' || attempt >= KEY_IN_USE_RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, KEY_IN_USE_PAUSE_MS));
    }
  }
}

/** The merchant's QR of `qrId` through the shared read cache; another merchant's or an unknown one is 404. */
export async function terminalQrOf(context: TerminalContext, businessCode: number, qrId: string): Promise<qrs.QrWithLastPayment> {
  const id = qrId.toLowerCase(); // cached and notified under the id as stored
  const found = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) ? await context.qrReads.watcher.readById(id) : undefined;
  if (!found || found.qr.business_code !== businessCode) throw notFound('QR');
  return found;
}

/** What the terminal's QR screen shows and polls: no payer details (the receipt has them). */
export interface TerminalStatus {
  status: 'ACTIVE' | 'PAID' | 'CANCELED';
  cancel_reason: 'merchant' | 'expired' | null;
  /** `12.50`: asked while ACTIVE, collected once PAID. */
  amount: string | null;
  expires_at: string | null;
  paid_at: string | null;
  /** The hosted receipt of the QR's payment once PAID (/pay/{token}/receipt), else null. */
  receipt_path: string | null;
}

export function terminalStatusOf({ qr }: qrs.QrWithLastPayment, now: Date): TerminalStatus {
  const state = effectiveState(qr, now);
  const paid = qr.paid_at !== null;
  const amountCentavos = paid ? qr.amount_collected_centavos : qr.amount_centavos;
  return {
    status: state.status,
    cancel_reason: state.cancelReason,
    amount: amountCentavos === null ? null : formatCentavos(amountCentavos),
    expires_at: qr.expires_at?.toISOString() ?? null,
    paid_at: qr.paid_at?.toISOString() ?? null,
    receipt_path: paid ? `/pay/${qr.pay_token}/receipt` : null,
  };
}

/** A strong ETag of exactly what the terminal shows. */
export function terminalStatusTag(status: TerminalStatus): string {
  return `"${createHash('sha256').update(JSON.stringify(status)).digest('base64url').slice(0, 22)}"`;
}

/**
 * The long poll of the QR screen (`?wait=N`), the API's mechanism (qr/watch.ts holdWhileUnchanged): held
 * while the QR is ACTIVE and its status is what the terminal holds (If-None-Match, or what it was at
 * arrival), woken by the QR's change notification, its expiry or the wait's end.
 */
export async function waitForTerminalStatus(
  context: TerminalContext, businessCode: number, qrId: string, heldTag: string | undefined, waitSeconds: number | undefined,
): Promise<TerminalStatus> {
  let found = await terminalQrOf(context, businessCode, qrId);
  let now = context.clock.now();
  if (waitSeconds !== undefined) {
    const tagOf = (qr: qrs.QrWithLastPayment, at: Date) => terminalStatusTag(terminalStatusOf(qr, at));
    const { watcher } = context.qrReads;
    ({ found, now } = await holdWhileUnchanged(watcher, context.clock, found, heldTag ?? tagOf(found, now), waitSeconds,
      () => watcher.readById(found.qr.id), tagOf));
  }
  return terminalStatusOf(found, now);
}

/** Cancels an ACTIVE QR of the merchant (the API's cancel: its event, the bank's cancel). False when it was paid or closed already. */
export async function cancelTerminalQr(context: TerminalContext, businessCode: number, qrId: string): Promise<boolean> {
  await terminalQrOf(context, businessCode, qrId); // 404 first: another merchant's QR is not found
  try {
    await qrs.cancelQr(context.db, context.config, businessCode, qrId.toLowerCase(), context.clock.now());
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === 'QR_NOT_CANCELABLE') return false;
    throw error;
  }
}

/** The terminal's list: the newest QRs of the merchant, this many at most. */
export const TODAY_LIMIT = 100;

/**
 * Today's QRs of the merchant (the day of SERVICE_TIMEZONE), newest first: the first TODAY_LIMIT QRs of the
 * API's list (the list has no date filter), kept while they were made today. `more` says the day may have
 * had more than the page shows.
 */
export async function todaysQrs(context: TerminalContext, businessCode: number): Promise<{ qrs: qrs.QrWithLastPayment[]; now: Date; more: boolean }> {
  const now = context.clock.now();
  const zone = context.config.serviceTimeZone;
  const today = formatWallClock(now, zone).slice(0, 10);
  const page = await qrs.listQrsOfMerchant(context.db, businessCode, { status: null, externalReference: null }, now, { page: 1, perPage: TODAY_LIMIT });
  const kept = page.items.filter(({ qr }) => formatWallClock(qr.created_at, zone).slice(0, 10) === today);
  return { qrs: kept, now, more: kept.length === TODAY_LIMIT && page.total > TODAY_LIMIT };
}
