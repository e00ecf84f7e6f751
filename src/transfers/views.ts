// The transfers module's API views: pure functions from rows to the JSON the API answers and events carry
// (docs/architecture.md#conventions). The destination account number shows its masked form.
import { centavosToAmount } from '../money.ts';
import type { TransferResource } from './schemas.ts';
import type { TransferRow } from './store.ts';

/** The wire form of a transfer: amounts as numbers, the account number masked (docs/api-reference.md#account-number-masking). */
export function toTransferResource(row: TransferRow): TransferResource {
  return {
    id: row.id,
    business_code: row.business_code,
    status: row.status,
    amount: centavosToAmount(row.amount_centavos),
    currency: 'BOB',
    reference: row.reference,
    destination: {
      type: 'bank_account',
      bank_code: row.bank_code,
      account_number: row.account_number.masked,
      account_titular: row.account_titular,
    },
    failure_code: row.failure_code,
    movement_id: row.movement_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
