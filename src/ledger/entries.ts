// The chart of accounts and the journal entry of every kind of money change (docs/journal.md). Pure data:
// the store writes what this says, the ledger check and the docs read it.
import type { MovementType } from './history-store.ts';

/**
 * The accounts of each merchant. `available` and `pending_out` are what the platform owes the merchant
 * (credit balances, never negative); `qr_clearing` and `ach_clearing` are the merchant's share of the
 * platform's clearing account of each rail — money received through the QR payment network (a debit
 * balance) and money sent out through ACH; `revenue` is what the platform earned from the merchant's fees
 * (a credit balance, never negative).
 */
export const ACCOUNTS = ['available', 'pending_out', 'qr_clearing', 'ach_clearing', 'revenue'] as const;
export type Account = (typeof ACCOUNTS)[number];

export const ENTRY_KINDS = [
  'payment', 'activation_fee', 'fee', 'transfer', 'transfer_settlement', 'transfer_return', 'refund', 'refund_return',
] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

/** The statement column (docs/api-reference.md#statements) an entry's change of `available` is summed in. */
export type StatementColumn = 'payments' | 'refunds' | 'transfers' | 'returns' | 'fees';

export interface EntryShape {
  /**
   * What a posting of `amount` does to each account, as a multiple of the amount: +1 a credit, -1 a debit.
   * Every shape sums to zero, so every entry is balanced by construction (and checked by the database).
   */
  legs: Partial<Record<Account, 1 | -1>>;
  /**
   * What the entry does with the fee of the movement it closes, the same way: a transfer that comes back
   * brings its fee back in the same entry (docs/fees.md). Absent: the entry has no fee part.
   */
  feeLegs?: Partial<Record<Account, 1 | -1>>;
  /** The movement an entry of this kind opens; null for an entry that settles an existing movement. */
  opens: MovementType | null;
  /** Where the statement counts it; null when `available` does not change. */
  statementColumn: StatementColumn | null;
}

export const ENTRY_SHAPES: Readonly<Record<EntryKind, EntryShape>> = {
  // A payer's bank paid a QR: the rail owes the money, the merchant can use it.
  payment: { legs: { qr_clearing: -1, available: 1 }, opens: 'payment', statementColumn: 'payments' },
  // The same for the platform's own merchant account, which collects onboarding activation fees.
  activation_fee: { legs: { qr_clearing: -1, available: 1 }, opens: 'payment', statementColumn: 'fees' },
  // The fee of a payment or transfer, posted with it: the platform earns it from the merchant's funds.
  fee: { legs: { available: -1, revenue: 1 }, opens: 'fee', statementColumn: 'fees' },
  // A transfer is created: the funds leave `available` and wait in `pending_out` until the bank settles.
  transfer: { legs: { available: -1, pending_out: 1 }, opens: 'transfer', statementColumn: 'transfers' },
  // The bank settled it: the funds leave through ACH.
  transfer_settlement: { legs: { pending_out: -1, ach_clearing: 1 }, opens: null, statementColumn: null },
  // It failed or was canceled: the funds come back, on the day that happened.
  // With its fee, which the platform gives back.
  transfer_return: { legs: { pending_out: -1, available: 1 }, feeLegs: { revenue: -1, available: 1 }, opens: null, statementColumn: 'returns' },
  // A refund is created: the funds go back to the payer through the QR rail.
  refund: { legs: { available: -1, qr_clearing: 1 }, opens: 'refund', statementColumn: 'refunds' },
  // The rail could not pay the refund: the funds come back.
  refund_return: { legs: { qr_clearing: -1, available: 1 }, opens: null, statementColumn: 'returns' },
};

/** The signed change of `account` an entry of `kind` for `amount` (and `fee`, for kinds with a fee part) makes. */
export function legAmount(kind: EntryKind, account: Account, amount: number, fee = 0): number {
  const shape = ENTRY_SHAPES[kind];
  return (shape.legs[account] ?? 0) * amount + (shape.feeLegs?.[account] ?? 0) * fee;
}
