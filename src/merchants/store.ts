// SQL of partners, merchants and API keys. Every function takes the transaction (or the database for a single read) first.
import type { Queryable } from '../db/database.ts';
import type { KeyOwnerKind } from './keys.ts';
import { FullAccountNumber, revealAccountNumber } from '../masking.ts';
import type { Centavos } from '../money.ts';
import type { PricePlan } from './pricing.ts';

export type MerchantStatus = 'active' | 'suspended';

/** The price plan columns of migration 022. */
export interface PricePlanColumns {
  fee_qr_basis_points: number;
  fee_qr_fixed_centavos: Centavos;
  fee_transfer_fixed_centavos: Centavos;
}

const PRICE_PLAN_COLUMNS = 'fee_qr_basis_points, fee_qr_fixed_centavos, fee_transfer_fixed_centavos';

export function toPricePlan(row: PricePlanColumns): PricePlan {
  return { qrBasisPoints: row.fee_qr_basis_points, qrFixed: row.fee_qr_fixed_centavos, transferFixed: row.fee_transfer_fixed_centavos };
}

/** A merchant with its price plan: the plan in force is always the row's current columns. */
export interface MerchantRow extends PricePlanColumns {
  business_code: number;
  name: string;
  city: string;
  mcc: string;
  status: MerchantStatus;
  ach_enabled: boolean;
  partner_id: number | null;
  is_platform: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface PartnerRow {
  id: number;
  name: string;
  created_at: Date;
}

/** What a key may do: everything its owner may (`full`), or QRs and their payments only (`terminal`). */
export type KeyScope = 'full' | 'terminal';

export interface ApiKeyRow {
  id: number;
  key_prefix: string;
  owner_kind: KeyOwnerKind;
  scope: KeyScope;
  business_code: number | null;
  partner_id: number | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** What a verified key stands for, read in one statement on the authentication path. */
export interface KeyOwnerRow {
  key_id: number;
  key_prefix: string;
  owner_kind: KeyOwnerKind;
  scope: KeyScope;
  business_code: number | null;
  partner_id: number | null;
  merchant_status: MerchantStatus | null;
  ach_enabled: boolean | null;
}

const MERCHANT_COLUMNS = `business_code, name, city, mcc, status, ach_enabled, partner_id, is_platform, ${PRICE_PLAN_COLUMNS}, created_at, updated_at`;
const API_KEY_COLUMNS = 'id, key_prefix, owner_kind, scope, business_code, partner_id, created_at, last_used_at, revoked_at';

export async function insertPartner(tx: Queryable, name: string, now: Date): Promise<PartnerRow> {
  const { rows } = await tx.query<PartnerRow>(
    'insert into partners (name, created_at) values ($1::text, $2::timestamptz) returning id, name, created_at',
    [name, now],
  );
  return rows[0]!;
}

export async function findPartner(tx: Queryable, partnerId: number): Promise<PartnerRow | undefined> {
  const { rows } = await tx.query<PartnerRow>('select id, name, created_at from partners where id = $1::bigint', [partnerId]);
  return rows[0];
}

export async function listPartners(tx: Queryable): Promise<PartnerRow[]> {
  const { rows } = await tx.query<PartnerRow>('select id, name, created_at from partners order by id');
  return rows;
}

export async function insertMerchant(
  tx: Queryable,
  merchant: { name: string; city: string; mcc: string; achEnabled: boolean; partnerId: number | null; plan: PricePlan },
  now: Date,
): Promise<MerchantRow> {
  const { rows } = await tx.query<MerchantRow>(
    `insert into merchants (name, city, mcc, ach_enabled, partner_id, ${PRICE_PLAN_COLUMNS}, created_at, updated_at)
     values ($1::text, $2::text, $3::text, $4::boolean, $5::bigint, $6::integer, $7::bigint, $8::bigint, $9::timestamptz, $9::timestamptz)
     returning ${MERCHANT_COLUMNS}`,
    [merchant.name, merchant.city, merchant.mcc, merchant.achEnabled, merchant.partnerId,
      merchant.plan.qrBasisPoints, merchant.plan.qrFixed, merchant.plan.transferFixed, now],
  );
  return rows[0]!;
}

export async function findMerchant(tx: Queryable, businessCode: number): Promise<MerchantRow | undefined> {
  const { rows } = await tx.query<MerchantRow>(`select ${MERCHANT_COLUMNS} from merchants where business_code = $1::bigint`, [businessCode]);
  return rows[0];
}

/**
 * The merchant's status, share-locked until the caller's transaction ends: a payment that reads `active`
 * commits before a suspension can, and one that starts after a suspension waits for it and reads it.
 */
export async function lockMerchantStatus(tx: Queryable, businessCode: number): Promise<({ status: MerchantStatus; is_platform: boolean } & PricePlanColumns) | undefined> {
  const { rows } = await tx.query<{ status: MerchantStatus; is_platform: boolean } & PricePlanColumns>(
    `select status, is_platform, ${PRICE_PLAN_COLUMNS} from merchants where business_code = $1::bigint for share`,
    [businessCode],
  );
  return rows[0];
}

/**
 * The plans of several merchants, share-locked until the caller's transaction ends, like the status a
 * payment reads: a plan change waits for the transfers being created under the old plan and applies to
 * every one created after it.
 */
export async function lockPricePlans(tx: Queryable, businessCodes: readonly number[]): Promise<Map<number, PricePlan>> {
  const { rows } = await tx.query<{ business_code: number } & PricePlanColumns>(
    `select business_code, ${PRICE_PLAN_COLUMNS} from merchants where business_code = any($1::bigint[]) order by business_code for share`,
    [[...new Set(businessCodes)]],
  );
  return new Map(rows.map((row) => [Number(row.business_code), toPricePlan(row)]));
}

/** The platform's own merchant account (it collects onboarding activation fees), if the database has one. */
export async function findPlatformBusinessCode(tx: Queryable): Promise<number | null> {
  const { rows } = await tx.query<{ business_code: number }>('select business_code from merchants where is_platform');
  return rows[0] ? Number(rows[0].business_code) : null;
}

/** The names of the merchants `businessCodes` lists (those that exist). */
export async function findMerchantNames(tx: Queryable, businessCodes: readonly number[]): Promise<Map<number, string>> {
  const { rows } = await tx.query<{ business_code: number; name: string }>(
    'select business_code, name from merchants where business_code = any($1::bigint[])', [[...businessCodes]]);
  return new Map(rows.map((row) => [Number(row.business_code), row.name]));
}

export async function listMerchants(tx: Queryable): Promise<MerchantRow[]> {
  const { rows } = await tx.query<MerchantRow>(`select ${MERCHANT_COLUMNS} from merchants order by business_code`);
  return rows;
}

/**
 * Sets the given settings of a merchant; a null setting is left as it is. The update's row lock waits for
 * the payments and transfers holding the row's share lock (lockMerchantStatus, lockPricePlans), so a plan
 * change applies to everything recorded after it and to nothing before.
 */
export async function updateMerchantSettings(
  tx: Queryable,
  businessCode: number,
  settings: {
    achEnabled: boolean | null;
    status: MerchantStatus | null;
    qrBasisPoints: number | null;
    qrFixed: Centavos | null;
    transferFixed: Centavos | null;
  },
  now: Date,
): Promise<MerchantRow | undefined> {
  const { rows } = await tx.query<MerchantRow>(
    `update merchants
        set ach_enabled = coalesce($2::boolean, ach_enabled),
            status = coalesce($3::text, status),
            fee_qr_basis_points = coalesce($4::integer, fee_qr_basis_points),
            fee_qr_fixed_centavos = coalesce($5::bigint, fee_qr_fixed_centavos),
            fee_transfer_fixed_centavos = coalesce($6::bigint, fee_transfer_fixed_centavos),
            updated_at = $7::timestamptz
      where business_code = $1::bigint
      returning ${MERCHANT_COLUMNS}`,
    [businessCode, settings.achEnabled, settings.status, settings.qrBasisPoints, settings.qrFixed, settings.transferFixed, now],
  );
  return rows[0];
}

export async function insertApiKey(
  tx: Queryable,
  key: {
    keyPrefix: string;
    keyHash: string;
    owner: { kind: 'merchant'; businessCode: number; scope: KeyScope } | { kind: 'partner'; partnerId: number };
  },
  now: Date,
): Promise<ApiKeyRow> {
  const { rows } = await tx.query<ApiKeyRow>(
    `insert into api_keys (key_prefix, key_hash, owner_kind, scope, business_code, partner_id, created_at)
     values ($1::text, $2::text, $3::text, $4::text, $5::bigint, $6::bigint, $7::timestamptz)
     returning ${API_KEY_COLUMNS}`,
    [
      key.keyPrefix,
      key.keyHash,
      key.owner.kind,
      key.owner.kind === 'merchant' ? key.owner.scope : 'full',
      key.owner.kind === 'merchant' ? key.owner.businessCode : null,
      key.owner.kind === 'partner' ? key.owner.partnerId : null,
      now,
    ],
  );
  return rows[0]!;
}

export async function listApiKeysOfMerchant(tx: Queryable, businessCode: number): Promise<ApiKeyRow[]> {
  const { rows } = await tx.query<ApiKeyRow>(
    `select ${API_KEY_COLUMNS} from api_keys where business_code = $1::bigint order by created_at, id`,
    [businessCode],
  );
  return rows;
}

export async function listApiKeysOfPartner(tx: Queryable, partnerId: number): Promise<ApiKeyRow[]> {
  const { rows } = await tx.query<ApiKeyRow>(
    `select ${API_KEY_COLUMNS} from api_keys where partner_id = $1::bigint order by created_at, id`,
    [partnerId],
  );
  return rows;
}

/** Revokes a key that is not revoked yet; undefined when no such live key exists. */
export async function revokeApiKey(tx: Queryable, keyPrefix: string, now: Date): Promise<ApiKeyRow | undefined> {
  const { rows } = await tx.query<ApiKeyRow>(
    `update api_keys set revoked_at = $2::timestamptz
      where key_prefix = $1::text and revoked_at is null
      returning ${API_KEY_COLUMNS}`,
    [keyPrefix, now],
  );
  return rows[0];
}

/** Revokes a live key of this merchant only; undefined when the merchant has no live key of that prefix (another's is not touched). */
export async function revokeApiKeyOfMerchant(tx: Queryable, businessCode: number, keyPrefix: string, now: Date): Promise<ApiKeyRow | undefined> {
  const { rows } = await tx.query<ApiKeyRow>(
    `update api_keys set revoked_at = $3::timestamptz
      where key_prefix = $2::text and business_code = $1::bigint and owner_kind = 'merchant' and revoked_at is null
      returning ${API_KEY_COLUMNS}`,
    [businessCode, keyPrefix, now],
  );
  return rows[0];
}

export async function findKeyOwnerByHash(tx: Queryable, keyHash: string): Promise<KeyOwnerRow | undefined> {
  const { rows } = await tx.query<KeyOwnerRow>(
    `select k.id as key_id, k.key_prefix, k.owner_kind, k.scope, k.business_code, k.partner_id,
            m.status as merchant_status, m.ach_enabled
       from api_keys k
       left join merchants m on m.business_code = k.business_code
      where k.key_hash = $1::text and k.revoked_at is null`,
    [keyHash],
  );
  return rows[0];
}

/** Records a key's use; skipped when it was recorded less than a minute ago (POS terminals poll every 2 s). */
export async function touchApiKey(tx: Queryable, keyId: number, now: Date): Promise<void> {
  await tx.query(
    `update api_keys set last_used_at = $2::timestamptz
      where id = $1::bigint and (last_used_at is null or last_used_at < $2::timestamptz - interval '1 minute')`,
    [keyId, now],
  );
}

export async function countOrdinaryMerchantsAndPartners(tx: Queryable): Promise<number> {
  const { rows } = await tx.query<{ total: number }>(
    `select (select count(*) from merchants where not is_platform) + (select count(*) from partners) as total`,
  );
  return Number(rows[0]!.total);
}

export async function insertMerchantProfile(
  tx: Queryable,
  businessCode: number,
  profile: { legalName: string; taxId: string; email: string; phone: string },
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into merchant_profiles (business_code, legal_name, tax_id, email, phone, created_at)
     values ($1::bigint, $2::text, $3::text, $4::text, $5::text, $6::timestamptz)`,
    [businessCode, profile.legalName, profile.taxId, profile.email, profile.phone, now],
  );
}

export async function insertPayoutAccount(
  tx: Queryable,
  businessCode: number,
  account: { bankCode: number; accountNumber: FullAccountNumber; accountHolder: string },
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into merchant_payout_accounts (business_code, bank_code, account_number, account_holder, created_at)
     values ($1::bigint, $2::bigint, $3::text, $4::text, $5::timestamptz)`,
    [businessCode, account.bankCode, revealAccountNumber(account.accountNumber), account.accountHolder, now],
  );
}

export async function findPayoutAccount(
  tx: Queryable,
  businessCode: number,
): Promise<{ bankCode: number; accountNumber: FullAccountNumber; accountHolder: string } | undefined> {
  const { rows } = await tx.query<{ bankCode: number; accountNumber: string; accountHolder: string }>(
    `select bank_code as "bankCode", account_number as "accountNumber", account_holder as "accountHolder"
       from merchant_payout_accounts where business_code = $1::bigint`,
    [businessCode],
  );
  return rows[0] && { ...rows[0], accountNumber: new FullAccountNumber(rows[0].accountNumber) };
}

/**
 * What a scheduled payout reads of its merchant — status, ACH module and price plan — share-locked until the
 * caller's transaction ends, as a payment reads its standing: a suspension or a module switched off waits
 * for the payout being created, and one that committed first is what the payout reads.
 */
export async function lockPayoutStanding(
  tx: Queryable,
  businessCode: number,
): Promise<({ status: MerchantStatus; ach_enabled: boolean } & PricePlanColumns) | undefined> {
  const { rows } = await tx.query<{ status: MerchantStatus; ach_enabled: boolean } & PricePlanColumns>(
    `select status, ach_enabled, ${PRICE_PLAN_COLUMNS} from merchants where business_code = $1::bigint for share`,
    [businessCode],
  );
  return rows[0];
}
