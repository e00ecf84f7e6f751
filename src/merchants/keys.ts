// API key material: readable kind prefixes, >= 128 random bits, SHA-256 at rest, a clear prefix to name a key.
import { hash } from 'node:crypto';
import type { Mode } from '../config.ts';
import { randomBase62 } from '../ids.ts';

export type KeyOwnerKind = 'merchant' | 'partner';

/** Random part: 32 base62 characters ≈ 190 bits. */
const SECRET_LENGTH = 32;
/** Characters after the kind prefix that stay in clear as `key_prefix`. */
const VISIBLE_LENGTH = 8;

export function keyKindPrefix(owner: KeyOwnerKind, mode: Mode): string {
  return owner === 'merchant' ? `mk_${mode === 'live' ? 'live' : 'test'}_` : `pk_master_${mode === 'live' ? 'live' : 'test'}_`;
}

export interface NewApiKey {
  /** The whole key: shown once, never stored. */
  apiKey: string;
  keyPrefix: string;
  keyHash: string;
}

export function generateApiKey(owner: KeyOwnerKind, mode: Mode): NewApiKey {
  const kindPrefix = keyKindPrefix(owner, mode);
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

/** A cheap shape check that spares the database a lookup for text that cannot be a key. */
export function looksLikeApiKey(text: string): boolean {
  return /^(mk_(test|live)|pk_master_(test|live))_[0-9A-Za-z]{32}$/.test(text);
}
