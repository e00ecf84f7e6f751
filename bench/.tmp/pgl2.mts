import { PGlite } from '@electric-sql/pglite';
import { openPglite } from '../../src/db/pglite.ts';
import { migrate } from '../../src/db/migrate.ts';
const t0 = performance.now();
const base = new PGlite(); await base.waitReady;
const db = await openPglite(); await migrate(db);
console.log('first open+migrate', Math.round(performance.now() - t0));
// dump through the adapter is not exposed: use a raw PGlite for the dump
const raw = new PGlite(); await raw.waitReady;
const { loadMigrations } = await import('../../src/db/migrate.ts');
for (const m of loadMigrations()) await raw.exec(m.sql);
let t = performance.now();
const dump = await raw.dumpDataDir('none');
console.log('dump ms', Math.round(performance.now() - t), 'bytes', dump.size);
for (let i = 0; i < 3; i++) {
  t = performance.now();
  const c = new PGlite({ loadDataDir: dump }); await c.waitReady;
  const r = await c.query('select count(*) from merchants');
  console.log('clone ms', Math.round(performance.now() - t), r.rows);
  await c.close();
}
for (let i = 0; i < 3; i++) {
  t = performance.now();
  const c = new PGlite(); await c.waitReady;
  console.log('fresh ms', Math.round(performance.now() - t));
  await c.close();
}
const fs = await import('node:fs');
const dir = new URL('../../node_modules/@electric-sql/pglite/dist/', import.meta.url);
t = performance.now();
const pgliteWasmModule = await WebAssembly.compile(fs.readFileSync(new URL('pglite.wasm', dir)));
console.log('compile ms', Math.round(performance.now() - t));
for (let i = 0; i < 3; i++) {
  t = performance.now();
  const c = new PGlite({ loadDataDir: dump, pgliteWasmModule }); await c.waitReady;
  console.log('clone+module ms', Math.round(performance.now() - t));
  await c.close();
}
