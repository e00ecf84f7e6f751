// The Banco Económico rail (RAIL=baneco; docs/rails.md): the bank issues the QRs and lists the payments
// (pay-in), takes transfers in batches (pay-out), keeps the platform's account (its history, for
// reconciliation), and offers no reversal (refunds are the operator's).
import type { BanecoConfig } from '../../config.ts';
import type { Queryable } from '../../db/database.ts';
import type { Clock } from '../../time.ts';
import { RailAttemptLog } from '../attempts.ts';
import type { Rail } from '../rail.ts';
import { BanecoAccount } from './account.ts';
import { BanecoClient } from './client.ts';
import { BanecoPayIn } from './pay-in.ts';
import { BanecoPayOut } from './pay-out.ts';

export interface BanecoRailOptions {
  config: BanecoConfig;
  serviceTimeZone: string;
  db: Queryable;
  clock: Clock;
  onAttemptLogError?: (error: unknown) => void;
}

export function banecoRail(options: BanecoRailOptions): Rail {
  const client = new BanecoClient({ config: options.config, serviceTimeZone: options.serviceTimeZone });
  const attempts = new RailAttemptLog(options.db, options.clock, 'baneco', options.onAttemptLogError);
  return {
    name: 'baneco',
    payOut: new BanecoPayOut(client, options.config, attempts),
    // The bank offers no reversal and gives payers' accounts masked: refunds wait PENDING for the operator.
    refunds: null,
    payIn: new BanecoPayIn(client, options.config, options.serviceTimeZone, attempts),
    account: new BanecoAccount(client, attempts),
    sandboxPayer: null,
  };
}
