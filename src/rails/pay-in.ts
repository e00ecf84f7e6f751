// Pay-in through a rail (docs/rails.md): how payments reach the domain, and how refunds go back. Every
// channel — a bank's callback or status read, the sandbox's helpers and hosted form — turns its own input
// into one PaymentNotice, and qr/service.receivePayment applies the same rules to all of them.
import type { FullAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';
import type { RailFailureCode } from './failures.ts';
import type { RailName } from './names.ts';

export interface Payer {
  sourceBank: string;
  /** Full account number: stored with the payment, shown and sent only masked. */
  accountNumber: FullAccountNumber;
  accountTitular: string;
}

export interface PaymentNotice {
  qrId: string;
  /** When set, the QR must belong to this merchant (a merchant's own sandbox call); else any owner. */
  businessCode: number | null;
  /** The amount paid; null lets the QR decide (its fixed amount, or the suggested one when editable). */
  amountCentavos: Centavos | null;
  payer: Payer;
  /** The rail it came through, and the bank's transaction id (null on the sandbox): one payment per id, ever. */
  rail: RailName;
  railReference: string | null;
}

/** What a rail needs to send a refund back to the payer who paid. The account number is the full one. */
export interface RefundOrder {
  /** railKey('refund', id): a retried send never pays twice downstream. */
  idempotencyKey: string;
  amountCentavos: Centavos;
  payer: Payer;
}

/** What became of a refund the rail was asked to send. */
export type RefundReport =
  | { status: 'completed'; railReference: string }
  | { status: 'failed'; railReference: string | null; failureCode: RailFailureCode };

export interface RefundRail {
  /** Sends a refund; safe to call again with the same order (same idempotency key). */
  sendRefund(order: RefundOrder): Promise<RefundReport>;
}

/** What the sandbox's helpers and hosted form say about a pretend payment. */
export interface SandboxPaymentInput {
  qrId: string;
  businessCode: number | null;
  amountCentavos: Centavos | null;
  sourceBank?: string;
  accountNumber?: string;
  accountTitular?: string;
}

/** The sandbox's pretend payer: only the sandbox rail has one (its helpers and the pay page's form). */
export interface SandboxPayer {
  toNotice(input: SandboxPaymentInput): PaymentNotice;
}
