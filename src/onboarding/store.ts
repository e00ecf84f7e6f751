// SQL of onboarding intents. Transitions out of `open` are guarded updates (`where status = 'open' and
// expires_at > $now`), so a completion, a cancel and the expiry sweep can never both win; time is the
// service clock's ($now), never the database's. The flow token is never stored in clear: an intent is found by its
// SHA-256 (`token_hash`, migration 015), and the token itself is kept only sealed (`token_sealed`).
import type { Queryable } from '../db/database.ts';
import { FullAccountNumber, revealAccountNumber } from '../masking.ts';

export type IntentStatus = 'open' | 'completed' | 'cancelled' | 'expired';

export type Metadata = Record<string, string | number | boolean | null>;

export interface IntentRow {
  code: string;
  partner_id: number;
  status: IntentStatus;
  success_url: string | null;
  cancel_url: string | null;
  metadata: Metadata;
  legal_name: string | null;
  trade_name: string | null;
  tax_id: string | null;
  email: string | null;
  phone: string | null;
  city: string | null;
  mcc: string | null;
  payout_bank_code: number | null;
  /**
   * The payout account number while the intent still holds it in full (from the form until it closes);
   * null before the form, and once the closed intent's copy is masked (service.ts forgetFullAccountNumber).
   */
  payout_account_number: FullAccountNumber | null;
  /** The masked form, whichever copy is stored (null before the form). */
  payout_account_masked: string | null;
  payout_account_holder: string | null;
  submitted_at: Date | null;
  browser_binding_hash: string | null;
  activation_qr_id: string | null;
  business_code: number | null;
  api_key_issued_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  expired_at: Date | null;
  expires_at: Date;
  created_at: Date;
}

/** A row as the database returns it: the account number still plain text. */
type StoredIntent = Omit<IntentRow, 'payout_account_number' | 'payout_account_masked'> & { payout_account_number: string | null };

/** A masked copy stays a masked string: only a full number becomes a FullAccountNumber. */
function fromStored(row: StoredIntent): IntentRow {
  const stored = row.payout_account_number;
  const full = stored === null || stored.includes('*') ? null : new FullAccountNumber(stored);
  return { ...row, payout_account_number: full, payout_account_masked: full?.masked ?? stored };
}

const INTENT_COLUMNS = `code, partner_id, status, success_url, cancel_url, metadata, legal_name, trade_name, tax_id,
  email, phone, city, mcc, payout_bank_code, payout_account_number, payout_account_holder, submitted_at,
  browser_binding_hash, activation_qr_id, business_code, api_key_issued_at, completed_at, cancelled_at, expired_at,
  expires_at, created_at`;

export interface NewIntent {
  code: string;
  partnerId: number;
  /** SHA-256 (hex) of the flow token: what lookups by token use. */
  tokenHash: string;
  /** The flow token sealed under ENCRYPTION_KEYS, bound to the intent's code: what a replay of the creation opens. */
  tokenSealed: string;
  successUrl: string | null;
  cancelUrl: string | null;
  metadata: Metadata;
  expiresAt: Date;
}

export async function insertIntent(tx: Queryable, intent: NewIntent, now: Date): Promise<IntentRow> {
  const { rows } = await tx.query<StoredIntent>(
    `insert into onboarding_intents (code, partner_id, token_hash, token_sealed, success_url, cancel_url, metadata, expires_at, created_at)
     values ($1::text, $2::bigint, $3::text, $4::text, $5::text, $6::text, $7::jsonb, $8::timestamptz, $9::timestamptz)
     returning ${INTENT_COLUMNS}`,
    [intent.code, intent.partnerId, intent.tokenHash, intent.tokenSealed, intent.successUrl, intent.cancelUrl, JSON.stringify(intent.metadata),
      intent.expiresAt, now],
  );
  return fromStored(rows[0]!);
}

/** A partner's intent; another partner's is simply not found. */
export async function findIntentOfPartner(tx: Queryable, partnerId: number, code: string): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(
    `select ${INTENT_COLUMNS} from onboarding_intents where code = $1::text and partner_id = $2::bigint`,
    [code, partnerId],
  );
  return rows[0] && fromStored(rows[0]);
}

export async function findIntentByTokenHash(tx: Queryable, tokenHash: string): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(`select ${INTENT_COLUMNS} from onboarding_intents where token_hash = $1::text`, [tokenHash]);
  return rows[0] && fromStored(rows[0]);
}

/** A partner's intent's sealed flow token; null for an intent created before migration 015 (never sealed). */
export async function sealedTokenOfIntent(tx: Queryable, partnerId: number, code: string): Promise<string | null | undefined> {
  const { rows } = await tx.query<{ token_sealed: string | null }>(
    'select token_sealed from onboarding_intents where code = $1::text and partner_id = $2::bigint',
    [code, partnerId],
  );
  return rows[0]?.token_sealed;
}

/** The intent an activation QR pays for, locked while it is still open at $now (the payment's transaction decides). */
export async function lockOpenIntentOfActivationQr(tx: Queryable, qrId: string, now: Date): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(
    `select ${INTENT_COLUMNS} from onboarding_intents
      where activation_qr_id = $1::uuid and status = 'open' and expires_at > $2::timestamptz
      for update`,
    [qrId, now],
  );
  return rows[0] && fromStored(rows[0]);
}

