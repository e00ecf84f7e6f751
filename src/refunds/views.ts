// The refunds module's API views: pure functions from rows to the JSON the API answers and events carry
// (docs/architecture.md#conventions). The payer's account number shows its masked form.
import { centavosToAmount } from '../money.ts';
import type { RefundResource } from './schemas.ts';
import type { RefundRow } from './store.ts';

export function toRefundResource(row: RefundRow): RefundResource {
  return {
    id: row.id,
    payment_id: row.payment_id,
    qr_id: row.qr_id,
    business_code: row.business_code,
    amount: centavosToAmount(row.amount_centavos),
    currency: 'BOB',
    status: row.status,
    reason: row.reason,
    description: row.description,
    failure_code: row.failure_code,
    destination: {
      source_bank: row.source_bank,
      account_number: row.account_number.masked,
      account_titular: row.account_titular,
    },
    movement_id: row.movement_id,
    resolution_note: row.resolution_note,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
