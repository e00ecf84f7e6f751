// API key material: readable prefixes telling the kind and the mode, >= 128 random bits, SHA-256 at rest,
// a clear prefix to name a key.
import { hash } from 'node:crypto';
import type { Mode } from '../config.ts';
import { randomBase62 } from '../ids.ts';

/** Who holds a key: a merchant (all of its API), a merchant's terminal (QRs only), or a partner. */
export type KeyKind = 'merchant' | 'terminal' | 'partner';
export type KeyOwnerKind = 'merchant' | 'partner';

/** Random part: 32 base62 characters ≈ 190 bits. */
const SECRET_LENGTH = 32;
/** Characters after the kind prefix that stay in clear as `key_prefix`. */
const VISIBLE_LENGTH = 8;

const KIND_PREFIX: Record<KeyKind, string> = { merchant: 'mk', terminal: 'tk', partner: 'pk_master' };
const MODE_TAG: Record<Mode, string> = { sandbox: 'test', live: 'live' };

/** `mk_test_`, `tk_live_`, `pk_master_test_`…: what a key of `kind` made in `mode` starts with. */
export function keyKindPrefix(kind: KeyKind, mode: Mode): string {
  return `${KIND_PREFIX[kind]}_${MODE_TAG[mode]}_`;
}

export interface NewApiKey {
  /** The whole key: shown once, never stored. */
  apiKey: string;
  keyPrefix: string;
  keyHash: string;
}

export function generateApiKey(kind: KeyKind, mode: Mode): NewApiKey {
  const kindPrefix = keyKindPrefix(kind, mode);
  const apiKey = kindPrefix + randomBase62(SECRET_LENGTH);
  return { apiKey, keyPrefix: apiKey.slice(0, kindPrefix.length + VISIBLE_LENGTH), keyHash: hashApiKey(apiKey) };
}

/**
 * SHA-256 is right for keys with >= 128 random bits: a slow password hash would add latency, not safety.
 * The one-shot `crypto.hash` (no Hash object per call) because every authenticated request hashes its key.
 */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

const KEY_SHAPE = /^(?:mk|tk|pk_master)_(test|live)_[0-9A-Za-z]{32}$/;

/** The mode a text's shape says it was made for, or null for text that cannot be a key (spares the database a lookup). */
export function keyModeOf(text: string): Mode | null {
  const match = KEY_SHAPE.exec(text);
  if (!match) return null;
  return match[1] === 'live' ? 'live' : 'sandbox';
}

/** The mode a stored key prefix (`mk_test_AbCd1234`) was minted in: what the prefix says in clear. */
export function modeOfKeyPrefix(keyPrefix: string): Mode {
  return /^(?:mk|tk|pk_master)_live_/.test(keyPrefix) ? 'live' : 'sandbox';
}
