// CHANGELOG.md (docs/releasing.md#what-the-changelog-needs): an entry for the version package.json gives
// (the one /healthz and the banner show), every migration listed by number, and the pages that show the
// version showing this one.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/db/migrate.ts';
import { SERVICE_VERSION } from '../../src/version.ts';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('CHANGELOG.md', () => {
  const changelog = read('CHANGELOG.md');

  it('has an [Unreleased] section and an entry for package.json\'s version, newest first', () => {
    const { version } = JSON.parse(read('package.json')) as { version: string };
    expect(SERVICE_VERSION).toBe(version);
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
    const headings = [...changelog.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((match) => match[1]);
    expect(headings[0]).toBe('Unreleased');
    expect(headings[1]).toBe(version);
  });

  it('lists every migration by its number', () => {
    const missing = loadMigrations().filter((migration) => !changelog.includes(`| ${String(migration.version).padStart(3, '0')} |`));
    expect(missing.map((migration) => migration.name), 'add each to the Database migrations table of its release (or of [Unreleased])').toEqual([]);
  });

  it('is the version README\'s banner and the API reference\'s /healthz show', () => {
    expect(read('README.md')).toContain(`Merchant Payments Service ${SERVICE_VERSION} (sandbox) listening on`);
    expect(read('docs/api-reference.md')).toContain(`{ "status": "ok", "version": "${SERVICE_VERSION}" }`);
  });
});
