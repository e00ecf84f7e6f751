// Pay-in through a rail (docs/rails.md): how payments reach the domain, and how refunds go back. Every
// channel — a bank's callback or status read, the sandbox's helpers and hosted form — turns its own input
// into one PaymentNotice, and qr/service.receivePayment applies the same rules to all of them.
import type { BankMaskedAccountNumber, PayerAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';
import type { RailFailureCode } from './failures.ts';
import type { RailName } from './names.ts';
import type { RailOutcome } from './outcome.ts';

export interface Payer {
  sourceBank: string;
  /**
   * The sandbox's payers: the full number, stored with the payment, shown and sent only masked. A bank's
   * payers: the text the bank sent, already masked, stored and shown as given.
   */
  accountNumber: PayerAccountNumber;
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
  /**
   * When the payer's bank took the money (a bank's paymentDate and paymentTime); null: now (the sandbox).
   * It is the payment's paid_at, and the time a QR's expiry is judged at: a payment made before expiry and
   * learnt of after it (a lost callback, the daily sweep) is on time, not late.
   */
  paidAt: Date | null;
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
  | { status: 'completed'; railReference: string | null }
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

/**
 * The test payer a sandbox payment is made by when a field is left out of the API's request, and the
 * values the hosted form starts with: one payer, the same name in every language (it is data, not text).
 */
export const SANDBOX_PAYER_DEFAULTS = { sourceBank: 'Banco Sandbox', accountNumber: '10000123454321', accountTitular: 'Sandbox Payer' } as const;

/** The sandbox's pretend payer: only the sandbox rail has one (its helpers and the pay page's form). */
export interface SandboxPayer {
  toNotice(input: SandboxPaymentInput): PaymentNotice;
}

// ---------------------------------------------------------------------------------------------------
// A bank's pay-in (docs/rails.md, "Pay-in through a bank"): the bank issues the QRs, and says which
// payments it took. Every call ends in one RailOutcome (outcome.ts).

/** A QR for the bank to issue. */
export interface RailQrOrder {
  /** Our QR's id: the bank's transactionId of the QR. */
  qrId: string;
  amountCentavos: Centavos;
  description: string;
  /** When the QR stops taking payments (null: never; the rail then picks its own last day). */
  expiresAt: Date | null;
  issuedAt: Date;
  singleUse: boolean;
  modifyAmount: boolean;
}

export interface IssuedRailQr {
  /** The bank's id of the QR: the QR's rail_reference. */
  railReference: string;
  /** The bank's PNG, base64, unchanged. */
  pngBase64: string;
}

/** A payment the bank lists, readable and in BOB: money that moved, recorded once by its railReference. */
export interface RailPayment {
  /** The bank's id of the QR paid (our QR's rail_reference, when the QR is ours). */
  qrReference: string;
  /** The bank's id of the payment. */
  railReference: string;
  amountCentavos: Centavos;
  paidAt: Date;
  /** The payer's bank, as the bank codes it. */
  payerBankCode: string;
  payerName: string;
  payerAccount: BankMaskedAccountNumber;
}

/** A payment the bank lists that credits no merchant as it stands (another currency, a field out of shape). */
export interface UnmatchedRailPayment {
  qrReference: string | null;
  railReference: string | null;
  currency: string | null;
  /** What could not be read, naming fields, never values. */
  problem: string;
}

/** What the bank lists: payments to record, and what could not be recorded (kept for reconciliation). */
export interface RailPayments {
  payments: RailPayment[];
  unmatched: UnmatchedRailPayment[];
}

/** What a QR is at the bank. */
export type RailQrState = 'active' | 'paid' | 'cancelled';

/** A payment callback's body is only a hint: the QR it names, whose state is then read. */
export type RailPaymentHint = { kind: 'qr'; qrReference: string } | { kind: 'unreadable'; problem: string };

export interface PayInRail {
  issueQr(order: RailQrOrder): Promise<RailOutcome<IssuedRailQr>>;
  cancelQr(qrReference: string): Promise<RailOutcome<null>>;
  readQr(qrReference: string): Promise<RailOutcome<RailPayments & { state: RailQrState }>>;
  /** The payments of one business day, yyyy-MM-dd in SERVICE_TIMEZONE (the daily sweep). */
  paymentsOfDay(day: string): Promise<RailOutcome<RailPayments>>;
  /** The payment callback's JSON body, read as a hint; never throws. */
  readPaymentHint(body: unknown): RailPaymentHint;
  /** Whether `secret` is the callback path's secret (compared in constant time). */
  isCallbackSecret(secret: string): boolean;
  /** How often the bank's QRs are read (and cancels repeated). */
  readonly pollIntervalMs: number;
}
