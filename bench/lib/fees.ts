// The price plan the benchmarks measure "fees on" with (issue: hot paths keep their targets with fees on):
// 1.5 % + 0.30 BOB a QR payment and 1.50 BOB a transfer, the plan of the contract's examples.
import { centavos } from '../../src/money.ts';
import type { PricePlan } from '../../src/merchants/pricing.ts';

export const FEE_PLAN: PricePlan = { qrBasisPoints: 150, qrFixed: centavos(30), transferFixed: centavos(150) };

export const FEE_PLAN_TEXT = '1.5 % + 0.30 a payment, 1.50 a transfer';

/** The same plan as POST /admin/v1/merchants' `pricing` body (docs/api-reference.md#price-plans). */
export const FEE_PLAN_BODY = { qr_percent: 1.5, qr_fixed: 0.3, transfer_fixed: 1.5 };
