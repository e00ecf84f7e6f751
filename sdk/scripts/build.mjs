// `npm run build` in sdk/ (and `prepack`, so `npm pack` and `npm publish` always ship a fresh build):
// compiles src/ to dist/ twice with the repository's TypeScript —
//   dist/esm/  ES modules + .d.ts      (`import`,  tsconfig.build.json: type-checked)
//   dist/cjs/  CommonJS   + .d.ts      (`require`, tsconfig.cjs.json: transpiled only)
// dist/cjs/package.json says "type": "commonjs", so Node and TypeScript read that folder's .js and .d.ts
// as CommonJS although sdk/package.json says "module". Plain JavaScript: it runs before anything is built.
// It reports on stderr, which keeps `npm pack --json` (whose stdout carries prepack's) parseable.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SDK = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(SDK, 'dist');

function tsc(project) {
  const bin = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [bin, '-p', path.join(SDK, project)], { cwd: SDK, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tsc -p ${project} failed:\n${result.stdout}${result.stderr}`);
}

function declarations(dir) {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.d.ts'))
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
}

const started = Date.now();
fs.rmSync(DIST, { recursive: true, force: true });
try {
  tsc('tsconfig.build.json');
  tsc('tsconfig.cjs.json');
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const esm = path.join(DIST, 'esm');
const cjs = path.join(DIST, 'cjs');
// tsc rewrites the sources' `./x.ts` imports to `./x.js` in the JavaScript but keeps them in the
// declarations, which a consumer's compiler may refuse (allowImportingTsExtensions): rewritten here. The
// declarations are then the same text for both formats; in dist/cjs/ TypeScript reads them as CommonJS and
// resolves the dependencies' `require` types (openapi-fetch's index.d.cts).
const RELATIVE_TS = /(['"])(\.\.?\/[^'"]*)\.ts\1/g;
for (const file of declarations(esm)) {
  const text = fs.readFileSync(path.join(esm, file), 'utf8').replace(RELATIVE_TS, '$1$2.js$1');
  fs.writeFileSync(path.join(esm, file), text);
  fs.mkdirSync(path.dirname(path.join(cjs, file)), { recursive: true });
  fs.writeFileSync(path.join(cjs, file), text);
}
fs.writeFileSync(path.join(cjs, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
console.error(`sdk/dist/ built (ESM and CommonJS, with declarations) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
