// What every capability is given: the validated config, the database and the clock. Nothing reads
// process.env or the system time around it.
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Clock } from './time.ts';

export interface AppContext {
  config: Config;
  db: Database;
  clock: Clock;
}
