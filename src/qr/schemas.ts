// Schemas of the Simple QR routes (docs/api-reference.md#qr-payments): validation, OpenAPI and types from one definition.
import { Type, type Static } from '@sinclair/typebox';
import { PaginationQueryProperties, PageSchema } from '../kernel/pagination.ts';
import { BusinessCode, CurrencySchema, MoneyAmount, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';
import { RAIL_NAMES } from '../rails/names.ts';

/** 0.10 to 100000.00 BOB, in centavos (docs/api-reference.md#create-a-qr). */
export const QR_AMOUNT_MIN_CENTAVOS = 10;
export const QR_AMOUNT_MAX_CENTAVOS = 10_000_000;
export const QR_AMOUNT_BOUNDS = { min: QR_AMOUNT_MIN_CENTAVOS, max: QR_AMOUNT_MAX_CENTAVOS } as const;

export const QR_STATUSES = ['ACTIVE', 'PAID', 'CANCELED'] as const;

/** The merchant's own order id: returned everywhere the QR goes, and a list filter. */
export const ExternalReference = Type.String({
  maxLength: 64,
  pattern: '^[A-Za-z0-9_.:-]+$',
  'x-format-hint': 'must hold only letters, digits, _ . : -',
  description: 'Your own order id, ≤ 64 characters of [A-Za-z0-9_.:-]',
  example: 'order-2026-000042',
});

export const CreateQrBody = StrictObject({
  business_code: BusinessCode({ description: 'The merchant of the API key' }),
  amount: Type.Optional(MoneyAmount(QR_AMOUNT_MIN_CENTAVOS, QR_AMOUNT_MAX_CENTAVOS, {
    description: 'Required when modify_amount is false; 0.10 to 100000.00; only a suggestion when modify_amount is true',
  })),
  modify_amount: Type.Optional(Type.Boolean({ default: false, description: 'true: the payer chooses the amount' })),
  is_multi_use: Type.Optional(Type.Boolean({ default: false, description: 'true: many payers may pay the same QR' })),
  qr_expiration: Type.Optional(Type.String({
    maxLength: 40,
    description: 'Absolute `YYYY-MM-DD HH:mm:ss` in SERVICE_TIMEZONE (default America/La_Paz), or relative `+N` and a unit: m/min/minute(s), h/hour(s), d/day(s). In the future, at most 365 days ahead. Absent: never expires.',
    example: '+5 minutes',
  })),
  description: Type.Optional(Type.String({ maxLength: 140 })),
  currency: Type.Optional(CurrencySchema),
  external_reference: Type.Optional(ExternalReference),
  min_amount: Type.Optional(MoneyAmount(QR_AMOUNT_MIN_CENTAVOS, QR_AMOUNT_MAX_CENTAVOS, {
    description: 'With modify_amount: true only: the least the payer may enter (≤ amount when one is suggested)',
  })),
  max_amount: Type.Optional(MoneyAmount(QR_AMOUNT_MIN_CENTAVOS, QR_AMOUNT_MAX_CENTAVOS, {
    description: 'With modify_amount: true only: the most the payer may enter (≥ amount when one is suggested)',
  })),
  max_payments: Type.Optional(Type.Integer({
    minimum: 1, maximum: 1_000_000, description: 'With is_multi_use: true only: after this many payments the QR is PAID (final)',
  })),
});
export type CreateQrBody = Static<typeof CreateQrBody>;

export const PayerSchema = Type.Object({
  source_bank: Type.String(),
  account_number: Type.String({ description: 'Masked: only the last digits are shown', example: '**********4321' }),
  account_titular: Type.String(),
});

export const PaymentSchema = Type.Object({
  id: Type.Integer(),
  qr_id: Type.String({ format: 'uuid' }),
  business_code: BusinessCode(),
  amount: Type.Number({ example: 150.5 }),
  fee: Type.Number({ description: 'The fee charged on it under the merchant\'s price plan (0 on a late payment)', example: 2.56 }),
  net: Type.Number({ description: 'amount − fee: what the payment added to available', example: 147.94 }),
  currency: Type.Literal('BOB'),
  status: Type.Literal('COMPLETED'),
  payer: PayerSchema,
  paid_at: Timestamp(),
  movement_id: Type.Integer(),
  amount_refunded: Type.Number({ description: 'What refunds that have not failed give back of this payment', example: 0 }),
  late: Type.Boolean({ description: 'Money that arrived for a QR that could no longer take it; refunded in full at once (docs: late payments)' }),
  rail: RailNameSchema('The rail the payment came through'),
  rail_reference: Type.Union([Type.String(), Type.Null()], { description: 'The bank\'s transaction id of the payment; null on the sandbox' }),
});
export type PaymentView = Static<typeof PaymentSchema>;

/** `rail`: which rail a QR was issued on, or a payment came through (docs/rails.md). */
function RailNameSchema(description: string) {
  return StringEnum(RAIL_NAMES, { description });
}

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const QrProperties = {
  id: Type.String({ format: 'uuid' }),
  business_code: BusinessCode(),
  status: StringEnum(QR_STATUSES, { description: 'Effective status at the time of the request: a QR past expires_at reads CANCELED' }),
  amount: Type.Union([Type.Number(), Type.Null()], { description: 'Fixed amount, or the suggested one when modify_amount is true; null when none' }),
  currency: Type.Literal('BOB'),
  modify_amount: Type.Boolean(),
  is_multi_use: Type.Boolean(),
  description: Nullable(Type.String()),
  qr_expiration: Nullable(Type.String({ description: 'Expiry as `YYYY-MM-DD HH:mm:ss` in SERVICE_TIMEZONE' })),
  expires_at: Nullable(Timestamp()),
  qr_url: Type.String({ description: 'Hosted payment page' }),
  qr_payload: Nullable(Type.String({ description: 'EMVCo Merchant-Presented Mode payload; with a bank\'s rail the text the bank\'s image encodes, or null when it cannot be decoded' })),
  external_reference: Nullable(Type.String({ description: 'Your own order id, as sent' })),
  min_amount: Type.Union([Type.Number(), Type.Null()], { description: 'Least a payer may enter (editable amounts)' }),
  max_amount: Type.Union([Type.Number(), Type.Null()], { description: 'Most a payer may enter (editable amounts)' }),
  max_payments: Type.Union([Type.Integer(), Type.Null()], { description: 'Payments after which a multi-use QR is PAID' }),
  payments_count: Type.Integer(),
  amount_collected: Type.Number(),
  last_payment: Type.Union([PaymentSchema, Type.Null()]),
  paid_at: Nullable(Timestamp()),
  canceled_at: Nullable(Timestamp()),
  cancel_reason: Type.Union([StringEnum(['merchant', 'expired'] as const), Type.Null()]),
  rail: RailNameSchema('The rail the QR was issued on (RAIL)'),
  rail_reference: Nullable(Type.String({ description: 'The bank\'s id of the QR; null on the sandbox' })),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

/** The QR resource (docs/api-reference.md#the-qr-resource). */
export const QrSchema = Type.Object({
  ...QrProperties,
  qr_image: Type.String({ description: 'PNG of qr_payload as a data URI; with a bank\'s rail the bank\'s image, unchanged' }),
});
export type QrView = Static<typeof QrSchema>;
/** The resource without its image, as events carry it (docs/api-reference.md#event-types). */
export type QrEventView = Omit<QrView, 'qr_image'>;

export const QrIdParams = Type.Object({ id: Type.String({ description: 'QR id (UUID)' }) });

export const GetQrQuery = StrictObject({
  wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, description: 'Long poll: hold the answer up to this many seconds while the QR is ACTIVE and unchanged' })),
});

