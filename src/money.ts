// Money at the edge: amounts arrive as JSON numbers or numeric strings and live inside as integer centavos.
// No floating-point arithmetic touches money: numbers are read through their shortest decimal text.

export const CURRENCY = 'BOB';

declare const centavosBrand: unique symbol;

/**
 * A whole number of centavos (1/100 BOB). A plain number is not one: amounts become Centavos only by
 * being parsed at the edge (parseAmount, validatedCentavos), checked (centavos), or read from a money
 * column, so the compiler keeps a count of something else — or bolivianos — out of the ledger.
 */
export type Centavos = number & { readonly [centavosBrand]: true };

/** `value` as Centavos: a safe whole number, or a RangeError (a programming error, never a client's). */
export function centavos(value: number): Centavos {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a whole number of centavos: ${value}`);
  return value as Centavos;
}

/** Why an amount was refused, as the 422 field code of docs/api-reference.md#field-codes. */
export type AmountProblem = 'invalid_type' | 'invalid_format' | 'too_many_decimals' | 'too_small' | 'too_large';

export type ParsedAmount = { ok: true; centavos: Centavos } | { ok: false; problem: AmountProblem };

const DECIMAL_TEXT = /^([0-9]+)(?:\.([0-9]+))?$/;
const MAX_CENTAVOS = Number.MAX_SAFE_INTEGER;

/**
 * Parses an amount into integer centavos. Strings must read `^[0-9]+(\.[0-9]{1,2})?$`; numbers must be
 * finite with at most two decimals (a JSON `1e3` is the number 1000 and passes). Bounds are inclusive.
 */
export function parseAmount(value: unknown, bounds: { min: number; max: number }): ParsedAmount {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, problem: 'invalid_format' };
    if (value < 0) return { ok: false, problem: 'too_small' };
    // String(n) is the shortest text that reads back as n: 0.1 → "0.1", 10.001 → "10.001".
    text = String(value);
    if (/e/i.test(text)) {
      // Exponent form only for very large or very small magnitudes.
      if (!Number.isInteger(value)) return { ok: false, problem: 'too_many_decimals' };
      return value * 100 > bounds.max ? { ok: false, problem: 'too_large' } : { ok: false, problem: 'invalid_format' };
    }
  } else if (typeof value === 'string') {
    text = value;
    if (text.startsWith('-') && DECIMAL_TEXT.test(text.slice(1))) return { ok: false, problem: 'too_small' };
  } else {
    return { ok: false, problem: 'invalid_type' };
  }
  const match = DECIMAL_TEXT.exec(text);
  if (!match) return { ok: false, problem: 'invalid_format' };
  const fraction = match[2] ?? '';
  if (fraction.length > 2) return { ok: false, problem: 'too_many_decimals' };
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  if (whole.length > 13) return { ok: false, problem: 'too_large' };
  const centavos = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  if (centavos > MAX_CENTAVOS || centavos > bounds.max) return { ok: false, problem: 'too_large' };
  if (centavos < bounds.min) return { ok: false, problem: 'too_small' };
  return { ok: true, centavos: centavos as Centavos };
}

/**
 * The centavos of an amount its schema's `x-money` keyword has already accepted with the same bounds
 * (kernel/schemas.ts MoneyAmount). A failure here is a programming error, never a client's: it throws.
 */
export function validatedCentavos(value: unknown, bounds: { min: number; max: number }): Centavos {
  const parsed = parseAmount(value, bounds);
  if (!parsed.ok) throw new Error(`an amount its schema accepted does not parse (${parsed.problem})`);
  return parsed.centavos;
}

/** Centavos as the JSON number the API shows (15050 → 150.5). Exact: every centavo count below 2^53 / 100 has a unique shortest decimal text. */
export function centavosToAmount(centavos: Centavos): number {
  if (!Number.isSafeInteger(centavos)) throw new RangeError(`not a whole number of centavos: ${centavos}`);
  return centavos / 100;
}

/** Centavos as a two-decimal string (15050 → "150.50"), for EMV payloads and human-facing text. */
export function formatCentavos(centavos: Centavos): string {
  if (!Number.isSafeInteger(centavos)) throw new RangeError(`not a whole number of centavos: ${centavos}`);
  const sign = centavos < 0 ? '-' : '';
  const magnitude = Math.abs(centavos);
  return `${sign}${Math.floor(magnitude / 100)}.${String(magnitude % 100).padStart(2, '0')}`;
}
