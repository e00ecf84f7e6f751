// The operator's views of partners, merchants and keys: pure functions from rows to the JSON the admin
// API and the CLI answer alike (docs/architecture.md#conventions).
import type { CreatedMerchant, CreatedPartner } from './service.ts';
import { keyKindOf } from './service.ts';
import type { ApiKeyRow, MerchantRow, PartnerRow } from './store.ts';

export function toPartnerView(partner: PartnerRow) {
  return { id: partner.id, name: partner.name, created_at: partner.created_at.toISOString() };
}

/** A new partner with its first master key, shown once. */
export function toCreatedPartnerView(created: CreatedPartner) {
  return { id: created.partner.id, name: created.partner.name, master_key: created.masterKey, key_prefix: created.keyPrefix };
}

/** A new merchant with its first API key, shown once (the admin API's answer). */
export function toCreatedMerchantView(created: CreatedMerchant) {
  const { merchant } = created;
  return {
    business_code: merchant.business_code,
    name: merchant.name,
    city: merchant.city,
    mcc: merchant.mcc,
    ach_enabled: merchant.ach_enabled,
    api_key: created.apiKey,
    key_prefix: created.keyPrefix,
  };
}

/** The wire form of a merchant for the operator. */
export function toMerchantView(merchant: MerchantRow) {
  return {
    business_code: merchant.business_code,
    name: merchant.name,
    city: merchant.city,
    mcc: merchant.mcc,
    status: merchant.status,
    ach_enabled: merchant.ach_enabled,
    partner_id: merchant.partner_id,
    created_at: merchant.created_at.toISOString(),
    updated_at: merchant.updated_at.toISOString(),
  };
}

/** The wire form of an API key listing row (docs/api-reference.md#operator-api-keys). */
export function toApiKeyListing(key: ApiKeyRow) {
  return {
    key_prefix: key.key_prefix,
    kind: keyKindOf(key),
    created_at: key.created_at.toISOString(),
    last_used_at: key.last_used_at?.toISOString() ?? null,
    revoked_at: key.revoked_at?.toISOString() ?? null,
  };
}
