// The bank's AES fields (contract §14.2), checked against the bank's own published example.
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BanecoCipher, BanecoCipherError } from '../../../src/rails/baneco/aes.ts';

const BANK_KEY = '40A318B299F245C2B697176723088629';
const BANK_CIPHER = 'KJAzqjmwjxIOqVo5J3IH0/7fGmNdzuyszrlqexVSeos=';

describe('the bank AES fields', () => {
  const cipher = new BanecoCipher(BANK_KEY);

  it('decrypts the bank\'s own example to 1234', () => {
    expect(cipher.decrypt(BANK_CIPHER)).toBe('1234');
  });

  it('round-trips account numbers, passwords, the empty text and non-ASCII text', () => {
    for (const plain of ['1234', '1000-2000-3000', '', 'contraseña ñandú €', 'x'.repeat(16), 'y'.repeat(17), 'z'.repeat(500)]) {
      expect(cipher.decrypt(cipher.encrypt(plain))).toBe(plain);
    }
  });

  it('uses a fresh IV every time: the same text encrypts differently, as base64(IV ‖ ciphertext)', () => {
    const fields = Array.from({ length: 50 }, () => cipher.encrypt('1234'));
    expect(new Set(fields).size).toBe(50);
    expect(new Set(fields.map((field) => Buffer.from(field, 'base64').subarray(0, 16).toString('hex'))).size).toBe(50);
    for (const field of fields) expect(Buffer.from(field, 'base64').length).toBe(32); // IV + one block
  });

  it('raises a clear error for malformed fields, naming neither the key nor any plain text', () => {
    const other = new BanecoCipher('0'.repeat(32));
    const secret = other.encrypt('1000-2000-3000');
    const cases = ['', 'not base64!', 'KJAzqjmw', Buffer.alloc(20).toString('base64'), Buffer.alloc(33).toString('base64'), BANK_CIPHER.slice(0, -4), secret, 'A'.repeat(5000)];
    for (const field of cases) {
      let caught: unknown;
      try {
        cipher.decrypt(field);
      } catch (error) {
        caught = error;
      }
      expect(caught, field).toBeInstanceOf(BanecoCipherError);
      const text = `${(caught as Error).message} ${(caught as Error).stack}`;
      expect(text).toMatch(/^cannot decrypt a bank AES field: /);
      expect(text).not.toContain(BANK_KEY);
      expect(text).not.toContain('1000-2000-3000');
      expect(text).not.toContain('1234');
    }
  });

  it('refuses a key that is not 32 ASCII characters, without echoing it', () => {
    for (const key of ['short', '40A318B299F245C2B697176723088629x', 'ñ'.repeat(32)]) {
      expect(() => new BanecoCipher(key)).toThrow(/32 ASCII characters/);
      try {
        new BanecoCipher(key);
      } catch (error) {
        expect((error as Error).message).not.toContain(key);
      }
    }
  });

  it('shows nothing of its key when logged or serialised', () => {
    expect(JSON.stringify({ cipher })).not.toContain(BANK_KEY);
    expect(inspect(cipher, { showHidden: true, depth: 5 })).not.toContain(BANK_KEY);
    expect(`${String(cipher)}`).not.toContain(BANK_KEY);
  });
});
