// The /openapi.json a service started with the default configuration (sandbox mode) serves, built in
// memory without listening on a port: the source the SDK's types are generated from (scripts/sdk-types.ts)
// and the list of operations `npm run contract` must see exercised (scripts/contract.ts).
import { loadConfig } from '../src/config.ts';
import { createAppContext } from '../src/composition.ts';
import { openDatabase } from '../src/db/open.ts';
import { buildApp } from '../src/http/app.ts';
import { systemClock } from '../src/time.ts';

/** `env` adds to the defaults (ADMIN_TOKEN, say, documents the operator API as well). */
export async function serviceOpenApiDocument(env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  // Only the environment variables that shape the document are fixed; nothing else is read.
  const config = loadConfig({ DATABASE_URL: 'memory://', MODE: 'sandbox', LOG_LEVEL: 'silent', ...env });
  const db = await openDatabase(config.database, { purpose: 'openapi' });
  try {
    const app = await buildApp(createAppContext({ config, db, clock: systemClock }));
    try {
      await app.ready();
      return app.swagger() as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
  }
}
