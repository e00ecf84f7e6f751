// Console passwords (src/users/passwords.ts): scrypt from Node's crypto, a fresh salt each time, the cost in
// the stored text, compared in constant time; and the tokens and CSRF fields of src/users/tokens.ts.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashPassword, verifyAgainstDecoy, verifyPassword } from '../../src/users/passwords.ts';
import { csrfFieldOf, isTokenShaped, isValidCsrfField, newToken, tokenHash } from '../../src/users/tokens.ts';

describe('console passwords', () => {
  it('are stored as scrypt N=2^14, r=8, p=1 with a fresh salt, and verify only the password they were made from', async () => {
    const first = await hashPassword('correct horse battery');
    const second = await hashPassword('correct horse battery');
    expect(first).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    expect(first).not.toContain('correct horse battery');
    expect(await verifyPassword('correct horse battery', first)).toBe(true);
    expect(await verifyPassword('correct horse battery', second)).toBe(true);
    expect(await verifyPassword('correct horse batterY', first)).toBe(false);
    expect(await verifyPassword('', first)).toBe(false);
  });

  it('read a password the same in either Unicode normal form', async () => {
    const stored = await hashPassword('contraseña segura');
    expect(await verifyPassword('contrasen\u0303a segura', stored)).toBe(true);
  });

  it('refuse a stored text that is not a hash, and the decoy refuses everything', async () => {
    expect(await verifyPassword('x', 'plain text')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$16384$8$1$$')).toBe(false);
    expect(await verifyAgainstDecoy('anything at all')).toBe(false);
  });
});

describe('console tokens', () => {
  it('are 43 base62 characters, kept as their SHA-256 in hex', () => {
    const token = newToken();
    expect(isTokenShaped(token)).toBe(true);
    expect(isTokenShaped(`${token}x`)).toBe(false);
    expect(isTokenShaped(token.slice(1))).toBe(false);
    expect(isTokenShaped(undefined)).toBe(false);
    expect(tokenHash(token)).toBe(createHash('sha256').update(token).digest('hex'));
    expect(newToken()).not.toBe(token);
  });

  it('give a CSRF field that only the same secret checks', () => {
    const session = newToken();
    const field = csrfFieldOf(session);
    expect(isValidCsrfField(session, field)).toBe(true);
    expect(isValidCsrfField(newToken(), field)).toBe(false);
    expect(isValidCsrfField(session, `${field}A`)).toBe(false);
    expect(isValidCsrfField(session, undefined)).toBe(false);
    expect(isValidCsrfField(null, field)).toBe(false);
    expect(field).not.toContain(session);
  });
});
