// Money at the edge (docs/api-reference.md#money, docs/architecture.md, rule 1): amounts parse into integer centavos and
// format back without floating-point drift.
import { describe, expect, it } from 'vitest';
import { centavos as asCentavos, centavosToAmount, formatCentavos, parseAmount, type Centavos } from '../../src/money.ts';

/** The bounds of a transfer: 0.10 to 20000.00. */
const TRANSFER = { min: 10, max: 2_000_000 };
const ANY = { min: 0, max: Number.MAX_SAFE_INTEGER };

describe('parseAmount', () => {
  it.each([
    [0.1, 10],
    ['0.10', 10],
    ['0.1', 10],
    [20000, 2_000_000],
    [20000.0, 2_000_000],
    ['20000.00', 2_000_000],
    [1e3, 100_000],
    [150.5, 15_050],
    ['150.50', 15_050],
    ['00012.30', 1_230],
    [12, 1_200],
  ])('reads %j as %i centavos', (value, centavos) => {
    expect(parseAmount(value, TRANSFER)).toEqual({ ok: true, centavos });
  });

  it.each([
    // Each of these times 100 is not a whole number in binary floating point.
    [0.29, 29],
    [0.57, 57],
    [1.1, 110],
    [4.35, 435],
    [1.15, 115],
    [8.2, 820],
    [9.95, 995],
    [19.99, 1_999],
    [1234.59, 123_459],
    [2.01, 201],
    [1.13, 113],
    [0.07, 7],
  ])('reads the float-unfriendly %j as exactly %i centavos', (value, centavos) => {
    expect(value * 100).not.toBe(centavos); // the trap a naive implementation falls into…
    expect(parseAmount(value, ANY)).toEqual({ ok: true, centavos }); // …and this one does not
  });

  it('refuses 0.1 + 0.2 (0.30000000000000004): it has more than two decimals', () => {
    expect(parseAmount(0.1 + 0.2, TRANSFER)).toEqual({ ok: false, problem: 'too_many_decimals' });
  });

  it.each([
    [10.001, 'too_many_decimals'],
    ['10.001', 'too_many_decimals'],
    [1.005, 'too_many_decimals'],
    [1e-7, 'too_many_decimals'],
    ['1e3', 'invalid_format'],
    ['NaN', 'invalid_format'],
    [Number.NaN, 'invalid_format'],
    [Number.POSITIVE_INFINITY, 'invalid_format'],
    [Number.NEGATIVE_INFINITY, 'invalid_format'],
    ['', 'invalid_format'],
    [' 1', 'invalid_format'],
    ['1 ', 'invalid_format'],
    ['1.', 'invalid_format'],
    ['.5', 'invalid_format'],
    ['+1', 'invalid_format'],
    ['1,50', 'invalid_format'],
    ['0x1A', 'invalid_format'],
    ['１２', 'invalid_format'],
    [-5, 'too_small'],
    ['-5', 'too_small'],
    [-0.01, 'too_small'],
    [0, 'too_small'],
    [0.09, 'too_small'],
    ['0.09', 'too_small'],
    [20000.01, 'too_large'],
    ['20000.01', 'too_large'],
    [1e21, 'too_large'],
    ['99999999999999999999', 'too_large'],
    [null, 'invalid_type'],
    [undefined, 'invalid_type'],
    [true, 'invalid_type'],
    [[10], 'invalid_type'],
    [{}, 'invalid_type'],
  ])('refuses %j as %s', (value, problem) => {
    expect(parseAmount(value, TRANSFER)).toEqual({ ok: false, problem });
  });

  it('refuses a bigint as invalid_type', () => {
    expect(parseAmount(10n, TRANSFER)).toEqual({ ok: false, problem: 'invalid_type' });
  });

  it('includes both bounds', () => {
    expect(parseAmount('0.10', TRANSFER)).toEqual({ ok: true, centavos: 10 });
    expect(parseAmount('20000.00', TRANSFER)).toEqual({ ok: true, centavos: 2_000_000 });
    expect(parseAmount(0, { min: 0, max: 100 })).toEqual({ ok: true, centavos: 0 });
  });

  it('never loses a centavo on large amounts: refuses what it cannot hold exactly', () => {
    expect(parseAmount('9999999999999.99', ANY)).toEqual({ ok: true, centavos: 999_999_999_999_999 });
    expect(parseAmount('1234567890123.45', ANY)).toEqual({ ok: true, centavos: 123_456_789_012_345 });
    expect(parseAmount('90071992547409.92', ANY)).toEqual({ ok: false, problem: 'too_large' });
    expect(parseAmount('100000000000000000000.01', ANY)).toEqual({ ok: false, problem: 'too_large' });
  });

  it('reads every amount from 0.00 to 2000.00, as number and as string, to the centavo it shows', () => {
    for (let centavos = 0; centavos <= 200_000; centavos++) {
      const text = `${Math.floor(centavos / 100)}.${String(centavos % 100).padStart(2, '0')}`;
      const fromString = parseAmount(text, ANY);
      const fromNumber = parseAmount(Number(text), ANY);
      if (!fromString.ok || fromString.centavos !== centavos) throw new Error(`"${text}" read as ${JSON.stringify(fromString)}`);
      if (!fromNumber.ok || fromNumber.centavos !== centavos) throw new Error(`${Number(text)} read as ${JSON.stringify(fromNumber)}`);
    }
  });
});

