// The bank's field encryption (contract §14.2): AES-256-CBC, the key is the 32 ASCII bytes of
// BANECO_AES_KEY, PKCS#7 padding, a fresh random 16-byte IV per field, sent as base64(IV ‖ ciphertext).
// The password, accountCredit and every accountCode travel this way. node:crypto only: the bank's own
// encrypt/decrypt helper calls would need the key sent over the wire, which we never do.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-cbc';
const KEY_LENGTH = 32;
const BLOCK = 16;
/** Base64 with its padding, nothing else: a field with stray characters is not the bank's. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A field longer than this is no account number or password; refuse it before any work. */
const MAX_FIELD_CHARS = 4096;

/** A field that cannot be decrypted. The message says why in general terms: never the key, never the text. */
export class BanecoCipherError extends Error {
  constructor(reason: string) {
    super(`cannot decrypt a bank AES field: ${reason}`);
    this.name = 'BanecoCipherError';
  }
}

/**
 * Encrypts and decrypts the bank's AES fields with one key. The key lives in a private field, so the
 * object shows nothing of it in a log line, a JSON dump or a test diff.
 */
export class BanecoCipher {
  readonly #key: Buffer;

  constructor(aesKey: string) {
    // ASCII only: a non-ASCII character would make the key's bytes differ from its 32 characters.
    if (!/^[\x20-\x7e]*$/.test(aesKey) || aesKey.length !== KEY_LENGTH) {
      throw new Error(`the bank's AES key must be ${KEY_LENGTH} ASCII characters`);
    }
    this.#key = Buffer.from(aesKey, 'ascii');
  }

  /** enc(x): a different text on every call (a fresh IV), each decrypting to `plain`. */
  encrypt(plain: string): string {
    const iv = randomBytes(BLOCK);
    const cipher = createCipheriv(ALGORITHM, this.#key, iv);
    return Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
  }

  /** The plain text of a field; BanecoCipherError when it is not base64(IV ‖ ciphertext) under this key. */
  decrypt(field: string): string {
    if (field.length > MAX_FIELD_CHARS) throw new BanecoCipherError('longer than any field the bank sends');
    if (!BASE64.test(field)) throw new BanecoCipherError('not base64');
    const bytes = Buffer.from(field, 'base64');
    if (bytes.length < 2 * BLOCK || bytes.length % BLOCK !== 0) {
      throw new BanecoCipherError('not an IV followed by whole AES blocks');
    }
    const decipher = createDecipheriv(ALGORITHM, this.#key, bytes.subarray(0, BLOCK));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(bytes.subarray(BLOCK)), decipher.final()]);
    } catch {
      // OpenSSL's own message is generic too, but it is not ours to promise: say it in our words.
      throw new BanecoCipherError('bad padding (another key, or a damaged field)');
    }
    const text = plain.toString('utf8');
    if (Buffer.from(text, 'utf8').length !== plain.length) throw new BanecoCipherError('the plain text is not UTF-8');
    return text;
  }

  toJSON(): string {
    return 'BanecoCipher';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'BanecoCipher';
  }
}
