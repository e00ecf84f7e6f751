// Runs once per `npm test`: prepares the migrated templates each test file clones — a snapshot of a
// migrated PGlite data directory (a fresh PGlite runs initdb and the migrations: seconds per file on this
// 2-core machine, most of what the suite used to spend) and, through TEST_DATABASE_URL, a PostgreSQL
// template database. Without TEST_DATABASE_URL the suite runs on PGlite alone and says
// so loudly at the end; in CI (CI=true) a missing or unreachable PostgreSQL fails the run instead.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../src/db/migrate.ts';
import { openPglite } from '../src/db/pglite.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { buildIfStale } from '../scripts/build.mjs';
import { hasChromium } from './helpers/chromium.ts';
import { databaseUrlWithName } from '../src/db/url.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** File holding the data directory of a migrated PGlite (loadDataDir). */
    pgliteTemplate: string;
    /** Name of the migrated template database on the TEST_DATABASE_URL server, or '' without PostgreSQL. */
    postgresTemplate: string;
  }
}

let templateName = '';
let pgliteTemplateDir = '';

export async function setup(project: TestProject): Promise<void> {
  // Said first, not only at the end: a newcomer should know what they are waiting for, and on what.
  const url = process.env.TEST_DATABASE_URL;
  // (`npm run contract` runs some suites on PGlite alone by design and says so itself: scripts/contract.ts.)
  if (process.env.CONTRACT_PROXY !== 'prism') {
    process.stdout.write(url
      ? '\nnpm test: every suite on the embedded PGlite and on PostgreSQL (TEST_DATABASE_URL); about 10 minutes on 2 cores.\n'
      : '\nnpm test: the embedded PGlite only (set TEST_DATABASE_URL to run every suite on PostgreSQL too, about 10 minutes on 2 cores); this run does about half that work.\n');
  }
  // The CLI and signal tests run the compiled service as users do (bin/mps.js, npm start): build it once
  // here, before test files run side by side (scripts/build.mjs; dist/ is ignored by git).
  buildIfStale();
  if (!hasChromium() && process.env.CI === 'true') {
    throw new Error('CI=true but /usr/bin/chromium is missing: the hosted pages must be tested in a browser (apt-get install -y chromium).');
  }
  pgliteTemplateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-pglite-template-'));
  const pglite = await openPglite();
  try {
    await migrate(pglite);
    const file = path.join(pgliteTemplateDir, 'migrated.tar');
    fs.writeFileSync(file, new Uint8Array(await (await pglite.dumpDataDir()).arrayBuffer()));
    project.provide('pgliteTemplate', file);
  } finally {
    await pglite.close();
  }

  if (!url) {
    if (process.env.CI === 'true') throw new Error('CI=true but TEST_DATABASE_URL is not set: the suite must run on PostgreSQL in CI.');
    project.provide('postgresTemplate', '');
    return;
  }
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`TEST_DATABASE_URL is set but PostgreSQL is unreachable (${(error as Error).message}).`);
  }
  try {
    templateName = `mps_template_${process.pid}_${Date.now()}`;
    await admin.query(`create database ${templateName}`);
  } finally {
    await admin.end();
  }
  const template = await openPostgres({ url: databaseUrlWithName(url, templateName) });
  try {
    await migrate(template);
  } finally {
    await template.close();
  }
  project.provide('postgresTemplate', templateName);
}

export async function teardown(): Promise<void> {
  if (pgliteTemplateDir) fs.rmSync(pgliteTemplateDir, { recursive: true, force: true });
  const url = process.env.TEST_DATABASE_URL;
  if (url && templateName) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`drop database if exists ${templateName} with (force)`);
    } finally {
      await admin.end();
    }
  }
  if (!hasChromium()) {
    process.stdout.write('\n!! /usr/bin/chromium is missing: the hosted-page browser tests were skipped (apt-get install -y chromium).\n');
  }
  // `npm run contract` runs on PGlite alone by design (scripts/contract.ts) and needs no reminder.
  if (!url && process.env.CONTRACT_PROXY !== 'prism') {
    const bar = '!'.repeat(78);
    process.stdout.write(`\n${bar}\n!! TEST_DATABASE_URL is not set: every test ran on the embedded PGlite ONLY.\n` +
      '!! Concurrency and race tests prove little there. Run the suite on PostgreSQL too:\n' +
      '!!   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test\n' + `${bar}\n\n`);
  }
}