describe('centavosToAmount', () => {
  it.each([
    [15_050, 150.5],
    [29, 0.29],
    [1, 0.01],
    [10, 0.1],
    [0, 0],
    [2_000_000, 20000],
    [-10_025, -100.25],
  ])('shows %i centavos as %d', (centavos, amount) => {
    expect(centavosToAmount(centavos as Centavos)).toBe(amount);
  });

  it('round-trips through JSON and parseAmount for every centavo count up to 20000.00', () => {
    for (let centavos = 0; centavos <= 2_000_000; centavos += 7) {
      const shown = JSON.parse(JSON.stringify({ amount: centavosToAmount(centavos as Centavos) })).amount as number;
      const parsed = parseAmount(shown, ANY);
      if (!parsed.ok || parsed.centavos !== centavos) throw new Error(`${centavos} shown as ${shown}, read back as ${JSON.stringify(parsed)}`);
    }
  });

  it('refuses what is not a whole number of centavos', () => {
    expect(() => centavosToAmount(1.5 as Centavos)).toThrow(RangeError);
    expect(() => centavosToAmount(Number.NaN as Centavos)).toThrow(RangeError);
    expect(() => centavosToAmount(2 ** 53 as Centavos)).toThrow(RangeError);
  });
});

describe('centavos', () => {
  it('brands a safe whole number, negative or not, and refuses anything else', () => {
    expect(asCentavos(15_050)).toBe(15_050);
    expect(asCentavos(-10)).toBe(-10);
    for (const value of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) expect(() => asCentavos(value)).toThrow(RangeError);
  });
});

describe('formatCentavos', () => {
  it.each([
    [15_050, '150.50'],
    [29, '0.29'],
    [5, '0.05'],
    [0, '0.00'],
    [100, '1.00'],
    [2_000_000, '20000.00'],
    [-1_234, '-12.34'],
    [-5, '-0.05'],
    [9_007_199_254_740_991, '90071992547409.91'],
  ])('writes %i centavos as %s', (centavos, text) => {
    expect(formatCentavos(centavos as Centavos)).toBe(text);
  });

  it('agrees with centavosToAmount and parseAmount for every centavo count up to 20000.00', () => {
    for (let centavos = 0; centavos <= 2_000_000; centavos += 3) {
      const text = formatCentavos(centavos as Centavos);
      const parsed = parseAmount(text, ANY);
      if (!parsed.ok || parsed.centavos !== centavos) throw new Error(`${centavos} written as ${text}, read back as ${JSON.stringify(parsed)}`);
      if (Number(text) !== centavosToAmount(centavos as Centavos)) throw new Error(`${text} != ${centavosToAmount(centavos as Centavos)}`);
    }
  });

  it('refuses what is not a whole number of centavos', () => {
    expect(() => formatCentavos(0.5 as Centavos)).toThrow(RangeError);
    expect(() => formatCentavos(Number.POSITIVE_INFINITY as Centavos)).toThrow(RangeError);
  });
});
