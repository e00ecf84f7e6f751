// The operator's views of partners, merchants and keys: pure functions from rows to the JSON the admin
// API and the CLI answer alike (docs/architecture.md#conventions).
import { centavos, centavosToAmount } from '../money.ts';
import type { PricePlan } from './pricing.ts';
import type { CreatedMerchant, CreatedPartner } from './service.ts';
import { keyKindOf } from './service.ts';
import { toPricePlan, type ApiKeyRow, type MerchantRow, type PartnerRow } from './store.ts';

export function toPartnerView(partner: PartnerRow) {
  return { id: partner.id, name: partner.name, created_at: partner.created_at.toISOString() };
}

/** A new partner with its first master key, shown once. */
export function toCreatedPartnerView(created: CreatedPartner) {
  return { id: created.partner.id, name: created.partner.name, master_key: created.masterKey, key_prefix: created.keyPrefix };
}

/**
 * A price plan as the API shows it: numbers with at most two decimals, read like amounts (1.5 for 150
 * basis points, 0.3 for 30 centavos), so a plan reads back exactly as the operator wrote it.
 */
export function toPricingView(plan: PricePlan) {
  return {
    qr_percent: centavosToAmount(centavos(plan.qrBasisPoints)),
    qr_fixed: centavosToAmount(plan.qrFixed),
    transfer_fixed: centavosToAmount(plan.transferFixed),
  };
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
    pricing: toPricingView(toPricePlan(merchant)),
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
    pricing: toPricingView(toPricePlan(merchant)),
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
