// Partners, merchants and their API keys: the operator's operations (admin API and CLI share them) and
// the key lookup behind authentication.
import type { Mode } from '../config.ts';
import type { Database, Queryable, Transaction } from '../db/database.ts';
import { notFound } from '../kernel/errors.ts';
import * as ledger from '../ledger/service.ts';
import { validatedCentavos } from '../money.ts';
import { generateApiKey, type KeyKind } from './keys.ts';
import { FREE_PLAN, MAX_FIXED_FEE, MAX_QR_BASIS_POINTS, type PricePlan } from './pricing.ts';
import type { PricingBody } from './schemas.ts';
import * as store from './store.ts';
import type { ApiKeyRow, KeyOwnerRow, MerchantRow, MerchantStatus, PartnerRow } from './store.ts';
import type { FullAccountNumber } from '../masking.ts';

export type { ApiKeyRow, KeyOwnerRow, KeyScope, MerchantRow, MerchantStatus, PartnerRow } from './store.ts';

/** Channel telling every instance to drop its cached key verifications (revocation, suspension, module change). */
export const AUTH_CHANGED_CHANNEL = 'mps_auth_changed';

export const DEFAULT_CITY = 'La Paz';
export const DEFAULT_MCC = '5999';

export interface CreatedPartner {
  partner: PartnerRow;
  masterKey: string;
  keyPrefix: string;
}

/** Creates a partner with its first master key. */
export async function createPartner(db: Database, name: string, mode: Mode, now: Date): Promise<CreatedPartner> {
  return db.transaction((tx) => createPartnerIn(tx, name, mode, now));
}

/** `createPartner` inside the caller's transaction (the first run's sandbox accounts). */
export async function createPartnerIn(tx: Transaction, name: string, mode: Mode, now: Date): Promise<CreatedPartner> {
  const partner = await store.insertPartner(tx, name, now);
  const key = generateApiKey('partner', mode);
  await store.insertApiKey(tx, { keyPrefix: key.keyPrefix, keyHash: key.keyHash, owner: { kind: 'partner', partnerId: partner.id } }, now);
  return { partner, masterKey: key.apiKey, keyPrefix: key.keyPrefix };
}

export interface NewMerchant {
  name: string;
  city?: string;
  mcc?: string;
  achEnabled?: boolean;
  partnerId?: number | null;
  /**
   * Every way the service creates a merchant passes the configured default (config.defaultPricePlan), with
   * the operator's own fields over it (planWith); the tests of each path check it. Left out (tests and
   * benchmarks that make merchants directly): the free plan, the plan of every merchant before price plans.
   */
  plan?: PricePlan;
}

/**
 * The plan fields a request names, from the API's numbers (1.5 %, 0.30 BOB) to basis points and centavos.
 * The schema's `x-money` keyword has accepted them with the same bounds; fields left out are left out.
 */
export function planChangeOf(pricing: PricingBody | undefined): Partial<PricePlan> {
  const change: Partial<PricePlan> = {};
  if (pricing?.qr_percent !== undefined) change.qrBasisPoints = validatedCentavos(pricing.qr_percent, { min: 0, max: MAX_QR_BASIS_POINTS });
  if (pricing?.qr_fixed !== undefined) change.qrFixed = validatedCentavos(pricing.qr_fixed, { min: 0, max: MAX_FIXED_FEE });
  if (pricing?.transfer_fixed !== undefined) change.transferFixed = validatedCentavos(pricing.transfer_fixed, { min: 0, max: MAX_FIXED_FEE });
  return change;
}

/** `base` with the fields a request names over it: a new merchant's plan from the default and its `pricing`. */
export function planWith(base: PricePlan, pricing: PricingBody | undefined): PricePlan {
  return { ...base, ...planChangeOf(pricing) };
}

export interface CreatedMerchant {
  merchant: MerchantRow;
  apiKey: string;
  keyPrefix: string;
}

/** Creates a merchant with its zero balance and first API key. Throws 404 for an unknown partner. */
export async function createMerchant(db: Database, request: NewMerchant, mode: Mode, now: Date): Promise<CreatedMerchant> {
  return db.transaction((tx) => createMerchantIn(tx, request, mode, now));
}

/** `createMerchant` inside the caller's transaction (the first run's sandbox accounts). */
export async function createMerchantIn(tx: Transaction, request: NewMerchant, mode: Mode, now: Date): Promise<CreatedMerchant> {
  const merchant = await insertMerchantWithBalance(tx, request, now);
  const { apiKey, keyPrefix } = await createMerchantApiKeyIn(tx, merchant.business_code, mode, now);
  return { merchant, apiKey, keyPrefix };
}

async function insertMerchantWithBalance(tx: Transaction, request: NewMerchant, now: Date): Promise<MerchantRow> {
  const partnerId = request.partnerId ?? null;
  if (partnerId !== null && !(await store.findPartner(tx, partnerId))) throw notFound('partner');
  const merchant = await store.insertMerchant(tx, {
    name: request.name,
    city: request.city ?? DEFAULT_CITY,
    mcc: request.mcc ?? DEFAULT_MCC,
    achEnabled: request.achEnabled ?? false,
    partnerId,
    plan: request.plan ?? FREE_PLAN,
  }, now);
  await ledger.openBalance(tx, merchant.business_code, now);
  return merchant;
}

