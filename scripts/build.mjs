// `npm run build`: compiles the service (src/) to dist/ with tsc (tsconfig.build.json), and copies what
// the compiled code reads beside itself (the SQL migrations, the QR renderer's CommonJS files).
// `buildIfStale()` is what `npm start` and `mps` call first (scripts/run.mjs): it builds only when dist/
// is missing or was built from other sources than src/ holds now, so `npm install && npm start` works on a fresh clone and a second
// start costs nothing. Plain JavaScript on purpose: it runs before anything is compiled, without tsx.
// Processes that start together (the test suite's CLI runs, two services) take turns through a lock
// file, and the one that waited finds the build done.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
/** Written last: dist/ is complete once it exists; it holds the fingerprint of the sources it was built from. */
const STAMP = path.join(DIST, '.built');
const LOCK = path.join(ROOT, '.dist.lock');
/** Besides src/, what changes the output. (Not package-lock.json: tsc's output does not depend on it.) */
const INPUTS = ['tsconfig.json', 'tsconfig.build.json'].map((name) => path.join(ROOT, name));

function sourceFiles(dir = SRC) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : [full];
  });
}

/**
 * Every input's path, size and modification time, hashed: a file added, deleted, renamed or changed
 * changes it (comparing times alone misses a deleted migration, or a file copied in with an old time).
 */
function sourceFingerprint() {
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(), ...INPUTS].sort()) {
    const stat = fs.statSync(file);
    hash.update(`${path.relative(ROOT, file)}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** True when dist/ is missing, unfinished, or built from other sources than those in src/ now. */
export function isStale() {
  if (!fs.existsSync(STAMP)) return true;
  return fs.readFileSync(STAMP, 'utf8').trim() !== sourceFingerprint();
}

function copyAssets(dir = SRC) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(full);
    else if (!entry.name.endsWith('.ts')) {
      const target = path.join(DIST, path.relative(SRC, full));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(full, target);
    }
  }
}

function typescriptIsInstalled() {
  try {
    createRequire(import.meta.url).resolve('typescript/bin/tsc');
    return true;
  } catch {
    return false;
  }
}

/** Compiles src/ to dist/ from scratch; throws with tsc's report when it does not compile. */
export function build() {
  const started = Date.now();
  const fingerprint = sourceFingerprint(); // before compiling: a source edited meanwhile makes the next start build again
  fs.rmSync(DIST, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`the build failed (tsc -p tsconfig.build.json):\n${result.stdout}${result.stderr}`);
  copyAssets();
  fs.writeFileSync(STAMP, `${fingerprint}\n`);
  return Date.now() - started;
}

function processIsAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes the build lock, waiting while another live process holds it. */
function withBuildLock(work) {
  for (;;) {
    try {
      fs.writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const holder = Number(fs.readFileSync(LOCK, 'utf8')) || 0;
      if (holder && !processIsAlive(holder)) fs.rmSync(LOCK, { force: true }); // left by a killed build
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    return work();
  } finally {
    fs.rmSync(LOCK, { force: true });
  }
}

/** Builds when dist/ is stale (see isStale); says so on stderr, which keeps a CLI's stdout clean. */
export function buildIfStale() {
  if (!isStale()) return;
  if (!typescriptIsInstalled()) {
    // A production install (npm ci --omit=dev) has no compiler: it runs the dist/ it was shipped with.
    if (fs.existsSync(STAMP)) return;
    throw new Error('dist/ is missing and TypeScript is not installed (a production install?): run `npm run build` where the development dependencies are installed, and ship dist/.');
  }
  withBuildLock(() => {
    if (!isStale()) return; // another process built it while this one waited
    process.stderr.write('Building dist/ from src/ (npm run build)…\n');
    const ms = build();
    process.stderr.write(`Built dist/ in ${(ms / 1000).toFixed(1)} s\n`);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const ms = withBuildLock(build);
    console.log(`dist/ built from src/ in ${(ms / 1000).toFixed(1)} s`);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
