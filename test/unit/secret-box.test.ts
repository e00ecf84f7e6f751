// The sealing of stored secrets (src/kernel/secret-box.ts): what one key seals another opens only when it
// is the same key, a value moved to another record does not open, and keys rotate.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretUnreadableError } from '../../src/kernel/secret-box.ts';

const key = (id: string) => ({ id, key: randomBytes(32) });

describe('SecretBox', () => {
  it('opens what it sealed, and the sealed text holds no part of the secret', () => {
    const box = new SecretBox([key('k1')]);
    const sealed = box.seal('whsec_c2VjcmV0', 'webhook_endpoint:1');
    expect(sealed).toMatch(/^v1\.k1\./);
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.open(sealed, 'webhook_endpoint:1')).toBe('whsec_c2VjcmV0');
    expect(box.seal('same', 'a')).not.toBe(box.seal('same', 'a')); // a fresh IV each time
  });

  it('refuses a value moved to another record, or altered', () => {
    const box = new SecretBox([key('k1')]);
    const sealed = box.seal('secret', 'webhook_endpoint:1');
    expect(() => box.open(sealed, 'webhook_endpoint:2')).toThrow(SecretUnreadableError);
    const body = sealed.split('.')[2]!;
    // The second-to-last character is all data bits (the last may hold padding): change it, whatever it is.
    const flipped = `v1.k1.${body.slice(0, -2)}${body.at(-2) === 'A' ? 'B' : 'A'}${body.slice(-1)}`;
    expect(() => box.open(flipped, 'webhook_endpoint:1')).toThrow(SecretUnreadableError);
    expect(() => box.open('whsec_plain', 'webhook_endpoint:1')).toThrow(SecretUnreadableError);
  });

  it('rotates: a new first key seals, the old one still opens, and an unknown key is named', () => {
    const old = key('k1');
    const sealedBefore = new SecretBox([old]).seal('secret', 'r');
    const rotated = new SecretBox([key('k2'), old]);
    expect(rotated.open(sealedBefore, 'r')).toBe('secret');
    expect(rotated.isSealedWithOlderKey(sealedBefore)).toBe(true);
    expect(rotated.isSealedWithOlderKey(rotated.seal('secret', 'r'))).toBe(false);
    expect(() => new SecretBox([key('k3')]).open(sealedBefore, 'r')).toThrow(/key "k1"/);
  });
});
