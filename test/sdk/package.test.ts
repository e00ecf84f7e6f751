// The SDK as a package (sdk/README.md, "Installing it"): what `npm pack` ships (its prepack builds dist/),
// installed into a throwaway project outside the repository, and run with plain `node` — no tsx — as an
// ES module and as CommonJS against the service over HTTP; a TypeScript file of each kind compiled against
// the shipped declarations. Fails when the package cannot be imported or required, misses a file, or ships
// declarations that do not resolve.
//
// The install needs no network: the project's package-lock.json pins the SDK's dependencies to the versions
// and integrity hashes of the repository's own lock, so `npm ci --offline` takes them from the npm cache that
// the repository's `npm ci` filled. Only when the cache lacks them (a CI that caches node_modules, not
// ~/.npm) does it fetch them from the registry.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SDK = path.join(ROOT, 'sdk');

interface Run { code: number | null; stdout: string; stderr: string }

/**
 * The environment for a child npm: without what `npm test` exports about this repository (its package,
 * its prefix, the script running), which would make npm in the temporary project act on the repository.
 */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_(package_|lifecycle_|command$|config_local_prefix$|config_workspaces?$|config_include_workspace_root$)/i.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command without blocking this process's event loop: the service answering the scripts runs in it. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = childEnv()): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk; });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function ok(result: Run, what: string): Run {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** The package.json and package-lock.json of a project depending on the tarball alone. */
function projectFiles(tarball: string) {
  const rootLock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  const sdk = JSON.parse(fs.readFileSync(path.join(SDK, 'package.json'), 'utf8'));
  const dependencies = { '@merchant-payments/sdk': `file:${tarball}` };
  const packages: Record<string, unknown> = {
    '': { name: 'sdk-consumer', dependencies },
    'node_modules/@merchant-payments/sdk': { version: sdk.version, resolved: `file:${tarball}`, license: sdk.license, dependencies: sdk.dependencies },
  };
  // The SDK's dependencies and theirs, as the repository's lock has them (all hoisted to its root).
  const pending = Object.keys(sdk.dependencies);
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const key = `node_modules/${name}`;
    if (packages[key]) continue;
    const entry = rootLock.packages[key];
    if (!entry) throw new Error(`package-lock.json has no ${key}: the SDK's dependency ${name} is not hoisted`);
    packages[key] = entry;
    pending.push(...Object.keys(entry.dependencies ?? {}));
  }
  return {
    manifest: { name: 'sdk-consumer', private: true, dependencies },
    lock: { name: 'sdk-consumer', lockfileVersion: 3, requires: true, packages },
  };
}

const ESM_APP = `
import { createClient } from '@merchant-payments/sdk';
const client = createClient({ baseUrl: process.env.MPS_URL, apiKey: process.env.MPS_API_KEY });
const created = await client.simpleQrs.create({ business_code: Number(process.env.MPS_BUSINESS_CODE), amount: 25.5, external_reference: 'esm' });
const qr = await client.simpleQrs.get(created.id);
const balance = await client.balance.get();
console.log(JSON.stringify({ qr, balance }));
`;

