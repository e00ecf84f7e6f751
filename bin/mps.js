#!/usr/bin/env node
// `mps` entry point: the compiled CLI (dist/cli/main.js), built first when dist/ is missing or stale.
process.argv.splice(2, 0, 'cli/main');
await import('../scripts/run.mjs');
