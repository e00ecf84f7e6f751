// Banco Económico's account history behind the rail-neutral AccountRail (src/rails/account.ts): one
// POST api/accounts/history of the platform's account (BANECO_ACCOUNT, encrypted by the client), its HTTP
// exchanges written to the attempt log, the bank's entries (D/C, debits negative) turned into neutral ones.
import { centavos } from '../../money.ts';
import type { AccountRail, RailAccountEntry, RailAccountHistory } from '../account.ts';
import type { RailAttemptLog } from '../attempts.ts';
import type { RailOutcome } from '../outcome.ts';
import type { BanecoClient } from './client.ts';
import { railOutcomeOf } from './outcome.ts';
import type { AccountEntry } from './wire.ts';

export class BanecoAccount implements AccountRail {
  constructor(
    private readonly client: BanecoClient,
    private readonly attempts: RailAttemptLog,
  ) {}

  async readHistory(startDate: string, endDate: string): Promise<RailOutcome<RailAccountHistory>> {
    const result = await this.client.accountHistory(startDate, endDate);
    return railOutcomeOf(this.attempts, result, (history) => ({ entries: history.entries.map(entryOf) }));
  }

  toJSON(): string {
    return 'BanecoAccount';
  }
}

function entryOf(entry: AccountEntry): RailAccountEntry {
  return {
    reference: entry.transactionId,
    direction: entry.direction,
    // The reader checked the sign agrees with transactionType; the neutral amount carries no sign.
    amountCentavos: centavos(Math.abs(entry.amountCentavos)),
    bookedAt: entry.bookedAt,
    day: entry.date,
  };
}
