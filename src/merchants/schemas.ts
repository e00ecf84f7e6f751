// Schemas of the operator API for partners, merchants and keys (docs/api-reference.md#operator-api).
import { Type, type Static } from '@sinclair/typebox';
import { BusinessCode, MoneyAmount, PositiveId, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';
import { MAX_FIXED_FEE, MAX_QR_BASIS_POINTS } from './pricing.ts';

/** Text that is not only spaces. */
const notBlank = { pattern: '\\S', 'x-format-hint': 'must not be blank' };

export const BusinessCodeParams = StrictObject({ business_code: PositiveId({ description: 'The merchant\'s business_code', example: 1001 }) });
export const PartnerIdParams = StrictObject({ partner_id: PositiveId() });
export const KeyPrefixParams = StrictObject({ key_prefix: Type.String({ minLength: 1, maxLength: 64 }) });

export const CreatePartnerBody = StrictObject({
  name: Type.String({ minLength: 1, maxLength: 200, ...notBlank }),
});
export type CreatePartnerBody = Static<typeof CreatePartnerBody>;

export const CreatedPartnerSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  master_key: Type.String({ description: 'Shown once: only its SHA-256 is stored' }),
  key_prefix: Type.String(),
});

export const PartnerSchema = Type.Object({ id: Type.Integer(), name: Type.String(), created_at: Timestamp() });

/** A merchant's (or partner's) name. */
export const MerchantName = Type.String({ minLength: 1, maxLength: 200, ...notBlank });
export const MerchantCity = Type.String({ minLength: 1, maxLength: 100, ...notBlank, description: 'Default La Paz' });
export const MerchantCategoryCode = Type.String({ maxLength: 64, pattern: '^[0-9]{4}$', 'x-format-hint': 'must be 4 digits', description: 'Merchant category code, 4 digits; default 5999' });

/**
 * A QR price's percentage, 0–10.00 with at most two decimals. Not money, but read by the same exact rule as
 * an amount (the `x-money` keyword, money.ts parseAmount), so 1.5 becomes 150 hundredths of a percent
 * (basis points) without passing through a binary fraction, and a bad value fails with the same field codes.
 */
const QrPercent = Type.Unsafe<number | string>({
  type: ['number', 'string'],
  'x-money': { min: 0, max: MAX_QR_BASIS_POINTS },
  description: 'Percentage of each QR payment\'s amount, 0 to 10.00, at most two decimals (1.5 is 1.5 %)',
  example: 1.5,
});

/** The three fields of a price plan (docs/fees.md#price-plans); each may be left out. */
export const PricingBody = StrictObject({
  qr_percent: Type.Optional(QrPercent),
  qr_fixed: Type.Optional(MoneyAmount(0, MAX_FIXED_FEE, { description: 'Added to the fee of each QR payment, in BOB: 0 to 100.00', example: 0.3 })),
  transfer_fixed: Type.Optional(MoneyAmount(0, MAX_FIXED_FEE, { description: 'Charged on each transfer, in BOB: 0 to 100.00', example: 0.5 })),
}, { description: 'A price plan. Fields left out keep their value: on creation, the default plan of FEE_QR and FEE_TRANSFER' });
export type PricingBody = Static<typeof PricingBody>;

/** A merchant's price plan as the operator reads it. */
export const PricingSchema = Type.Object({
  qr_percent: Type.Number({ description: 'Percentage of each QR payment, e.g. 1.5' }),
  qr_fixed: Type.Number({ description: 'BOB added to each QR payment\'s fee' }),
  transfer_fixed: Type.Number({ description: 'BOB charged on each transfer' }),
}, { description: 'The price plan in force: a change applies to payments recorded and transfers created after it' });

export const CreateMerchantBody = StrictObject({
  name: MerchantName,
  city: Type.Optional(MerchantCity),
  mcc: Type.Optional(MerchantCategoryCode),
  ach_enabled: Type.Optional(Type.Boolean({ description: 'ACH transfer module; default false' })),
  partner_id: Type.Optional(PositiveId()),
  pricing: Type.Optional(PricingBody),
});
export type CreateMerchantBody = Static<typeof CreateMerchantBody>;

export const CreatedMerchantSchema = Type.Object({
  business_code: BusinessCode(),
  name: Type.String(),
  city: Type.String(),
  mcc: Type.String(),
  ach_enabled: Type.Boolean(),
  pricing: PricingSchema,
  api_key: Type.String({ description: 'Shown once: only its SHA-256 is stored' }),
  key_prefix: Type.String(),
});

export const UpdateMerchantBody = StrictObject({
  ach_enabled: Type.Optional(Type.Boolean()),
  status: Type.Optional(StringEnum(['active', 'suspended'])),
  pricing: Type.Optional(PricingBody),
});
export type UpdateMerchantBody = Static<typeof UpdateMerchantBody>;

export const MerchantSchema = Type.Object({
  business_code: BusinessCode(),
  name: Type.String(),
  city: Type.String(),
  mcc: Type.String(),
  status: StringEnum(['active', 'suspended']),
  ach_enabled: Type.Boolean(),
  partner_id: Type.Union([Type.Integer(), Type.Null()]),
  pricing: PricingSchema,
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

const KEY_KINDS = ['merchant', 'terminal'] as const;

export const CreateMerchantKeyBody = StrictObject({
  kind: Type.Optional(StringEnum(KEY_KINDS, {
    default: 'merchant',
    description: 'merchant: the whole merchant API; terminal (tk_…): a POS or kiosk key for QRs and their payments only',
  })),
});
export type CreateMerchantKeyBody = Static<typeof CreateMerchantKeyBody>;

export const CreatedMerchantKeySchema = Type.Object({
  api_key: Type.String({ description: 'Shown once: only its SHA-256 is stored' }),
  key_prefix: Type.String(),
  kind: StringEnum(KEY_KINDS),
});
export const CreatedMasterKeySchema = Type.Object({ master_key: Type.String(), key_prefix: Type.String() });

export const ApiKeyListingSchema = Type.Object({
  key_prefix: Type.String(),
  kind: StringEnum(['merchant', 'terminal', 'partner'] as const),
  created_at: Timestamp(),
  last_used_at: Type.Union([Timestamp(), Type.Null()]),
  revoked_at: Type.Union([Timestamp(), Type.Null()]),
});
