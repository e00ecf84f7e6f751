// A merchant's price plan and the fees it charges (docs/fees.md; contract §15.1). Pure rules in integer
// centavos: no floating point on the way from a plan to a fee, and one place that says how a fee is rounded.
import { centavos, formatCentavos, parseAmount, type Centavos } from '../money.ts';

/**
 * What a merchant pays: `qrBasisPoints` hundredths of a percent of each QR payment (150 = 1.50 %) plus
 * `qrFixed`, and `transferFixed` on each transfer. Basis points keep the contract's two-decimal percentage
 * a whole number, so the percentage never passes through a binary fraction.
 */
export interface PricePlan {
  qrBasisPoints: number;
  qrFixed: Centavos;
  transferFixed: Centavos;
}

/** The contract's bounds: qr_percent 0–10.00, qr_fixed and transfer_fixed 0–100.00. */
export const MAX_QR_BASIS_POINTS = 1000;
export const MAX_FIXED_FEE = centavos(100_00);

export const FREE_PLAN: PricePlan = { qrBasisPoints: 0, qrFixed: centavos(0), transferFixed: centavos(0) };

/**
 * The fee of a QR payment of `amount`: `qrBasisPoints` / 10 000 of it rounded half up to the centavo, plus
 * `qrFixed`, never more than the payment itself. BigInt because amount × basis points may pass 2^53.
 */
export function paymentFee(plan: PricePlan, amount: Centavos): Centavos {
  const scaled = BigInt(amount) * BigInt(plan.qrBasisPoints);
  // Half up on a non-negative rational n / 10 000: floor((n + 5 000) / 10 000).
  const percentPart = Number((scaled + 5_000n) / 10_000n);
  return centavos(Math.min(percentPart + plan.qrFixed, amount));
}

/** The fee of a transfer: the plan's fixed amount, whatever the transfer's size. */
export function transferFee(plan: PricePlan): Centavos {
  return plan.transferFixed;
}

/** A plan's QR price as FEE_QR writes it: `1.5%+0.30`. */
export function formatQrPrice(plan: Pick<PricePlan, 'qrBasisPoints' | 'qrFixed'>): string {
  return `${formatCentavos(centavos(plan.qrBasisPoints))}%+${formatCentavos(plan.qrFixed)}`;
}

const QR_PRICE = /^([0-9]+(?:\.[0-9]+)?)%\+([0-9]+(?:\.[0-9]+)?)$/;

/**
 * FEE_QR's text (`1.5%+0.30`: a percentage 0–10.00 with at most two decimals, a fixed amount 0–100.00)
 * as basis points and centavos; null when it is anything else.
 */
export function parseQrPrice(text: string): Pick<PricePlan, 'qrBasisPoints' | 'qrFixed'> | null {
  const match = QR_PRICE.exec(text.trim());
  if (!match) return null;
  // A percentage with two decimals is read exactly as hundredths, the way an amount is read as centavos.
  const percent = parseAmount(match[1], { min: 0, max: MAX_QR_BASIS_POINTS });
  const fixed = parseAmount(match[2], { min: 0, max: MAX_FIXED_FEE });
  if (!percent.ok || !fixed.ok) return null;
  return { qrBasisPoints: percent.centavos, qrFixed: fixed.centavos };
}

/** FEE_TRANSFER's text (`0.50`: 0–100.00) as centavos; null when it is anything else. */
export function parseFixedFee(text: string): Centavos | null {
  const parsed = parseAmount(text.trim(), { min: 0, max: MAX_FIXED_FEE });
  return parsed.ok ? parsed.centavos : null;
}
