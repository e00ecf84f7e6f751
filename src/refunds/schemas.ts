// TypeBox schemas of the refund routes (docs/api-reference.md#refunds): validation, OpenAPI and types from one source.
import { Type, type Static } from '@sinclair/typebox';
import { PageSchema, PaginationQueryProperties } from '../kernel/pagination.ts';
import { BusinessCode, MoneyAmount, PositiveId, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';
import { RAIL_FAILURE_CODES } from '../rails/failures.ts';

export const REFUND_STATUSES = ['PENDING', 'COMPLETED', 'FAILED'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** Why a merchant refunds; `qr_not_payable` is the service's own, for a late payment (never in a request). */
export const REQUESTED_REASONS = ['requested_by_customer', 'duplicate', 'fraudulent', 'other'] as const;
export const REFUND_REASONS = [...REQUESTED_REASONS, 'qr_not_payable'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/**
 * A refund gives back at least 0.01 and at most a payment's largest amount (100000.00). Not the 0.10 floor
 * of QRs and transfers: a partial refund can leave a few centavos of a payment, and those must still be
 * refundable (contract rev 5, §11).
 */
export const MIN_REFUND_CENTAVOS = 1;
export const MAX_REFUND_CENTAVOS = 10_000_000;

export const CreateRefundBody = StrictObject({
  payment_id: PositiveId({ description: 'The payment to refund (GET /api/v2/simple-qrs/{id}/payments)' }),
  amount: Type.Optional(MoneyAmount(MIN_REFUND_CENTAVOS, MAX_REFUND_CENTAVOS, {
    description: 'What to give back, 0.01 up to what is left to refund of the payment (at most two decimals); default: all that is left',
  })),
  reason: Type.Optional(StringEnum(REQUESTED_REASONS, { description: 'Default requested_by_customer' })),
  description: Type.Optional(Type.String({ maxLength: 140, description: 'Shown on the refund and its movement, at most 140 characters' })),
});
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const RefundIdParams = StrictObject({
  id: Type.String({ maxLength: 64, pattern: '^rf_[0-9A-Za-z]{22}$', description: 'Refund id (rf_…)' }),
});

export const ListRefundsQuery = StrictObject({
  ...PaginationQueryProperties,
  payment_id: Type.Optional(PositiveId({ description: 'Only the refunds of this payment' })),
  status: Type.Optional(StringEnum(REFUND_STATUSES, { description: 'Only refunds in this status' })),
});

/** Sandbox advance helper: the rail pays the refund (COMPLETED) or cannot (FAILED). */
export const AdvanceRefundBody = StrictObject({
  to: StringEnum(['COMPLETED', 'FAILED'] as const),
  failure_code: Type.Optional(StringEnum(RAIL_FAILURE_CODES, { description: 'With to: FAILED; default ACCOUNT_CLOSED' })),
});

/** The operator records what became of a refund a bank rail cannot pay back by itself (docs/rails.md). */
export const RESOLUTION_NOTE_MAX_LENGTH = 500;
export const ResolveRefundBody = StrictObject({
  to: StringEnum(['COMPLETED', 'FAILED'] as const, { description: 'COMPLETED: the payer was paid back; FAILED: the money returns to the balance' }),
  note: Type.Optional(Type.String({ minLength: 1, maxLength: RESOLUTION_NOTE_MAX_LENGTH, description: 'What happened, kept on the refund as resolution_note (at most 500 characters)' })),
});
export type ResolveRefundBody = Static<typeof ResolveRefundBody>;

export const RefundSchema = Type.Object({
  id: Type.String({ example: 'rf_4Hq0c2TgGm0p8mYwZb3sQx' }),
  payment_id: Type.Integer(),
  qr_id: Type.String({ format: 'uuid' }),
  business_code: BusinessCode(),
  amount: Type.Number({ example: 20 }),
  currency: Type.Literal('BOB'),
  status: StringEnum(REFUND_STATUSES),
  reason: StringEnum(REFUND_REASONS, { description: 'qr_not_payable: the service refunded a late payment by itself' }),
  description: Type.Union([Type.String(), Type.Null()]),
  failure_code: Type.Union([StringEnum(RAIL_FAILURE_CODES), Type.Null()]),
  destination: Type.Object({
    source_bank: Type.String(),
    account_number: Type.String({ description: 'The payer\'s account, masked', example: '**********4321' }),
    account_titular: Type.String(),
  }, { description: 'Who gets the money back: the payer of the payment' }),
  movement_id: Type.Integer({ description: 'The refund movement of GET /api/v2/balance/movements' }),
  resolution_note: Type.Union([Type.String(), Type.Null()], { description: 'The operator\'s note when they resolved the refund by hand; null otherwise' }),
  created_at: Timestamp(),
  completed_at: Type.Union([Timestamp(), Type.Null()]),
}, { description: 'A refund of a QR payment; the account number is always masked' });
export type RefundResource = Static<typeof RefundSchema>;

export const RefundPageSchema = PageSchema(RefundSchema);
