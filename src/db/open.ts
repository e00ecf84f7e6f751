// Opens the database a Config names, holding the embedded folder's lock file while it is open.
import type { DatabaseTarget } from '../config.ts';
import type { Database } from './database.ts';
import { acquireDataDirLock } from './lock-file.ts';
import { openPglite } from './pglite.ts';
import { openPostgres } from './postgres.ts';

export interface OpenDatabaseOptions {
  /** Who holds the embedded folder, written into its lock file ("service", "cli"). */
  purpose: string;
  onBackgroundError?: (error: unknown, context: string) => void;
  maxConnections?: number;
  /** PostgreSQL: longest wait for a statement's answer (see PostgresOptions); 0 for none. */
  queryTimeoutMs?: number;
  /** PostgreSQL: every transaction read-only (a replica). */
  readOnly?: boolean;
}

export async function openDatabase(target: DatabaseTarget, options: OpenDatabaseOptions): Promise<Database> {
  switch (target.kind) {
    case 'postgres':
      return openPostgres({
        url: target.url, onBackgroundError: options.onBackgroundError, maxConnections: options.maxConnections, queryTimeoutMs: options.queryTimeoutMs,
        readOnly: options.readOnly,
      });
    case 'pglite-memory':
      return openPglite({ onBackgroundError: options.onBackgroundError });
    case 'pglite': {
      const release = acquireDataDirLock(target.dataDir, options.purpose);
      try {
        const database = await openPglite({ dataDir: target.dataDir, onBackgroundError: options.onBackgroundError });
        const close = database.close.bind(database);
        return Object.assign(database, {
          async close() {
            try {
              await close();
            } finally {
              release();
            }
          },
        });
      } catch (error) {
        release();
        throw error;
      }
    }
  }
}