export interface Registration {
  legalName: string;
  tradeName: string;
  taxId: string;
  email: string;
  phone: string;
  city: string;
  mcc: string | null;
  payoutBankCode: number;
  payoutAccountNumber: FullAccountNumber;
  payoutAccountHolder: string;
}

/** Stores the registration form once, while the intent is open; undefined when it was submitted already or is closed. */
export async function submitRegistration(
  tx: Queryable,
  tokenHash: string,
  registration: Registration,
  browserBindingHash: string,
  now: Date,
): Promise<IntentRow | undefined> {
  const r = registration;
  const { rows } = await tx.query<StoredIntent>(
    `update onboarding_intents
        set legal_name = $2::text, trade_name = $3::text, tax_id = $4::text, email = $5::text, phone = $6::text,
            city = $7::text, mcc = $8::text, payout_bank_code = $9::bigint, payout_account_number = $10::text,
            payout_account_holder = $11::text, browser_binding_hash = $12::text, submitted_at = $13::timestamptz
      where token_hash = $1::text and status = 'open' and expires_at > $13::timestamptz and submitted_at is null
      returning ${INTENT_COLUMNS}`,
    [tokenHash, r.legalName, r.tradeName, r.taxId, r.email, r.phone, r.city, r.mcc, r.payoutBankCode, revealAccountNumber(r.payoutAccountNumber),
      r.payoutAccountHolder, browserBindingHash, now],
  );
  return rows[0] && fromStored(rows[0]);
}

export async function setActivationQr(tx: Queryable, code: string, qrId: string): Promise<void> {
  await tx.query('update onboarding_intents set activation_qr_id = $2::uuid where code = $1::text', [code, qrId]);
}

/**
 * Sets the activation QR of a submitted intent that has none yet, while it is open at $now; undefined
 * otherwise. On a bank's rail the QR is issued after the submission's transaction, and two retries of the
 * payment step may race: the first to commit attaches its QR, the other finds one already there.
 */
export async function attachActivationQr(tx: Queryable, code: string, qrId: string, now: Date): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(
    `update onboarding_intents set activation_qr_id = $2::uuid
      where code = $1::text and activation_qr_id is null and submitted_at is not null
        and status = 'open' and expires_at > $3::timestamptz
      returning ${INTENT_COLUMNS}`,
    [code, qrId, now],
  );
  return rows[0] && fromStored(rows[0]);
}

/** An intent by its code (a re-read after a guarded update found it changed). */
export async function findIntentByCode(tx: Queryable, code: string): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(`select ${INTENT_COLUMNS} from onboarding_intents where code = $1::text`, [code]);
  return rows[0] && fromStored(rows[0]);
}

/** open → completed with its merchant; undefined when the intent is no longer open at $now. */
export async function completeIntent(tx: Queryable, code: string, businessCode: number, now: Date): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(
    `update onboarding_intents set status = 'completed', business_code = $2::bigint, completed_at = $3::timestamptz
      where code = $1::text and status = 'open' and expires_at > $3::timestamptz
      returning ${INTENT_COLUMNS}`,
    [code, businessCode, now],
  );
  return rows[0] && fromStored(rows[0]);
}

/** open → cancelled; undefined when the intent is no longer open at $now. */
export async function cancelIntent(tx: Queryable, tokenHash: string, now: Date): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(
    `update onboarding_intents set status = 'cancelled', cancelled_at = $2::timestamptz
      where token_hash = $1::text and status = 'open' and expires_at > $2::timestamptz
      returning ${INTENT_COLUMNS}`,
    [tokenHash, now],
  );
  return rows[0] && fromStored(rows[0]);
}

/** Marks the first API key as issued, once, for a completed intent; undefined on every later call. */
export async function markApiKeyIssued(tx: Queryable, tokenHash: string, now: Date): Promise<IntentRow | undefined> {
  const { rows } = await tx.query<StoredIntent>(
    `update onboarding_intents set api_key_issued_at = $2::timestamptz
      where token_hash = $1::text and status = 'completed' and api_key_issued_at is null
      returning ${INTENT_COLUMNS}`,
    [tokenHash, now],
  );
  return rows[0] && fromStored(rows[0]);
}

/**
 * Records up to `limit` open intents past expires_at as expired (expired_at = expires_at, what reads already
 * showed). SKIP LOCKED: a sweeper in another process, or a payment holding an intent, is never waited for.
 */
export async function expireDueIntents(tx: Queryable, now: Date, limit: number): Promise<IntentRow[]> {
  const { rows } = await tx.query<StoredIntent>(
    `update onboarding_intents set status = 'expired', expired_at = expires_at
      where code in (
        select code from onboarding_intents
         where status = 'open' and expires_at <= $1::timestamptz
         order by expires_at
         limit $2::integer
         for update skip locked)
        and status = 'open'
      returning ${INTENT_COLUMNS}`,
    [now, limit],
  );
  return rows.map(fromStored);
}

/**
 * Replaces the intent's copy of the payout account number by its masked form once the flow is over: a
 * completed intent's merchant keeps the full number in merchant_payout_accounts; a closed intent needs none.
 */
export async function maskPayoutAccountNumber(tx: Queryable, code: string, masked: string): Promise<void> {
  await tx.query(
    `update onboarding_intents set payout_account_number = $2::text
      where code = $1::text and status <> 'open' and payout_account_number is not null`,
    [code, masked],
  );
}