export const ListQrsQuery = StrictObject({
  ...PaginationQueryProperties,
  status: Type.Optional(StringEnum(QR_STATUSES)),
  external_reference: Type.Optional(ExternalReference),
});

export const ListPaymentsQuery = StrictObject({ ...PaginationQueryProperties });

export const QrPageSchema = PageSchema(QrSchema);
export const PaymentPageSchema = PageSchema(PaymentSchema);

const PaymentAmount = MoneyAmount(QR_AMOUNT_MIN_CENTAVOS, QR_AMOUNT_MAX_CENTAVOS, {
  description: 'Must equal the QR amount when fixed; the payer\'s choice when editable (defaults to the suggested amount)',
});
const PayerBank = Type.String({ minLength: 1, maxLength: 100, description: 'Payer\'s bank (default "Banco Sandbox")' });
const PayerAccountNumber = Type.String({
  maxLength: 64, pattern: '^[0-9]{4,30}$', 'x-format-hint': 'must be 4 to 30 digits', description: 'Payer\'s account; stored, never shown unmasked',
});
const PayerTitular = Type.String({ minLength: 1, maxLength: 140, description: 'Payer\'s name' });

export const SandboxPaymentBody = StrictObject({
  amount: Type.Optional(PaymentAmount),
  source_bank: Type.Optional(PayerBank),
  account_number: Type.Optional(PayerAccountNumber),
  account_titular: Type.Optional(PayerTitular),
});
export type SandboxPaymentBody = Static<typeof SandboxPaymentBody>;

/**
 * The hosted pay page's sandbox form: the sandbox payment's own fields, the payer's all required (a person
 * types them; the API's defaults are for scripts). `amount` is sent only for an editable amount.
 */
export const SandboxPaymentForm = StrictObject({
  amount: Type.Optional(PaymentAmount),
  source_bank: PayerBank,
  account_number: PayerAccountNumber,
  account_titular: PayerTitular,
});
