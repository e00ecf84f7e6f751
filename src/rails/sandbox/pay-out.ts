// The sandbox's pay-out: a stand-in bank network that accepts every transfer except those to accounts
// ending in `-0000`, which it rejects as closed (docs/api-reference.md#sandbox-transfer-helper), and settles
// whatever it accepted. It keeps no state: its answers depend only on the order, so a repeated call
// answers the same (as a real rail deduplicating on the idempotency key would).
import { revealAccountNumber } from '../../masking.ts';
import type { RailFailureCode } from '../failures.ts';
import type { InstantPayOut, RailReport, RailStatus, RailTransferOrder } from '../pay-out.ts';

/** The sandbox network's own statuses, as a real ACH switch would name them on the wire. */
type SandboxWireStatus = 'ACCEPTED' | 'REJECTED_ACCOUNT_CLOSED' | 'SETTLED';

const RAIL_STATUS_OF_WIRE = {
  ACCEPTED: 'accepted',
  REJECTED_ACCOUNT_CLOSED: 'rejected',
  SETTLED: 'settled',
} as const satisfies Record<SandboxWireStatus, RailStatus>;

const FAILURE_CODE_OF_WIRE = {
  ACCEPTED: null,
  REJECTED_ACCOUNT_CLOSED: 'ACCOUNT_CLOSED',
  SETTLED: null,
} as const satisfies Record<SandboxWireStatus, RailFailureCode | null>;

/** The account suffix the sandbox rejects on submission. */
export const SANDBOX_CLOSED_ACCOUNT_SUFFIX = '-0000';

export class SandboxPayOut implements InstantPayOut {
  readonly kind = 'instant';
  async submit(order: RailTransferOrder): Promise<RailReport> {
    const wire: SandboxWireStatus = revealAccountNumber(order.accountNumber).endsWith(SANDBOX_CLOSED_ACCOUNT_SUFFIX) ? 'REJECTED_ACCOUNT_CLOSED' : 'ACCEPTED';
    return toReport(wire, order);
  }

  async track(order: RailTransferOrder): Promise<RailReport> {
    return toReport('SETTLED', order);
  }
}

function toReport(wire: SandboxWireStatus, order: RailTransferOrder): RailReport {
  return { status: RAIL_STATUS_OF_WIRE[wire], failureCode: FAILURE_CODE_OF_WIRE[wire], railReference: `sbx_${order.idempotencyKey}` };
}
