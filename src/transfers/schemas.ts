// TypeBox schemas of the transfer routes (docs/api-reference.md#transfers): validation, OpenAPI and types from one source.
import { Type, type Static } from '@sinclair/typebox';
import type { BankConfig } from '../config.ts';
import { PageSchema, PaginationQueryProperties } from '../kernel/pagination.ts';
import { RAIL_FAILURE_CODES, type RailFailureCode } from '../rails/failures.ts';
import { BusinessCode, CurrencySchema, MoneyAmount, PositiveId, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';

export const TRANSFER_STATUSES = ['PENDING', 'IN_TRANSIT', 'COMPLETED', 'FAILED', 'CANCELED'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/** Why a transfer failed (`failure_code`): the rails' one list. */
export const FAILURE_CODES = RAIL_FAILURE_CODES;
export type FailureCode = RailFailureCode;

/** docs/api-reference.md#create-a-transfer: 0.10 to 20000.00 BOB, in centavos. */
export const MIN_TRANSFER_CENTAVOS = 10;
export const MAX_TRANSFER_CENTAVOS = 2_000_000;

/** A bank of the configured list, by its code; another code is the field code `unknown_bank`. */
export function bankCodeSchema(banks: readonly BankConfig[]) {
  return Type.Unsafe<number>({
    type: 'integer',
    enum: banks.map((bank) => bank.bankCode),
    'x-error-code': 'unknown_bank',
    description: 'A bank_code of GET /api/v2/banks',
  });
}

/** A Bolivian bank account number as transfers and payout accounts take it. */
export const BankAccountNumber = Type.String({
  minLength: 1,
  maxLength: 34,
  pattern: '^-*[0-9][0-9-]*$',
  'x-format-hint': 'must hold only digits and hyphens, with at least one digit',
  description: 'Digits and hyphens, 1–34 characters; shown masked in every response',
  example: '20150123455678',
});

/** The account holder's name. */
export const AccountTitular = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  'x-format-hint': 'must not be blank',
  description: 'Full name of the account holder, 1–100 characters',
});

/**
 * A bank account to pay out to, as a request gives it: a transfer's destination, and a payout schedule's
 * (src/payouts). `bank_code` is an enum of the configured banks, with the field code `unknown_bank`, so an
 * unknown bank is reported in the same 422 as every other failing field.
 */
export function bankAccountDestinationSchema(banks: readonly BankConfig[]) {
  return StrictObject({
    type: Type.Unsafe<'bank_account'>({ type: 'string', const: 'bank_account', description: 'Always bank_account' }),
    bank_code: bankCodeSchema(banks),
    account_number: BankAccountNumber,
    account_titular: AccountTitular,
  });
}

/** The body of POST /api/v2/transfers. */
export function createTransferBodySchema(banks: readonly BankConfig[]) {
  return StrictObject({
    business_code: BusinessCode({ description: 'The merchant of the API key' }),
    amount: MoneyAmount(MIN_TRANSFER_CENTAVOS, MAX_TRANSFER_CENTAVOS),
    currency: CurrencySchema,
    reference: Type.Optional(Type.String({ maxLength: 50, description: 'Statement text, at most 50 characters' })),
    destination: bankAccountDestinationSchema(banks),
  });
}

export type CreateTransferBody = Static<ReturnType<typeof createTransferBodySchema>>;

export const TransferIdParams = StrictObject({
  id: PositiveId({ description: 'Transfer id' }),
});

export const ListTransfersQuery = StrictObject({
  ...PaginationQueryProperties,
  status: Type.Optional(StringEnum(TRANSFER_STATUSES, { description: 'Only transfers in this status' })),
});

export const CancelTransferBody = StrictObject({});

/** Sandbox advance helper: `to` is where the transfer should go next. */
export const AdvanceTransferBody = StrictObject({
  to: StringEnum(['IN_TRANSIT', 'COMPLETED', 'FAILED'] as const),
  failure_code: Type.Optional(StringEnum(FAILURE_CODES, { description: 'With to: FAILED; default ACCOUNT_CLOSED' })),
});

export const DestinationSchema = Type.Object({
  type: Type.Literal('bank_account'),
  bank_code: Type.Integer(),
  account_number: Type.String({ description: 'Masked: only the end of the final group is shown', example: '**********5678' }),
  account_titular: Type.String(),
});

export const TransferSchema = Type.Object({
  id: Type.Integer(),
  business_code: BusinessCode(),
  status: StringEnum(TRANSFER_STATUSES),
  amount: Type.Number({ example: 100.25 }),
  fee: Type.Number({ description: 'The fee charged on it under the merchant\'s price plan, debited with it and given back with it if it fails or is canceled', example: 1.5 }),
  currency: Type.Literal('BOB'),
  reference: Type.Union([Type.String(), Type.Null()]),
  destination: DestinationSchema,
  failure_code: Type.Union([StringEnum(FAILURE_CODES), Type.Null()]),
  failure_message: Type.Union([Type.String({ maxLength: 500 }), Type.Null()], {
    description: "The bank's reason for a failure (a rejection's description, a refused upload's message); null unless the bank gave one",
  }),
  movement_id: Type.Integer({ description: 'The transfer movement of GET /api/v2/balance/movements' }),
  origin: StringEnum(['api', 'schedule'], { description: 'Who asked for it: the merchant (api) or its payout schedule (schedule)' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { description: 'A transfer; the account number is always masked' });

export type TransferResource = Static<typeof TransferSchema>;

export const TransferPageSchema = PageSchema(TransferSchema);

export const BankListSchema = Type.Object({
  data: Type.Array(Type.Object({ bank_code: Type.Integer(), name: Type.String() })),
});

// ---------------------------------------------------------------------------------------------------
// Batches of a bank rail (operator API: POST /admin/v1/rails/batches/{batchId}/resolve)

export const BATCH_STATUSES = ['uploading', 'uploaded', 'refused', 'unknown'] as const;

export const BatchIdParams = StrictObject({
  batchId: Type.String({ maxLength: 24, pattern: '^mps-b-[1-9][0-9]{0,14}$', description: 'The batch id the bank knows (mps-b-…)' }),
});

export const ResolveBatchBody = StrictObject({
  to: StringEnum(['COMPLETED', 'FAILED'] as const, {
    description: "What the bank says became of the batch's transfers still IN_TRANSIT: COMPLETED, or FAILED (their funds return)",
  }),
});
export type ResolveBatchBody = Static<typeof ResolveBatchBody>;

export const BatchSchema = Type.Object({
  id: Type.String({ example: 'mps-b-12' }),
  rail: Type.String({ example: 'baneco' }),
  status: StringEnum(BATCH_STATUSES, { description: 'uploading (no answer yet), uploaded (the bank took it), refused, unknown (the answer never came)' }),
  resolution: Type.Union([StringEnum(['COMPLETED', 'FAILED'] as const), Type.Null()], { description: "The operator's resolution, if any" }),
  item_count: Type.Integer(),
  amount: Type.Number({ example: 1500.5 }),
  currency: Type.Literal('BOB'),
  bank_batch_id: Type.Union([Type.String(), Type.Null()], { description: "The bank's id of the batch, once it took it" }),
  message: Type.Union([Type.String(), Type.Null()], { description: "The bank's refusal, or what the missing answer was" }),
  transfers: Type.Array(Type.Object({ id: Type.Integer(), business_code: BusinessCode(), status: StringEnum(TRANSFER_STATUSES) })),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}, { description: 'A batch of transfers a bank rail paid out' });
export type BatchResource = Static<typeof BatchSchema>;
