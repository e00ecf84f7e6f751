// Schemas of the balance routes (API.md §6).
import { Type } from '@sinclair/typebox';

export const BalanceSchema = Type.Object({
  business_code: Type.Integer(),
  currency: Type.Literal('BOB'),
  available: Type.Number({ description: 'What the merchant can pay out now', example: 1250.5 }),
  pending_out: Type.Number({ description: 'Transfers debited but still PENDING or IN_TRANSIT, as a positive amount', example: 100 }),
});

/** The operator's ledger check (API.md §6 invariant for every merchant). */
export const LedgerCheckSchema = Type.Object({
  balances_checked: Type.Integer(),
  ok: Type.Boolean(),
  violations: Type.Array(Type.Object({
    business_code: Type.Integer(),
    available: Type.Number(),
    expected_available: Type.Number(),
    pending_out: Type.Number(),
    expected_pending_out: Type.Number(),
  })),
});
