// TypeBox schemas of the bank capability's operator routes (docs/api-reference.md#reconcile-a-day-with-the-bank).
import { Type, type Static } from '@sinclair/typebox';
import { StrictObject, StringEnum } from '../kernel/schemas.ts';
import { BREAK_KINDS } from './reconciliation.ts';

export const ReconciliationQuery = StrictObject({
  date: Type.String({
    maxLength: 64,
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
    'x-format-hint': 'must be a date written YYYY-MM-DD',
    description: 'The business day, in SERVICE_TIMEZONE (not after today)',
    example: '2026-11-21',
  }),
});
export type ReconciliationQuery = Static<typeof ReconciliationQuery>;

const Amount = (description: string) => Type.Union([Type.Number(), Type.Null()], { description, example: 12.5 });
const Counts = (description: string) => Type.Object({
  bank: Type.Integer({ minimum: 0 }),
  ours: Type.Integer({ minimum: 0 }),
}, { description });

export const ReconciliationSchema = Type.Object({
  date: Type.String({ example: '2026-11-21' }),
  rail: Type.String({ example: 'baneco' }),
  status: StringEnum(['balanced', 'breaks'] as const),
  payments: Counts("bank: the day's entries in the bank's paid list; ours: the bank payments the service holds paid that day"),
  transfers: Counts("bank: the debits of the day in the account's history; ours: the transfers the bank accepted that day"),
  breaks: Type.Array(Type.Object({
    kind: StringEnum(BREAK_KINDS),
    reference: Type.Union([Type.String(), Type.Null()], {
      description: "The bank's transactionId (payments, unexpected_debit), the transfer's batchDetailId mps-transfer-… (missing_debit, conflicting_status), or the batchId mps-b-… (unknown_batch)",
    }),
    ours: Amount("The service's amount, in BOB, or null"),
    bank: Amount("The bank's amount, in BOB, or null (none, or not in BOB)"),
  }), { description: 'In the order of the kinds above, then by reference' }),
}, { description: "A business day of a bank rail compared with the journal" });
export type ReconciliationResource = Static<typeof ReconciliationSchema>;
