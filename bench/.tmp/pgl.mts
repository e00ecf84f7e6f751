import { openPglite } from '../../src/db/pglite.ts';
import { migrate } from '../../src/db/migrate.ts';
import { PGlite } from '@electric-sql/pglite';
for (let i = 0; i < 3; i++) {
  let t0 = performance.now();
  const db = await openPglite();
  const t1 = performance.now();
  await migrate(db);
  const t2 = performance.now();
  console.log('open', Math.round(t1 - t0), 'migrate', Math.round(t2 - t1));
  await db.close();
}
const p = new PGlite(); await p.waitReady;
const db2 = await openPglite(); await migrate(db2);
