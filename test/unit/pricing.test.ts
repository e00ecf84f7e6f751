// Price plans (docs/fees.md): a QR payment's fee is the exact rational percentage rounded half up to the
// centavo, plus the fixed part, capped at the payment; the plan's texts parse exactly or not at all.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centavos, type Centavos } from '../../src/money.ts';
import { formatQrPrice, parseFixedFee, parseQrPrice, paymentFee, transferFee, type PricePlan } from '../../src/merchants/pricing.ts';

const plan = (qrBasisPoints: number, qrFixed: number, transferFixed = 0): PricePlan =>
  ({ qrBasisPoints, qrFixed: centavos(qrFixed), transferFixed: centavos(transferFixed) });

/** The same fee computed another way: quotient and remainder of the exact rational, compared to one half. */
function expectedFee(p: PricePlan, amount: bigint): bigint {
  const numerator = amount * BigInt(p.qrBasisPoints);
  const quotient = numerator / 10_000n;
  const remainder = numerator % 10_000n;
  const rounded = remainder * 2n >= 10_000n ? quotient + 1n : quotient;
  const fee = rounded + BigInt(p.qrFixed);
  return fee < amount ? fee : amount;
}

describe('paymentFee', () => {
  it.each([
    // 1.5 % + 0.30 on 10.00: 0.15 + 0.30
    [150, 30, 10_00, 45],
    // 1.5 % of 0.33 is 0.00495: rounds down to 0.00
    [150, 0, 33, 0],
    // 2.5 % of 0.20 is 0.005: exactly one half rounds up
    [250, 0, 20, 1],
    // 1.5 % of 1.00 is 0.015: half rounds up to 0.02
    [150, 0, 1_00, 2],
    // the fee never exceeds the payment: 1.5 % + 0.30 on 0.10
    [150, 30, 10, 10],
    // 10 % + 100.00 on 20 000.00
    [1000, 100_00, 2_000_000, 2_100_00],
    // the free plan
    [0, 0, 123_45, 0],
  ])('charges %i bp + %i on %i: %i', (bp, fixed, amount, fee) => {
    expect(paymentFee(plan(bp, fixed), centavos(amount))).toBe(fee);
  });

  it('is the exact rational rounded half up, plus the fixed part, capped at the amount', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 100_00 }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      (bp, fixed, amount) => {
        const p = plan(bp, fixed);
        const fee = paymentFee(p, centavos(amount));
        expect(Number.isSafeInteger(fee)).toBe(true);
        expect(BigInt(fee)).toBe(expectedFee(p, BigInt(amount)));
      },
    ), { numRuns: 2000 });
  });

  it('charges a transfer the plan\'s fixed amount', () => {
    expect(transferFee(plan(150, 30, 1_50))).toBe(1_50);
  });
});

describe('the plan texts', () => {
  it.each([
    ['1.5%+0.30', 150, 30],
    ['0%+0.00', 0, 0],
    ['10%+100', 1000, 100_00],
    ['2.25%+0', 225, 0],
    [' 1%+1.5 ', 100, 1_50],
  ])('reads FEE_QR %j', (text, qrBasisPoints, qrFixed) => {
    expect(parseQrPrice(text)).toEqual({ qrBasisPoints, qrFixed });
  });

  it.each(['', '1.5', '1.5%', '%+0.30', '1.5% + 0.30', '10.01%+0', '1.505%+0', '1%+100.01', '1%+0.301', '-1%+0', '1e1%+0', '1,5%+0,30'])(
    'refuses FEE_QR %j', (text) => {
      expect(parseQrPrice(text)).toBeNull();
    },
  );

  it('formats a plan as it reads it', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 100_00 }), (bp, fixed) => {
      const price = { qrBasisPoints: bp, qrFixed: centavos(fixed) as Centavos };
      expect(parseQrPrice(formatQrPrice(price))).toEqual(price);
    }));
  });

  it.each([['0.50', 50], ['0', 0], ['100.00', 100_00]])('reads FEE_TRANSFER %j', (text, fee) => {
    expect(parseFixedFee(text)).toBe(fee);
  });

  it.each(['', '100.01', '-1', '0.001', 'abc'])('refuses FEE_TRANSFER %j', (text) => {
    expect(parseFixedFee(text)).toBeNull();
  });
});
