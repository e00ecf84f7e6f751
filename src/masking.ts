// Bank account numbers (docs/api-reference.md#account-number-masking), for transfers (destination), QR payments
// (payer) and onboarding (payout account): the full number stays in the database and with the rail;
// responses, events and logs get the masked form. FullAccountNumber makes the compiler keep it so.

/**
 * Keeps the end of the final hyphen-separated group — at most 4 characters, and never more than the
 * number's length minus 4 — and replaces every other character, hyphens included, with `*`, keeping the
 * length: `1234-5678-90` → `**********90`, `20150123456789` → `**********6789`, `1234` → `****`.
 */
export function maskAccountNumber(accountNumber: string): string {
  const finalGroup = accountNumber.slice(accountNumber.lastIndexOf('-') + 1);
  const visible = Math.max(0, Math.min(4, finalGroup.length, accountNumber.length - 4));
  return '*'.repeat(accountNumber.length - visible) + accountNumber.slice(accountNumber.length - visible);
}

/** Set once by FullAccountNumber's static block: the only reader of its private digits. */
let digitsOf: (accountNumber: FullAccountNumber) => string;

/**
 * A full bank account number, as the database keeps it. It shows itself masked wherever it goes — in
 * JSON, in a template string, in a log line, in a test's diff — so no view, event or log can carry the
 * number by accident: the compiler sees a FullAccountNumber, not a string, and the private field makes
 * the type nominal (no look-alike object passes). Only revealAccountNumber opens it, and only the stores
 * (to write it) and the rails (to pay to it) may call that (test/unit/layers.test.ts checks who does).
 */
export class FullAccountNumber {
  readonly #digits: string;
  /** The masked form, and the only enumerable field: two numbers compare equal in tests when their masks do. */
  readonly masked: string;

  static {
    digitsOf = (accountNumber) => accountNumber.#digits;
  }

  constructor(digits: string) {
    if (digits.includes('*')) throw new Error('a masked account number is not a full one');
    this.#digits = digits;
    this.masked = maskAccountNumber(digits);
  }

  toJSON(): string {
    return this.masked;
  }

  toString(): string {
    return this.masked;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `FullAccountNumber(${this.masked})`;
  }
}

/** The number itself: for a store that writes it and a rail that pays to it, nowhere else. Throws for a copy or a look-alike. */
export function revealAccountNumber(accountNumber: FullAccountNumber): string {
  return digitsOf(accountNumber);
}

/**
 * An account number a bank sent already masked (Banco Económico's payers: `******1913`). There is nothing
 * to hide and nothing to reveal: it is stored and shown exactly as the bank gave it, and no rail can pay
 * to it (revealAccountNumber takes only a FullAccountNumber). Text without a `*` is refused: a whole number
 * must be a FullAccountNumber, so it is masked wherever it goes.
 */
export class BankMaskedAccountNumber {
  /** The text as the bank sent it; the only field, as FullAccountNumber's `masked` is. */
  readonly masked: string;

  constructor(text: string) {
    if (!text.includes('*')) throw new Error('an account number the bank masked holds a *');
    this.masked = text;
  }

  toJSON(): string {
    return this.masked;
  }

  toString(): string {
    return this.masked;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `BankMaskedAccountNumber(${this.masked})`;
  }
}

/** A payer's account: the full number (the sandbox's payers), or the bank's masked text (a bank's payers). */
export type PayerAccountNumber = FullAccountNumber | BankMaskedAccountNumber;

/** A payer's account as a store read it back: masked text stays as given, anything else is a full number. */
export function payerAccountNumberOf(stored: string): PayerAccountNumber {
  return stored.includes('*') ? new BankMaskedAccountNumber(stored) : new FullAccountNumber(stored);
}
