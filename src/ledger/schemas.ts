// Schemas of the balance routes (docs/api-reference.md#balance-and-movements).
import { Type } from '@sinclair/typebox';
import { PaginationQueryProperties } from '../kernel/pagination.ts';
import { BusinessCode, PositiveId, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';

export const BalanceSchema = Type.Object({
  business_code: BusinessCode(),
  currency: Type.Literal('BOB'),
  available: Type.Number({ description: 'What the merchant can pay out now', example: 1250.5 }),
  pending_out: Type.Number({ description: 'Transfers debited but still PENDING or IN_TRANSIT, as a positive amount', example: 100 }),
});

/** The operator's ledger check (docs/journal.md#the-ledger-check). */
export const LedgerCheckSchema = Type.Object({
  ok: Type.Boolean({ description: 'True when every proof holds: no violation and no problem' }),
  balances_checked: Type.Integer(),
  entries_checked: Type.Integer(),
  problems: Type.Array(Type.Object({
    check: StringEnum(['entry_balanced', 'account_balance', 'running_balance', 'movement_journal', 'statement_bucket', 'movement_days', 'movement_states']),
    business_code: BusinessCode(),
    detail: Type.String(),
  }), { description: 'What the journal, the balance heads, the movements, the statement buckets and the per-day movement counts disagree on (at most 100 per proof)' }),
  violations: Type.Array(Type.Object({
    business_code: BusinessCode(),
    available: Type.Number(),
    expected_available: Type.Number(),
    pending_out: Type.Number(),
    expected_pending_out: Type.Number(),
  })),
});

export const MovementsQuery = StrictObject({
  ...PaginationQueryProperties,
  type: Type.Optional(StringEnum(['all', 'payment', 'transfer', 'refund', 'fee'], { default: 'all', description: 'Which movements to list' })),
  before_id: Type.Optional(PositiveId({
    description: 'Only movements with id < before_id, in data and meta: pin it (one above the newest id seen) for pages that do not shift while new movements arrive',
  })),
});

const Masked = (description: string) => Type.String({ description, example: '**********4321' });

/** Who paid, as the payment recorded it (account number masked). */
const PayerDetailsSchema = Type.Object({
  source_bank: Type.Union([Type.String(), Type.Null()]),
  account_number: Type.Union([Masked('The payer\'s account number, masked'), Type.Null()]),
  account_titular: Type.Union([Type.String(), Type.Null()]),
  payment_id: Type.Optional(Type.Integer({ description: 'Refunds only: the refunded payment' })),
  refund_id: Type.Optional(Type.String({ description: 'Refunds only: the refund' })),
});

/** What a fee was charged on (docs/fees.md). */
const FeeDetailsSchema = Type.Object({
  of: StringEnum(['payment', 'transfer']),
  payment_id: Type.Optional(Type.Integer({ description: 'A payment\'s fee: the payment' })),
  transfer_id: Type.Optional(Type.Integer({ description: 'A transfer\'s fee: the transfer' })),
});

/** Where a transfer goes (account number masked). */
const DestinationSchema = Type.Object({
  type: Type.Literal('bank_account'),
  bank_code: Type.Integer(),
  account_number: Masked('The destination account number, masked'),
  account_titular: Type.String(),
});

export const MovementSchema = Type.Object({
  id: Type.Integer(),
  type: StringEnum(['payment', 'transfer', 'refund', 'fee']),
  amount: Type.Number({ description: 'Positive for a payment, negative for a transfer, a refund or a fee', example: 150.5 }),
  fee: Type.Optional(Type.Number({ description: 'Payments only: the fee charged on it (its own `fee` movement)', example: 2.56 })),
  net: Type.Optional(Type.Number({ description: 'Payments only: amount − fee', example: 147.94 })),
  currency: Type.Literal('BOB'),
  status: StringEnum(['PENDING', 'IN_TRANSIT', 'COMPLETED', 'FAILED', 'CANCELED'], {
    description: 'A payment and its fee are COMPLETED; a transfer\'s or refund\'s movement mirrors it, and so does a transfer\'s fee',
  }),
  reference: Type.Union([Type.String(), Type.Null()]),
  date: Timestamp('When the movement was recorded'),
  details: Type.Optional(Type.Union([PayerDetailsSchema, FeeDetailsSchema, Type.Null()], { description: 'Payments and refunds: the payer; fees: what they were charged on' })),
  destination: Type.Optional(Type.Union([DestinationSchema, Type.Null()], { description: 'Transfers only' })),
  external_reference: Type.Optional(Type.Union([Type.String(), Type.Null()], {
    description: 'Payments and refunds: the external_reference of their QR, null when it has none',
  })),
});

const CalendarDate = (description: string) => Type.String({
  maxLength: 64,
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  'x-format-hint': 'must be a date written YYYY-MM-DD',
  description,
  example: '2026-11-01',
});

/** The range of a statement or an export: days in SERVICE_TIMEZONE, both included, at most 366, none after today. */
export const StatementQuery = StrictObject({
  from: CalendarDate('First day, in SERVICE_TIMEZONE'),
  to: CalendarDate('Last day, in SERVICE_TIMEZONE (at most 366 days after from, both included; not after today)'),
});

const Totals = (description: string) => Type.Object({
  count: Type.Integer(),
  amount: Type.Number({ description: `${description}, as its effect on available` }),
});

export const StatementSchema = Type.Object({
  business_code: BusinessCode(),
  currency: Type.Literal('BOB'),
  from: Type.String({ example: '2026-11-01' }),
  to: Type.String({ example: '2026-11-30' }),
  opening_balance: Type.Number({ description: 'available when the first day began' }),
  closing_balance: Type.Number({ description: 'available when the last day ended (today: now)' }),
  days: Type.Array(Type.Object({
    date: Type.String({ example: '2026-11-23' }),
    opening_balance: Type.Number(),
    payments: Totals('QR payments (positive)'),
    refunds: Totals('Refunds created (negative)'),
    transfers: Totals('Transfers created (negative)'),
    returns: Totals('Failed or canceled transfers (with their fees) and failed refunds coming back (positive)'),
    fees: Totals('Fees charged (negative); for the platform account, activation fees collected (positive)'),
    closing_balance: Type.Number(),
  }), { description: 'Every day of the range, those without activity included' }),
});

const RevenueTotals = (description: string) => Type.Object({
  count: Type.Integer({ description: `${description}: fees charged less transfer fees given back` }),
  amount: Type.Number({ description: `${description}: their amount, net of the transfer fees given back`, example: 1250.3 }),
});

/** The operator's revenue report (docs/fees.md#revenue). */
export const RevenueSchema = Type.Object({
  from: Type.String({ example: '2026-11-01' }),
  to: Type.String({ example: '2026-11-30' }),
  currency: Type.Literal('BOB'),
  total: RevenueTotals('Every merchant\'s fees in the range'),
  activations: Type.Object({
    count: Type.Integer({ description: 'Onboarding activation fees collected by the platform account' }),
    amount: Type.Number(),
  }, { description: 'Onboarding activation fees, apart from the fees' }),
  days: Type.Array(Type.Object({
    date: Type.String({ example: '2026-11-23' }),
    count: Type.Integer(),
    amount: Type.Number(),
  }), { description: 'Every day of the range (in SERVICE_TIMEZONE), those without fees included' }),
  merchants: Type.Array(Type.Object({
    business_code: BusinessCode(),
    name: Type.String(),
    count: Type.Integer(),
    amount: Type.Number(),
  }), { description: 'The merchants with fees in the range, the largest revenue first' }),
});
