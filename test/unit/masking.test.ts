import { describe, expect, it } from 'vitest';
import { maskAccountNumber } from '../../src/masking.ts';

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