export interface MerchantProfile {
  legalName: string;
  taxId: string;
  email: string;
  phone: string;
}

export interface PayoutAccount {
  bankCode: number;
  /** Full number: stored only, shown masked. */
  accountNumber: FullAccountNumber;
  accountHolder: string;
}

/**
 * Creates a self-registered merchant (onboarding): merchant, zero balance, profile and payout account, but
 * no API key — the onboarding done page creates the first key when the merchant's browser comes back.
 */
export async function createRegisteredMerchant(
  tx: Transaction,
  request: NewMerchant & { profile: MerchantProfile; payoutAccount: PayoutAccount },
  now: Date,
): Promise<MerchantRow> {
  const merchant = await insertMerchantWithBalance(tx, request, now);
  await store.insertMerchantProfile(tx, merchant.business_code, request.profile, now);
  await store.insertPayoutAccount(tx, merchant.business_code, request.payoutAccount, now);
  return merchant;
}

export async function findPayoutAccount(db: Queryable, businessCode: number): Promise<PayoutAccount | undefined> {
  return store.findPayoutAccount(db, businessCode);
}

/** What a payment needs to know of the merchant it pays. */
export interface PaymentStanding {
  /** False for a suspended merchant: its QRs refuse payment, whatever channel reports one. */
  acceptsPayments: boolean;
  /** The platform's own merchant account: what it collects are activation fees, not sales. */
  isPlatform: boolean;
  /** The plan in force when the payment is recorded (docs/fees.md: a plan change applies forward only). */
  plan: PricePlan;
}

/**
 * Read under a share lock in the payment's transaction (docs/architecture.md, rule 4), so a suspension
 * and a payment never overlap.
 */
export async function paymentStanding(tx: Transaction, businessCode: number): Promise<PaymentStanding> {
  const merchant = await store.lockMerchantStatus(tx, businessCode);
  return {
    acceptsPayments: merchant?.status === 'active',
    isPlatform: merchant?.is_platform ?? false,
    plan: merchant ? store.toPricePlan(merchant) : FREE_PLAN,
  };
}

/** The plans of the merchants a batch of transfers debits, read under a share lock in its transaction. */
export async function lockPricePlans(tx: Transaction, businessCodes: readonly number[]): Promise<Map<number, PricePlan>> {
  return store.lockPricePlans(tx, businessCodes);
}

/** What a scheduled payout needs to know of its merchant (docs/payouts.md). */
export interface PayoutStanding {
  /** Suspended merchants are skipped. */
  active: boolean;
  /** So are merchants whose ACH module was switched off after their schedule was set. */
  achEnabled: boolean;
  /** The plan in force, whose transfer fee the payout leaves room for and is charged. */
  plan: PricePlan;
}

/** Read under a share lock in the payout's transaction; 404 for an unknown merchant (a bug: a schedule has one). */
export async function payoutStanding(tx: Transaction, businessCode: number): Promise<PayoutStanding> {
  const merchant = await store.lockPayoutStanding(tx, businessCode);
  if (!merchant) throw notFound('merchant');
  return { active: merchant.status === 'active', achEnabled: merchant.ach_enabled, plan: store.toPricePlan(merchant) };
}

export async function getMerchant(db: Queryable, businessCode: number): Promise<MerchantRow> {
  const merchant = await store.findMerchant(db, businessCode);
  if (!merchant) throw notFound('merchant');
  return merchant;
}

/** The price plan in force for the merchant now (docs/fees.md): what its next payment or transfer is charged. */
export async function pricePlanOf(db: Queryable, businessCode: number): Promise<PricePlan> {
  return store.toPricePlan(await getMerchant(db, businessCode));
}

/** The platform's own merchant account, which collects onboarding activation fees; null before migrations made it. */
export async function platformBusinessCode(db: Queryable): Promise<number | null> {
  return store.findPlatformBusinessCode(db);
}

export async function merchantNames(db: Queryable, businessCodes: readonly number[]): Promise<Map<number, string>> {
  return businessCodes.length === 0 ? new Map() : store.findMerchantNames(db, businessCodes);
}

export async function listMerchants(db: Queryable): Promise<MerchantRow[]> {
  return store.listMerchants(db);
}

export async function listPartners(db: Queryable): Promise<PartnerRow[]> {
  return store.listPartners(db);
}

/**
 * Turns the ACH module on or off, suspends or reactivates, and changes any fields of the price plan. A
 * module or status change makes every instance drop its cached keys within moments; a plan is cached
 * nowhere (a payment or transfer reads it under a share lock), so a plan change alone announces nothing.
 * Like the other settings, it is recorded as the row's new value and `updated_at`, with no event.
 */
