// Internal purposes of QRs: another module provides a handler that runs inside the transaction of each
// payment of a QR created with that purpose (docs/architecture.md#seams), so onboarding depends on qr and
// never the reverse. The composition root (src/composition.ts) lists the purposes of the app; the
// activation fee of onboarding is the first one.
import type { Transaction } from '../db/database.ts';
import type { PaymentRow, QrRow } from './store.ts';

export interface PurposePayment {
  qr: QrRow;
  payment: PaymentRow;
  now: Date;
}

/** Runs inside the payment's transaction; throwing rolls the whole payment back. */
export type PaymentPurposeHandler = (tx: Transaction, paid: PurposePayment) => Promise<void>;

const PURPOSE_NAME = /^[a-z_]{1,40}$/;

export class PaymentPurposes {
  private readonly handlers: ReadonlyMap<string, PaymentPurposeHandler>;

  /** `handlers` by purpose name (lower-case letters and underscores, ≤ 40: the name is stored on the QR). */
  constructor(handlers: Readonly<Record<string, PaymentPurposeHandler>>) {
    for (const name of Object.keys(handlers)) if (!PURPOSE_NAME.test(name)) throw new Error(`invalid QR purpose name: ${name}`);
    this.handlers = new Map(Object.entries(handlers));
  }

  /** The handler of a QR's purpose; a QR whose purpose has no handler refuses payment loudly rather than lose the effect. */
  handlerOf(purpose: string): PaymentPurposeHandler {
    const handler = this.handlers.get(purpose);
    if (!handler) throw new Error(`no handler for QR purpose "${purpose}"`);
    return handler;
  }
}
