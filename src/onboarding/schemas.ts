// Schemas of the onboarding intent routes (docs/api-reference.md#create-an-intent, docs/api-reference.md#read-an-intent): validation, OpenAPI and types from one definition.
import { Type, type Static } from '@sinclair/typebox';
import type { BankConfig } from '../config.ts';
import { BusinessCode, EmailAddress, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';
import { MerchantCategoryCode, MerchantCity, MerchantName } from '../merchants/schemas.ts';
import { AccountTitular, BankAccountNumber, bankCodeSchema } from '../transfers/schemas.ts';

export const INTENT_STATUSES = ['open', 'completed', 'cancelled', 'expired'] as const;

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 40;
export const METADATA_MAX_STRING_LENGTH = 500;
export const REDIRECT_URL_MAX_LENGTH = 2048;

const RedirectUrl = (description: string) => Type.String({
  maxLength: REDIRECT_URL_MAX_LENGTH,
  // the service also parses it (service.ts checkRedirectUrl): a host is required
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$',
  'x-format-hint': 'must be an absolute http or https URL',
  description,
  example: 'https://partner.example/onboarding/done',
});

const MetadataValue = Type.Unsafe<string | number | boolean | null>({
  type: ['string', 'number', 'boolean', 'null'],
  maxLength: METADATA_MAX_STRING_LENGTH,
  description: `A string of at most ${METADATA_MAX_STRING_LENGTH} characters, a number, a boolean or null`,
});

// additionalProperties rather than Type.Record: TypeBox writes a record as patternProperties `^(.*)$`, whose
// `.` does not match a line break, so a key such as "a\n" would escape every rule on its value.
export const MetadataSchema = Type.Unsafe<Record<string, string | number | boolean | null>>({
  type: 'object',
  additionalProperties: MetadataValue,
  maxProperties: METADATA_MAX_KEYS,
  propertyNames: { maxLength: METADATA_MAX_KEY_LENGTH },
  description: `Up to ${METADATA_MAX_KEYS} keys of at most ${METADATA_MAX_KEY_LENGTH} characters; returned unchanged in the query and in every onboarding_intent.* webhook`,
  example: { partner_customer_id: 'cus_881', plan: 'pro' },
});

export const CreateIntentBody = StrictObject({
  success_url: Type.Optional(RedirectUrl('Where the merchant goes after activation; gets ?code=<intent code>')),
  cancel_url: Type.Optional(RedirectUrl('Where the merchant goes after choosing Cancel')),
  metadata: Type.Optional(MetadataSchema),
});
export type CreateIntentBody = Static<typeof CreateIntentBody>;

export const CreatedIntentSchema = Type.Object({
  code: Type.String({ example: 'onb_3fA9kQ2xLm8PzR4tVw7yBc' }),
  url: Type.String({ description: 'The hosted registration flow: redirect the merchant there now; do not store it', example: 'https://pay.example.com/onboarding/…' }),
  expires_at: Timestamp(),
});

const NullableTimestamp = () => Type.Union([Timestamp(), Type.Null()]);

export const IntentSchema = Type.Object({
  code: Type.String(),
  status: StringEnum(INTENT_STATUSES, { description: 'open, completed, cancelled or expired (past expires_at reads expired at once)' }),
  expires_at: Timestamp(),
  created_at: Timestamp(),
  completed_at: NullableTimestamp(),
  cancelled_at: NullableTimestamp(),
  business_code: Type.Union([BusinessCode(), Type.Null()], { description: 'The new merchant; null until completed' }),
  metadata: MetadataSchema,
  success_url: Type.Union([Type.String(), Type.Null()]),
  cancel_url: Type.Union([Type.String(), Type.Null()]),
});
export type IntentView = Static<typeof IntentSchema>;

export const IntentCodeParams = Type.Object({ code: Type.String({ maxLength: 64 }) });

/**
 * The hosted registration form (docs/api-reference.md#hosted-onboarding-flow), checked like an API body:
 * the merchant's fields are the operator API's, the payout account's are the transfers API's, so a
 * registered merchant can always be paid out to. `mcc` is left out when empty.
 */
export function registrationFormSchema(banks: readonly BankConfig[]) {
  return StrictObject({
    legal_name: MerchantName,
    trade_name: MerchantName,
    tax_id: Type.String({ maxLength: 64, pattern: '^[0-9]{5,15}$', 'x-format-hint': 'must be 5 to 15 digits', description: 'NIT, the tax id' }),
    email: EmailAddress(),
    // 7 to 15 digits, written with an optional +, spaces, hyphens and parentheses, at most 20 characters.
    phone: Type.String({
      maxLength: 20,
      pattern: '^(?=(?:[^0-9]*[0-9]){7,15}[^0-9]*$)\\+?[0-9 ()-]+$',
      'x-format-hint': 'must have 7 to 15 digits',
    }),
    city: MerchantCity,
    mcc: Type.Optional(MerchantCategoryCode),
    bank_code: bankCodeSchema(banks),
    account_number: BankAccountNumber,
    account_holder: AccountTitular,
  });
}
