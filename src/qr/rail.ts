// How payments reach the domain (docs/api-reference.md#payment-rules): every channel — a bank network's notification in live
// mode, the sandbox endpoint and hosted-page form in sandbox mode — is a PaymentRail that turns its own
// input into one PaymentNotice; service.receivePayment applies the same rules to all of them.
import { FullAccountNumber } from '../masking.ts';
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

/** One channel through which payers' banks report payments. */
export interface PaymentRail<Input> {
  readonly name: string;
  toNotice(input: Input): PaymentNotice;
}

export interface SandboxPaymentInput {
  qrId: string;
  businessCode: number | null;
  amountCentavos: Centavos | null;
  sourceBank?: string;
  accountNumber?: string;
  accountTitular?: string;
}

/** The sandbox rail: a simulated payer whose bank details default to a recognisable test payer. */
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
};