export async function updateMerchant(
  db: Database,
  businessCode: number,
  settings: { achEnabled?: boolean; status?: MerchantStatus; plan?: Partial<PricePlan> },
  now: Date,
): Promise<MerchantRow> {
  return db.transaction(async (tx) => {
    const merchant = await store.updateMerchantSettings(tx, businessCode, {
      achEnabled: settings.achEnabled ?? null,
      status: settings.status ?? null,
      qrBasisPoints: settings.plan?.qrBasisPoints ?? null,
      qrFixed: settings.plan?.qrFixed ?? null,
      transferFixed: settings.plan?.transferFixed ?? null,
    }, now);
    if (!merchant) throw notFound('merchant');
    if (settings.achEnabled !== undefined || settings.status !== undefined) tx.notifyAfterCommit(AUTH_CHANGED_CHANNEL);
    return merchant;
  });
}

/** The kinds of key a merchant can hold: its full API key, or a terminal key (QRs and their payments only). */
export type MerchantKeyKind = Exclude<KeyKind, 'partner'>;

export interface CreatedMerchantKey {
  apiKey: string;
  keyPrefix: string;
  kind: MerchantKeyKind;
}

/** Creates another key for a merchant; `kind` terminal makes a key for a POS or kiosk that cannot move money out. */
export async function createMerchantApiKey(
  db: Database, businessCode: number, mode: Mode, now: Date, kind: MerchantKeyKind = 'merchant',
): Promise<CreatedMerchantKey> {
  return db.transaction((tx) => createMerchantApiKeyIn(tx, businessCode, mode, now, kind));
}

/** `createMerchantApiKey` inside the caller's transaction (a new merchant's first key; onboarding's, when the merchant comes back). */
export async function createMerchantApiKeyIn(
  tx: Transaction, businessCode: number, mode: Mode, now: Date, kind: MerchantKeyKind = 'merchant',
): Promise<CreatedMerchantKey> {
  if (!(await store.findMerchant(tx, businessCode))) throw notFound('merchant');
  const key = generateApiKey(kind, mode);
  const scope = kind === 'terminal' ? 'terminal' : 'full';
  await store.insertApiKey(tx, { keyPrefix: key.keyPrefix, keyHash: key.keyHash, owner: { kind: 'merchant', businessCode, scope } }, now);
  return { apiKey: key.apiKey, keyPrefix: key.keyPrefix, kind };
}

export async function createPartnerMasterKey(db: Database, partnerId: number, mode: Mode, now: Date): Promise<{ masterKey: string; keyPrefix: string }> {
  return db.transaction(async (tx) => {
    if (!(await store.findPartner(tx, partnerId))) throw notFound('partner');
    const key = generateApiKey('partner', mode);
    await store.insertApiKey(tx, { keyPrefix: key.keyPrefix, keyHash: key.keyHash, owner: { kind: 'partner', partnerId } }, now);
    return { masterKey: key.apiKey, keyPrefix: key.keyPrefix };
  });
}

export async function listMerchantApiKeys(db: Queryable, businessCode: number): Promise<ApiKeyRow[]> {
  await getMerchant(db, businessCode);
  return store.listApiKeysOfMerchant(db, businessCode);
}

export async function listPartnerApiKeys(db: Queryable, partnerId: number): Promise<ApiKeyRow[]> {
  if (!(await store.findPartner(db, partnerId))) throw notFound('partner');
  return store.listApiKeysOfPartner(db, partnerId);
}

/** Revokes a live key by its prefix; 404 when no live key has it. */
export async function revokeApiKey(db: Database, keyPrefix: string, now: Date): Promise<ApiKeyRow> {
  return db.transaction(async (tx) => {
    const key = await store.revokeApiKey(tx, keyPrefix, now);
    if (!key) throw notFound('API key');
    tx.notifyAfterCommit(AUTH_CHANGED_CHANNEL);
    return key;
  });
}

/**
 * Revokes a live key of `businessCode` by its prefix (the merchant console's revoke): 404 when the merchant
 * has no live key of that prefix — another merchant's key is not found, and stays live. Effective at once
 * on every instance, like `revokeApiKey`.
 */
export async function revokeMerchantApiKey(db: Database, businessCode: number, keyPrefix: string, now: Date): Promise<ApiKeyRow> {
  return db.transaction(async (tx) => {
    const key = await store.revokeApiKeyOfMerchant(tx, businessCode, keyPrefix, now);
    if (!key) throw notFound('API key');
    tx.notifyAfterCommit(AUTH_CHANGED_CHANNEL);
    return key;
  });
}

export async function findKeyOwner(db: Queryable, keyHash: string): Promise<KeyOwnerRow | undefined> {
  return store.findKeyOwnerByHash(db, keyHash);
}

export async function recordKeyUse(db: Queryable, keyId: number, now: Date): Promise<void> {
  await store.touchApiKey(db, keyId, now);
}

/** True when nothing but the platform account exists yet (first run). */
export async function isEmpty(db: Queryable): Promise<boolean> {
  return (await store.countOrdinaryMerchantsAndPartners(db)) === 0;
}

/** What a stored key is: a merchant's full key, a merchant's terminal key, or a partner's master key. */
export function keyKindOf(key: Pick<ApiKeyRow, 'owner_kind' | 'scope'>): KeyKind {
  if (key.owner_kind === 'partner') return 'partner';
  return key.scope === 'terminal' ? 'terminal' : 'merchant';
}

