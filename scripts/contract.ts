// `npm run contract`: the HTTP suite's traffic through an independent contract checker. Every test app
// starts Stoplight Prism in proxy mode in front of itself (CONTRACT_PROXY=prism, test/helpers/app.ts), so
// each documented request and its answer are validated against the app's own /openapi.json by a validator
// this project did not write; a violation fails the test that made the request. Afterwards every operation
// the document lists must have been answered with success through Prism at least once, or the run fails.
//
// It runs on the embedded PGlite alone: the document is the same on both databases, and the main suite
// (`npm test` in .ci/run) already runs on PostgreSQL. Hostile-input tests are left out — Prism itself
// cannot relay a body nested deeper than its parser allows — and the in-process checker
// (test/helpers/contract-check.ts) holds their answers to the document in every run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serviceOpenApiDocument } from './openapi-document.ts';

const SUITES = ['test/http', 'test/qr', 'test/transfers', 'test/refunds', 'test/webhooks', 'test/events', 'test/onboarding', 'test/ledger'];
const LEFT_OUT = ['**/hostile-input.test.ts', '**/*.browser.test.ts'];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// The test apps run with ADMIN_TOKEN set, so the operator API is part of the document they serve.
const document: Json = await serviceOpenApiDocument({ ADMIN_TOKEN: 'contract-run-admin-token-0123456789abcdef' });
const documented = Object.entries<Json>(document.paths).flatMap(([template, methods]) =>
  Object.entries<Json>(methods).map(([method, operation]) => ({
    name: `${method.toUpperCase()} ${template}`,
    statuses: Object.keys(operation.responses ?? {}),
  })));

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-contract-'));
const coverageFile = path.join(dir, 'exchanges.txt');
fs.writeFileSync(coverageFile, '');
const env: NodeJS.ProcessEnv = { ...process.env, CONTRACT_PROXY: 'prism', CONTRACT_COVERAGE: coverageFile };
delete env.TEST_DATABASE_URL;
delete env.CONTRACT_REPORT; // it would list violations in a file instead of failing their tests
delete env.CI; // CI=true demands PostgreSQL of a run; this one is PGlite's by design (see above)

console.log(`== the suite's traffic through Stoplight Prism (proxy mode): ${SUITES.join(' ')}`);
const vitest = spawnSync('npx', ['vitest', 'run', ...SUITES, ...LEFT_OUT.flatMap((glob) => ['--exclude', glob])], { stdio: 'inherit', env });

// One line per documented exchange: "METHOD /template status" and " direct" when Prism could not relay it.
const seen = new Map<string, Set<string>>();
for (const line of fs.readFileSync(coverageFile, 'utf8').split('\n')) {
  const [method, template, status, direct] = line.split(' ');
  if (!status || direct) continue;
  const name = `${method} ${template}`;
  if (!seen.has(name)) seen.set(name, new Set());
  seen.get(name)!.add(status);
}
fs.rmSync(dir, { recursive: true, force: true });

// Exercised means answered with success at least once: an operation seen only refused (401, 404…) had
// its answers checked, but not the shape a client relies on.
const succeeded = (name: string) => [...(seen.get(name) ?? [])].some((status) => /^[23]/.test(status));
const unexercised = documented.filter((operation) => !succeeded(operation.name));
const pairs = documented.reduce((sum, operation) => sum + operation.statuses.length, 0);
const pairsSeen = documented.reduce((sum, operation) => sum + operation.statuses.filter((status) => seen.get(operation.name)?.has(status)).length, 0);
console.log(`\n== Prism saw ${documented.length - unexercised.length} of ${documented.length} documented operations succeed, and ${pairsSeen} of their ${pairs} documented (operation, status) answers`);
for (const operation of unexercised) console.log(`   never answered with success through Prism: ${operation.name}`);

if (vitest.status !== 0) {
  console.error('FAIL: a test failed; a contract violation found by Prism fails the test that made the request.');
  process.exit(1);
}
if (unexercised.length > 0) {
  console.error('FAIL: every documented operation must succeed at least once through Prism.');
  process.exit(1);
}
console.log('== no contract violation');
