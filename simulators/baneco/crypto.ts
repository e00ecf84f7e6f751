// The bank's two pieces of cryptography, written here with node:crypto and nothing else, so that the
// simulator shares no code with the service's rail: a misreading of the bank's scheme in one of them
// must show up as a failure against the other.
//
// 1. Field encryption. The bank hands each client a 32-character key. The key bytes are those 32 ASCII
//    characters used as they are (AES-256, no hashing or hex decoding), mode CBC, PKCS#7 padding, and
//    the text on the wire is base64(16-byte random IV ‖ ciphertext). The bank's published example
//    (key 40A318B299F245C2B697176723088629, "1234") is checked in the tests.
// 2. Bearer tokens. The bank's example token is a JWT signed with HS256; we issue the same shape so a
//    client that peeks into it (it should not) sees what it would see at the bank.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const IV_BYTES = 16;
const BLOCK_BYTES = 16;

/** The AES key as the bank uses it: exactly 32 printable ASCII characters, taken byte for byte. */
export function aesKeyBytes(key: string): Buffer {
  if (!/^[\x21-\x7e]{32}$/.test(key)) throw new Error('the AES key must be exactly 32 printable ASCII characters');
  return Buffer.from(key, 'ascii');
}

/** Encrypts `plain` (UTF-8) the bank's way; a fresh random IV each time, so equal texts differ on the wire. */
export function encryptField(plain: string, key: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-cbc', aesKeyBytes(key), iv); // PKCS#7 padding is node's default
  return Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}

/**
 * Decrypts a field the bank's way, or answers null when it is not a valid encryption under `key`
 * (not base64, too short, not whole blocks, bad padding, not UTF-8). The bank refuses such a field; it
 * must never crash the simulator.
 */
export function decryptField(text: unknown, key: string): string | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > 4096) return null;
  // Strict base64 (with padding): Buffer.from would silently skip foreign characters.
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return null;
  const raw = Buffer.from(text, 'base64');
  if (raw.length < IV_BYTES + BLOCK_BYTES || raw.length % BLOCK_BYTES !== 0) return null;
  try {
    const decipher = createDecipheriv('aes-256-cbc', aesKeyBytes(key), raw.subarray(0, IV_BYTES));
    const plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES)), decipher.final()]);
    const decoded = new TextDecoder('utf-8', { fatal: true }).decode(plain);
    return decoded;
  } catch {
    // A wrong key almost always ends in a padding error here (and, rarely, in valid-looking garbage,
    // which the caller then fails to match against what it expected).
    return null;
  }
}

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

export interface TokenClaims {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
}

/** Signs an HS256 JWT with the simulator's own random secret. */
export function signJwt(claims: TokenClaims & Record<string, unknown>, secret: Buffer): string {
  const head = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = base64url(JSON.stringify(claims));
  const signature = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  return `${head}.${body}.${base64url(signature)}`;
}

/** The claims of a token this simulator signed, or null for anything else (expiry is the caller's check). */
export function verifyJwt(token: string, secret: Buffer): TokenClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [head, body, signature] = parts as [string, string, string];
  const expected = createHmac('sha256', secret).update(`${head}.${body}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<TokenClaims>;
    if (typeof claims.jti !== 'string' || typeof claims.exp !== 'number' || typeof claims.sub !== 'string' || typeof claims.iat !== 'number') return null;
    return claims as TokenClaims;
  } catch {
    return null;
  }
}

/** A random text of `length` characters from an alphabet safe in URLs, shells and .env files. */
export function randomToken(length: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'): string {
  const out: string[] = [];
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out.push(alphabet[byte % alphabet.length]!);
    }
  }
  return out.join('');
}
