// The Banco Económico rail (RAIL=baneco; docs/rails.md): its pay-in is built (the bank issues the QRs and
// lists the payments); its pay-out (batches) is the next piece, and config.ts refuses RAIL=baneco at start
// until it lands. Tests build it with a typed config (test/helpers/app.ts).
import type { BanecoConfig } from '../../config.ts';
import type { Queryable } from '../../db/database.ts';
import type { Clock } from '../../time.ts';
import { RailAttemptLog } from '../attempts.ts';
import type { RefundRail } from '../pay-in.ts';
import type { PayOutRail } from '../pay-out.ts';
import type { Rail } from '../rail.ts';
import { BanecoClient } from './client.ts';
import { BanecoPayIn } from './pay-in.ts';

export interface BanecoRailOptions {
  config: BanecoConfig;
  serviceTimeZone: string;
  db: Queryable;
  clock: Clock;
  onAttemptLogError?: (error: unknown) => void;
}

/** Batches are not built yet: nothing may submit a transfer to this rail (transfers wait PENDING). */
const notYetPayOut: PayOutRail = {
  submit: async () => {
    throw new Error('the Banco Económico rail cannot pay out yet (batches are not built)');
  },
  track: async () => {
    throw new Error('the Banco Económico rail cannot pay out yet (batches are not built)');
  },
};

/** The bank offers no reversal: with this rail refunds are resolved by the operator, never sent. */
const noReversal: RefundRail = {
  sendRefund: async () => {
    throw new Error('Banco Económico offers no reversal: refunds are resolved by the operator');
  },
};

export function banecoRail(options: BanecoRailOptions): Rail {
  const client = new BanecoClient({ config: options.config, serviceTimeZone: options.serviceTimeZone });
  const attempts = new RailAttemptLog(options.db, options.clock, 'baneco', options.onAttemptLogError);
  return {
    name: 'baneco',
    payOut: notYetPayOut,
    refunds: noReversal,
    payIn: new BanecoPayIn(client, options.config, options.serviceTimeZone, attempts),
    sandboxPayer: null,
  };
}
