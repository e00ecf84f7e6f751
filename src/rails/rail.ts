// A rail is the service's connection to the banking system (docs/rails.md): everything above it — QRs,
// payments, refunds, transfers, the journal, events — is the same whichever rail is connected. Each rail
// lives in a folder of its own (sandbox/, and the bank rails) and implements these parts; the composition
// root (src/composition.ts) builds the one RAIL names and hands it to the services. No service asks the
// mode or the configuration which rail it has.
import type { AccountRail } from './account.ts';
import type { PayOutRail } from './pay-out.ts';
import type { PayInRail, RefundRail, SandboxPayer } from './pay-in.ts';
import type { RailName } from './names.ts';

export type { RailName } from './names.ts';

export interface Rail {
  readonly name: RailName;
  readonly payOut: PayOutRail;
  /** Pays refunds back to payers; null where the bank offers no reversal: refunds then wait PENDING for the operator. */
  readonly refunds: RefundRail | null;
  /** A bank's pay-in: it issues the QRs and lists the payments. null on the sandbox, which issues its own QRs. */
  readonly payIn: PayInRail | null;
  /** The platform's account at the bank, read by reconciliation. null on the sandbox, which keeps no account. */
  readonly account: AccountRail | null;
  /** The pretend payer of the sandbox's helpers and hosted form; null on a bank's rail. */
  readonly sandboxPayer: SandboxPayer | null;
}
