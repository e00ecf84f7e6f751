// Internal purposes of QRs: another module registers a handler that runs inside the transaction of each
// payment of a QR created with that purpose (docs/architecture.md#seams), so onboarding depends on qr and never
// the reverse. The activation fee of onboarding is the first user.
import type { Transaction } from '../db/database.ts';
import type { PaymentRow, QrRow } from './store.ts';

export interface PurposePayment {
  qr: QrRow;
  payment: PaymentRow;
  now: Date;
}

/** Runs inside the payment's transaction; throwing rolls the whole payment back. */
export type PaymentPurposeHandler = (tx: Transaction, paid: PurposePayment) => Promise<void>;

const handlers = new Map<string, PaymentPurposeHandler>();

/** Registers the handler of `purpose` (lower-case letters and underscores, ≤ 40); a second registration replaces the first. */
export function registerPaymentPurpose(purpose: string, handler: PaymentPurposeHandler): void {
  if (!/^[a-z_]{1,40}$/.test(purpose)) throw new Error(`invalid QR purpose name: ${purpose}`);
  handlers.set(purpose, handler);
}

/** The handler of a QR's purpose; a QR whose purpose has no handler refuses payment loudly rather than lose the effect. */
export function purposeHandler(purpose: string): PaymentPurposeHandler {
  const handler = handlers.get(purpose);
  if (!handler) throw new Error(`no handler registered for QR purpose "${purpose}"`);
  return handler;
}
