// Runs once per `npm test`: finds PostgreSQL through TEST_DATABASE_URL and prepares a migrated template
// database that each test file clones. Without TEST_DATABASE_URL the suite runs on PGlite alone and says
// so loudly at the end; in CI (CI=true) a missing or unreachable PostgreSQL fails the run instead.
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../src/db/migrate.ts';
import { openPostgres } from '../src/db/postgres.ts';
import { databaseUrlWithName } from './helpers/postgres-url.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Name of the migrated template database on the TEST_DATABASE_URL server, or '' without PostgreSQL. */
    postgresTemplate: string;
  }
}

let templateName = '';

export async function setup(project: TestProject): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
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
  if (!url) {
    const bar = '!'.repeat(78);
    process.stdout.write(`\n${bar}\n!! TEST_DATABASE_URL is not set: every test ran on the embedded PGlite ONLY.\n` +
      '!! Concurrency and race tests prove little there. Run the suite on PostgreSQL too:\n' +
      '!!   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test\n' + `${bar}\n\n`);
  }
}
