// The patterns rewritten to run in linear time accept exactly the strings the old ones did: checked on
// random strings over the characters that matter to each (fast-check), plus the edge cases by hand.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BankAccountNumber } from '../../src/transfers/schemas.ts';
import { registrationFormSchema } from '../../src/onboarding/schemas.ts';

const ACCOUNT_BEFORE = /^[0-9-]*[0-9][0-9-]*$/;
const EMAIL_BEFORE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const accountNow = new RegExp(BankAccountNumber.pattern!);
const emailNow = new RegExp((registrationFormSchema([{ bankCode: 1, name: 'Banco' }]).properties.email as { pattern: string }).pattern);

const over = (alphabet: string[]) => fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((chars) => chars.join(''));

describe('linear rewrites of the audited patterns', () => {
  it('account numbers: digits and hyphens with at least one digit', () => {
    fc.assert(fc.property(over(['0', '7', '-', 'a', ' ']), (text) => accountNow.test(text) === ACCOUNT_BEFORE.test(text)), { numRuns: 20_000 });
    for (const text of ['1', '-1', '1-', '--', '', '1000-2000-3000', ' 1']) expect(accountNow.test(text), text).toBe(ACCOUNT_BEFORE.test(text));
  });

  it('e-mail addresses: a local part, @, and a domain with a dot that neither starts nor ends it', () => {
    fc.assert(fc.property(over(['a', 'b', '.', '@', ' ', '\t', '-']), (text) => emailNow.test(text) === EMAIL_BEFORE.test(text)), { numRuns: 50_000 });
    for (const text of ['a@b.c', 'a@.b', 'a@..b', 'a@b.', 'a@b..c', 'a.b@c.d.e', '@b.c', 'a@b c.d', 'a@@b.c', 'ana@tienda.com.bo']) {
      expect(emailNow.test(text), text).toBe(EMAIL_BEFORE.test(text));
    }
  });
});
