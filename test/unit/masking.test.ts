import { describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import { BankMaskedAccountNumber, FullAccountNumber, maskAccountNumber, payerAccountNumberOf, revealAccountNumber } from '../../src/masking.ts';

describe('maskAccountNumber (docs/api-reference.md#account-number-masking)', () => {
  it.each([
    ['1234-5678-90', '**********90'],
    ['20150123456789', '**********6789'],
    ['10000123454321', '**********4321'],
    ['1234', '****'],
    ['123456', '****56'],
    ['12345', '****5'],
    ['1', '*'],
    ['12345678-', '*********'],
    ['1-2345678', '*****5678'],
    ['123-45', '****45'],
  ])('%s → %s', (input, masked) => {
    expect(maskAccountNumber(input)).toBe(masked);
    expect(maskAccountNumber(input)).toHaveLength(input.length);
  });
});

describe('FullAccountNumber', () => {
  const number = new FullAccountNumber('20150123456789');

  it('shows itself masked in JSON, in text and to util.inspect (a log line, a test diff)', () => {
    expect(JSON.stringify({ account_number: number })).toBe('{"account_number":"**********6789"}');
    expect(`${number}`).toBe('**********6789');
    expect(inspect({ number })).not.toContain('20150123456789');
    expect(number.masked).toBe('**********6789');
  });

  it('opens only through revealAccountNumber', () => {
    expect(revealAccountNumber(number)).toBe('20150123456789');
    expect(Object.values(number)).toEqual(['**********6789']);
  });

  it('refuses a masked number, and a copy or look-alike cannot be opened', () => {
    expect(() => new FullAccountNumber('**********6789')).toThrow();
    expect(() => revealAccountNumber({ ...number } as FullAccountNumber)).toThrow(TypeError);
  });
});

describe('BankMaskedAccountNumber (a payer account the bank sent masked)', () => {
  const number = new BankMaskedAccountNumber('******1913');

  it('is kept and shown exactly as the bank gave it', () => {
    expect(JSON.stringify({ account_number: number })).toBe('{"account_number":"******1913"}');
    expect(`${number}`).toBe('******1913');
    expect(inspect({ number })).toContain('******1913');
    expect(Object.values(number)).toEqual(['******1913']);
  });

  it('refuses text the bank did not mask, and cannot be revealed', () => {
    expect(() => new BankMaskedAccountNumber('20150123456789')).toThrow();
    expect(() => revealAccountNumber(number as unknown as FullAccountNumber)).toThrow(TypeError);
  });

  it('is what a store reads back for masked text; a whole number reads back as a FullAccountNumber', () => {
    expect(payerAccountNumberOf('******1913')).toBeInstanceOf(BankMaskedAccountNumber);
    const full = payerAccountNumberOf('20150123456789');
    expect(full).toBeInstanceOf(FullAccountNumber);
    expect(`${full}`).toBe('**********6789');
  });
});
