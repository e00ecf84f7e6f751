// The sandbox's pay-in: a simulated payer whose bank details default to a recognisable test payer, and
// refunds that the pretend bank pays back — except to an account ending in 0000, which fails with
// ACCOUNT_CLOSED (as the sandbox pay-out fails transfers to -0000).
import { FullAccountNumber, revealAccountNumber } from '../../masking.ts';
import { SANDBOX_PAYER_DEFAULTS, type RefundRail, type SandboxPayer } from '../pay-in.ts';

export const sandboxPayer: SandboxPayer = {
  toNotice(input) {
    return {
      qrId: input.qrId,
      businessCode: input.businessCode,
      amountCentavos: input.amountCentavos,
      payer: {
        sourceBank: input.sourceBank ?? SANDBOX_PAYER_DEFAULTS.sourceBank,
        accountNumber: new FullAccountNumber(input.accountNumber ?? SANDBOX_PAYER_DEFAULTS.accountNumber),
        accountTitular: input.accountTitular ?? SANDBOX_PAYER_DEFAULTS.accountTitular,
      },
      rail: 'sandbox',
      railReference: null,
      paidAt: null,
    };
  },
};

export const sandboxRefunds: RefundRail = {
  async sendRefund(order) {
    const account = order.payer.accountNumber;
    // A bank's masked payer account cannot be paid to: the sandbox's pretend bank fails it as its own bank would not know it.
    if (!(account instanceof FullAccountNumber) || revealAccountNumber(account).endsWith('0000')) {
      return { status: 'failed', railReference: null, failureCode: 'ACCOUNT_CLOSED' };
    }
    return { status: 'completed', railReference: `sbx_${order.idempotencyKey}` };
  },
};
