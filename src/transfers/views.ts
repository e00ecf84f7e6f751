// The transfers module's API views: pure functions from rows to the JSON the API answers and events carry
// (docs/architecture.md#conventions). The destination account number shows its masked form.
import { centavosToAmount } from '../money.ts';
import { railKey } from '../rails/keys.ts';
import type { BatchRow } from './batch-store.ts';
import type { BatchResource, TransferResource } from './schemas.ts';
import type { TransferRow } from './store.ts';

/** The wire form of a transfer: amounts as numbers, the account number masked (docs/api-reference.md#account-number-masking). */
export function toTransferResource(row: TransferRow): TransferResource {
  return {
    id: row.id,
    business_code: row.business_code,
    status: row.status,
    amount: centavosToAmount(row.amount_centavos),
    fee: centavosToAmount(row.fee_centavos),
    currency: 'BOB',
    reference: row.reference,
    destination: {
      type: 'bank_account',
      bank_code: row.bank_code,
      account_number: row.account_number.masked,
      account_titular: row.account_titular,
    },
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    movement_id: row.movement_id,
    origin: row.origin,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The operator's view of a batch and its transfers. */
export function toBatchResource({ batch, transfers }: { batch: BatchRow; transfers: readonly TransferRow[] }): BatchResource {
  return {
    id: railKey('batch', batch.id),
    rail: batch.rail,
    status: batch.status,
    resolution: batch.resolution,
    item_count: batch.item_count,
    amount: centavosToAmount(batch.amount_centavos),
    currency: 'BOB',
    bank_batch_id: batch.bank_batch_id,
    message: batch.message,
    transfers: transfers.map((row) => ({ id: row.id, business_code: row.business_code, status: row.status })),
    created_at: batch.created_at.toISOString(),
    updated_at: batch.updated_at.toISOString(),
  };
}
