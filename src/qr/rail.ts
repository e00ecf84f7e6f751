// How payments reach the domain (docs/api-reference.md#payment-rules): every channel — a bank network's notification in live
// mode, the sandbox endpoint and hosted-page form in sandbox mode — is a PaymentRail that turns its own
// input into one PaymentNotice; service.receivePayment applies the same rules to all of them.
import { FullAccountNumber, revealAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';

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
}

/** Why a rail could not pay a refund back. */
export const REFUND_FAILURE_CODES = ['ACCOUNT_CLOSED', 'INVALID_ACCOUNT', 'REJECTED_BY_BANK'] as const;
export type RefundFailureCode = (typeof REFUND_FAILURE_CODES)[number];

/** What a rail needs to send a refund back to the payer who paid. The account number is the full one. */
export interface RefundOrder {
  /** Derived from the refund id, so a retried send never pays twice downstream. */
  idempotencyKey: string;
  amountCentavos: Centavos;
  payer: Payer;
}

/** What became of a refund the rail was asked to send. */
export type RefundReport =
  | { status: 'completed'; railReference: string }
  | { status: 'failed'; railReference: string | null; failureCode: RefundFailureCode };

/**
 * One channel through which payers' banks report payments, and through which refunds go back to them:
 * the same domain code (service.ts, refunds/service.ts) serves every rail.
 */
export interface PaymentRail<Input> {
  readonly name: string;
  toNotice(input: Input): PaymentNotice;
  /** Sends a refund; safe to call again with the same order (same idempotency key). */
  sendRefund(order: RefundOrder): Promise<RefundReport>;
}

export interface SandboxPaymentInput {
  qrId: string;
  businessCode: number | null;
  amountCentavos: Centavos | null;
  sourceBank?: string;
  accountNumber?: string;
  accountTitular?: string;
}

/**
 * The sandbox rail: a simulated payer whose bank details default to a recognisable test payer. Refunds to
 * an account ending in 0000 fail with ACCOUNT_CLOSED (as the sandbox ACH rail fails transfers to -0000);
 * every other refund is paid.
 */
export const sandboxRail: PaymentRail<SandboxPaymentInput> = {
  name: 'sandbox',
  toNotice(input) {
    return {
      qrId: input.qrId,
      businessCode: input.businessCode,
      amountCentavos: input.amountCentavos,
      payer: {
        sourceBank: input.sourceBank ?? 'Banco Sandbox',
        accountNumber: new FullAccountNumber(input.accountNumber ?? '10000123454321'),
        accountTitular: input.accountTitular ?? 'Sandbox Payer',
      },
    };
  },
  async sendRefund(order) {
    if (revealAccountNumber(order.payer.accountNumber).endsWith('0000')) {
      return { status: 'failed', railReference: null, failureCode: 'ACCOUNT_CLOSED' };
    }
    return { status: 'completed', railReference: `sbx_${order.idempotencyKey}` };
  },
};
