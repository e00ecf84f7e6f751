// Schemas of the operator API for partners, merchants and keys (docs/api-reference.md#operator-api).
import { Type, type Static } from '@sinclair/typebox';
import { PositiveId, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';

/** Text that is not only spaces. */
const notBlank = { pattern: '\\S', 'x-format-hint': 'must not be blank' };

export const BusinessCodeParams = StrictObject({ business_code: PositiveId({ description: 'The merchant\'s business_code' }) });
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

export const CreateMerchantBody = StrictObject({
  name: MerchantName,
  city: Type.Optional(MerchantCity),
  mcc: Type.Optional(MerchantCategoryCode),
  ach_enabled: Type.Optional(Type.Boolean({ description: 'ACH transfer module; default false' })),
  partner_id: Type.Optional(PositiveId()),
});
export type CreateMerchantBody = Static<typeof CreateMerchantBody>;

export const CreatedMerchantSchema = Type.Object({
  business_code: Type.Integer(),
  name: Type.String(),
  city: Type.String(),
  mcc: Type.String(),
  ach_enabled: Type.Boolean(),
  api_key: Type.String({ description: 'Shown once: only its SHA-256 is stored' }),
  key_prefix: Type.String(),
});

export const UpdateMerchantBody = StrictObject({
  ach_enabled: Type.Optional(Type.Boolean()),
  status: Type.Optional(StringEnum(['active', 'suspended'])),
});
export type UpdateMerchantBody = Static<typeof UpdateMerchantBody>;

export const MerchantSchema = Type.Object({
  business_code: Type.Integer(),
  name: Type.String(),
  city: Type.String(),
  mcc: Type.String(),
  status: StringEnum(['active', 'suspended']),
  ach_enabled: Type.Boolean(),
  partner_id: Type.Union([Type.Integer(), Type.Null()]),
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
