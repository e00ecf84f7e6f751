// TypeBox schemas of the payout schedule routes (docs/api-reference.md#payout-schedules): validation, OpenAPI
// and types from one source. The destination is a transfer's (src/transfers/schemas.ts), checked the same way.
import { Type, type Static } from '@sinclair/typebox';
import type { BankConfig } from '../config.ts';
import { BusinessCode, MoneyAmount, StrictObject, StringEnum, Timestamp } from '../kernel/schemas.ts';
import { bankAccountDestinationSchema, DestinationSchema, MAX_TRANSFER_CENTAVOS, MIN_TRANSFER_CENTAVOS } from '../transfers/schemas.ts';

export const PAYOUT_INTERVALS = ['manual', 'daily', 'weekly'] as const;

export const PAYOUT_RUN_OUTCOMES = ['transferred', 'below_minimum', 'suspended', 'no_ach_module', 'unknown_bank', 'missed'] as const;

/** The contract's bounds and defaults (§15.3): minimum 0.10–20000.00 (default 10.00), keep 0–1000000.00 (default 0). */
export const MIN_PAYOUT_MINIMUM_CENTAVOS = MIN_TRANSFER_CENTAVOS;
export const MAX_PAYOUT_MINIMUM_CENTAVOS = MAX_TRANSFER_CENTAVOS;
export const DEFAULT_PAYOUT_MINIMUM_CENTAVOS = 1_000;
export const MAX_PAYOUT_KEEP_CENTAVOS = 100_000_000;
export const DEFAULT_PAYOUT_KEEP_CENTAVOS = 0;

/**
 * The body of PUT /admin/v1/merchants/{business_code}/payout-schedule. What the schema cannot say alone —
 * `weekday` with `weekly` only, `destination` unless one is stored — the service checks, in the same 422.
 */
export function putPayoutScheduleBodySchema(banks: readonly BankConfig[]) {
  return StrictObject({
    interval: StringEnum(PAYOUT_INTERVALS, { description: 'daily, weekly (on `weekday`), or manual: no scheduled payouts' }),
    weekday: Type.Optional(Type.Integer({ minimum: 1, maximum: 7, description: 'With weekly only: 1 = Monday … 7 = Sunday' })),
    destination: Type.Optional(bankAccountDestinationSchema(banks)),
    minimum: Type.Optional(MoneyAmount(MIN_PAYOUT_MINIMUM_CENTAVOS, MAX_PAYOUT_MINIMUM_CENTAVOS, {
      description: 'No payout when less than this would be paid out; 0.10 to 20000.00, default 10.00',
    })),
    keep: Type.Optional(MoneyAmount(0, MAX_PAYOUT_KEEP_CENTAVOS, {
      description: 'Left in the available balance at each payout; 0 to 1000000.00, default 0',
    })),
  });
}

export type PutPayoutScheduleBody = Static<ReturnType<typeof putPayoutScheduleBodySchema>>;

export const PayoutScheduleSchema = Type.Object({
  business_code: BusinessCode(),
  interval: StringEnum(PAYOUT_INTERVALS),
  weekday: Type.Union([Type.Integer({ minimum: 1, maximum: 7 }), Type.Null()], { description: 'With weekly: 1 = Monday … 7 = Sunday' }),
  destination: Type.Union([DestinationSchema, Type.Null()], {
    description: 'Where payouts go (account number masked); null when nothing is stored yet',
  }),
  minimum: Type.Number({ example: 10 }),
  keep: Type.Number({ example: 0 }),
  effective_from: Type.Union([Type.String({ example: '2026-11-23' }), Type.Null()], {
    description: 'The first business day (SERVICE_TIMEZONE) whose PAYOUT_TIME pays out; null when manual',
  }),
  last_run: Type.Union([
    Type.Object({
      date: Type.String({ example: '2026-11-23', description: 'The scheduled business day (SERVICE_TIMEZONE)' }),
      outcome: StringEnum(PAYOUT_RUN_OUTCOMES, {
        description: 'transferred; or why not: below_minimum, suspended, no_ach_module, unknown_bank',
      }),
      transfer_id: Type.Union([Type.Integer(), Type.Null()]),
    }),
    Type.Null(),
  ], { description: 'The latest scheduled day run for the merchant; null before the first' }),
  updated_at: Type.Union([Timestamp(), Type.Null()], { description: 'null while the merchant has never had a schedule' }),
}, { description: "A merchant's payout schedule; the account number is always masked" });

export type PayoutScheduleResource = Static<typeof PayoutScheduleSchema>;