const CJS_APP = `
const { createClient, isApiError, ApiError } = require('@merchant-payments/sdk');
const client = createClient({ baseUrl: process.env.MPS_URL, apiKey: process.env.MPS_API_KEY });
(async () => {
  const qr = await client.simpleQrs.create({ business_code: Number(process.env.MPS_BUSINESS_CODE), amount: 10, external_reference: 'cjs' });
  const missing = await client.simpleQrs.get('00000000-0000-4000-8000-000000000000').catch((error) => error);
  console.log(JSON.stringify({ qr, missing: { isApiError: isApiError(missing, 'NOT_FOUND'), isInstance: missing instanceof ApiError, status: missing.status } }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

/** Compiled, not run: the declarations resolve for each module kind and carry the generated types (not `any`). */
const TYPED_CONSUMER = `
import { createClient, isApiError, type SimpleQr } from '@merchant-payments/sdk';
const client = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'mk_test' });
async function newQr(): Promise<SimpleQr> {
  // @ts-expect-error business_code is a number: the declarations are the generated types
  await client.simpleQrs.create({ business_code: '1001', amount: 10 }).catch((error: unknown) => isApiError(error, 'NOT_FOUND'));
  return client.simpleQrs.create({ business_code: 1001, amount: 10 });
}
`;

describe('the SDK as an npm package', () => {
  let t: TestApp;
  let temp: string;
  let packed: { filename: string; files: { path: string }[] };

  beforeAll(async () => {
    temp = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-sdk-package-'));
    const [service, pack] = await Promise.all([
      startTestApp({ kind: databaseKinds()[0]! }),
      run('npm', ['pack', '--json', '--pack-destination', temp], SDK), // prepack: node scripts/build.mjs
    ]);
    t = service;
    packed = JSON.parse(ok(pack, 'npm pack').stdout)[0];

    const project = path.join(temp, 'consumer');
    fs.mkdirSync(project);
    const { manifest, lock } = projectFiles(`../${packed.filename}`);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify(manifest, null, 2));
    fs.writeFileSync(path.join(project, 'package-lock.json'), JSON.stringify(lock, null, 2));
    const flags = ['--no-audit', '--no-fund', '--ignore-scripts'];
    const offline = await run('npm', ['ci', '--offline', ...flags], project);
    if (offline.code !== 0) ok(await run('npm', ['ci', '--prefer-offline', ...flags], project), 'npm ci (the npm cache lacked a dependency, so from the registry)');

    // Two apps beside each other, one of each module kind, both resolving the SDK from consumer/node_modules.
    for (const [kind, type, source] of [['esm', 'module', ESM_APP], ['cjs', 'commonjs', CJS_APP]] as const) {
      fs.mkdirSync(path.join(project, kind));
      fs.writeFileSync(path.join(project, kind, 'package.json'), JSON.stringify({ type }));
      fs.writeFileSync(path.join(project, kind, 'app.js'), source);
      fs.writeFileSync(path.join(project, kind, 'typed.ts'), TYPED_CONSUMER);
    }
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    if (temp) fs.rmSync(temp, { recursive: true, force: true });
  });

  const project = () => path.join(temp, 'consumer');
  const serviceEnv = async () => {
    const merchant = await t.createMerchant();
    return childEnv({ MPS_URL: t.baseUrl, MPS_API_KEY: merchant.apiKey, MPS_BUSINESS_CODE: String(merchant.businessCode) });
  };

  it('packs only dist/, README.md, LICENSE and package.json, with both builds and their declarations', () => {
    const files = packed.files.map((file) => file.path).sort();
    expect(files.filter((file) => !/^(dist\/.+|README\.md|LICENSE|package\.json)$/.test(file))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json',
      'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/cjs/index.js', 'dist/cjs/index.d.ts', 'dist/cjs/package.json']));
    const manifest = JSON.parse(fs.readFileSync(path.join(project(), 'node_modules/@merchant-payments/sdk/package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
  });

  it('is imported by a plain Node ES module app, which creates and reads a QR and the balance over HTTP', async () => {
    const result = ok(await run(process.execPath, ['esm/app.js'], project(), await serviceEnv()), 'node esm/app.js');
    const { qr, balance } = JSON.parse(result.stdout);
    expect(qr).toMatchObject({ status: 'ACTIVE', amount: 25.5, external_reference: 'esm' });
    expect(balance).toBeTypeOf('object');
  });

  it('is required by a plain Node CommonJS app, whose refused call is an ApiError', async () => {
    const result = ok(await run(process.execPath, ['cjs/app.js'], project(), await serviceEnv()), 'node cjs/app.js');
    const { qr, missing } = JSON.parse(result.stdout);
    expect(qr).toMatchObject({ status: 'ACTIVE', amount: 10, external_reference: 'cjs' });
    expect(missing).toEqual({ isApiError: true, isInstance: true, status: 404 });
  });

  it('type-checks a TypeScript consumer of each module kind against the shipped declarations', async () => {
    fs.writeFileSync(path.join(project(), 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        module: 'nodenext', target: 'es2022', strict: true, noEmit: true,
        types: ['node'], typeRoots: [path.join(ROOT, 'node_modules/@types')], // fetch, Headers, Buffer
        // As most projects: a quarter of the time. A declaration that did not resolve would still show,
        // as `any` types that leave TYPED_CONSUMER's @ts-expect-error unused.
        skipLibCheck: true,
      },
      include: ['esm/typed.ts', 'cjs/typed.ts'],
    }));
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    ok(await run(process.execPath, [tsc, '-p', '.'], project()), 'tsc (esm/typed.ts, cjs/typed.ts)');
  }, 60_000);
});
