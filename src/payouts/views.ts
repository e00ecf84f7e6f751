// The payout schedule's view: a pure function from what the service read to the JSON the operator API and
// the CLI answer (docs/architecture.md#conventions). The destination's account number shows its masked form.
import { centavosToAmount } from '../money.ts';
import type { PayoutScheduleResource } from './schemas.ts';
import type { PayoutSchedule } from './service.ts';

export function toPayoutScheduleResource(schedule: PayoutSchedule): PayoutScheduleResource {
  const { destination, lastRun } = schedule;
  return {
    business_code: schedule.businessCode,
    interval: schedule.interval,
    weekday: schedule.weekday,
    destination: destination && {
      type: 'bank_account',
      bank_code: destination.bankCode,
      account_number: destination.accountNumber.masked,
      account_titular: destination.accountTitular,
    },
    minimum: centavosToAmount(schedule.minimumCentavos),
    keep: centavosToAmount(schedule.keepCentavos),
    effective_from: schedule.effectiveFrom,
    last_run: lastRun && { date: lastRun.business_date, outcome: lastRun.outcome, transfer_id: lastRun.transfer_id },
    updated_at: schedule.updatedAt?.toISOString() ?? null,
  };
}
