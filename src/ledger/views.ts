// The ledger's API views: pure functions from rows to the JSON the API answers (docs/architecture.md#conventions).
import { CURRENCY, centavosToAmount } from '../money.ts';
import type { LedgerReport, MovementRow, PaymentSnapshot, TransferSnapshot } from './service.ts';
import type { BalanceRow } from './store.ts';

/** The balance (docs/api-reference.md#balance). */
export function toBalanceView(balance: BalanceRow) {
  return {
    business_code: balance.business_code,
    currency: CURRENCY as typeof CURRENCY,
    available: centavosToAmount(balance.available_centavos),
    pending_out: centavosToAmount(balance.pending_out_centavos),
  };
}

/**
 * The wire form of a movement (docs/api-reference.md#movements): the snapshot stored with it gives a payment's masked payer
 * `details` (a refund's: the refunded payment's, with `payment_id` and `refund_id`) or a transfer's masked `destination`.
 */
export function toMovementView(movement: MovementRow) {
  const snapshot = movement.snapshot as Partial<PaymentSnapshot & TransferSnapshot>;
  return {
    id: movement.id,
    type: movement.type,
    amount: centavosToAmount(movement.amount_centavos),
    currency: CURRENCY as typeof CURRENCY,
    status: movement.status,
    reference: movement.reference,
    date: movement.created_at.toISOString(),
    ...(movement.type === 'transfer' ? { destination: snapshot.destination ?? null } : { details: snapshot.details ?? null }),
  };
}

/** The wire form of a ledger check (operator API and CLI). */
export function toLedgerReportView(report: LedgerReport) {
  return {
    ok: report.violations.length === 0 && report.problems.length === 0,
    balances_checked: report.balancesChecked,
    entries_checked: report.entriesChecked,
    violations: report.violations.map((v) => ({
      business_code: v.business_code,
      available: centavosToAmount(v.available_centavos),
      expected_available: centavosToAmount(v.expected_available_centavos),
      pending_out: centavosToAmount(v.pending_out_centavos),
      expected_pending_out: centavosToAmount(v.expected_pending_out_centavos),
    })),
    problems: report.problems.map((p) => ({ check: p.check, business_code: p.business_code, detail: p.detail })),
  };
}
