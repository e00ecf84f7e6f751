// Runs a compiled entry point of the service with plain node, in this process: `node scripts/run.mjs main`
// is `npm start`, `node scripts/run.mjs cli/main …` is `mps …`. It builds dist/ first when it is missing
// or stale (scripts/build.mjs), then imports dist/<entry>.js — no child process, so a signal sent to this
// process (by npm, docker, systemd or Ctrl+C) is the service's own signal and its graceful shutdown runs.
import { buildIfStale } from './build.mjs';

const entry = process.argv[2];
if (!entry || !/^[\w/-]+$/.test(entry)) {
  process.stderr.write('usage: node scripts/run.mjs <entry under dist/, e.g. main or cli/main> [arguments…]\n');
  process.exit(2);
}
try {
  buildIfStale();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
process.argv.splice(2, 1); // the entry reads its own arguments from argv[2] on
await import(new URL(`../dist/${entry}.js`, import.meta.url).href);
