// The project stands alone: what a user clones is all it needs. No file of it may read or link the team's
// reference material beside the repository, which a clone does not have.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'test', 'bench', 'docs', 'faults', '.ci', 'README.md', 'BENCHMARKS.md', 'package.json', 'vitest.config.ts'];
const TEXT = /\.(ts|mts|cjs|js|json|md|sql|txt|sh)$|^run$/;
// Spelled in pieces so this file does not match itself.
const OUTSIDE = [['..', 'shared'].join('/'), ['shared', 'API.md'].join('/'), ['', 'work', 'shared'].join('/'), ['PATTERNS', 'md'].join('.'), ['ARCHITECTURE', 'md'].join('.')];

function filesUnder(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!fs.existsSync(full)) return [];
  if (fs.statSync(full).isFile()) return [entry];
  return fs.readdirSync(full, { withFileTypes: true })
    .filter((child) => child.name !== 'node_modules' && !child.name.startsWith('.tmp') && child.name !== 'results')
    .flatMap((child) => (child.isDirectory() ? filesUnder(path.join(entry, child.name)) : TEXT.test(child.name) ? [path.join(entry, child.name)] : []));
}

describe('the repository', () => {
  it('reads and links nothing outside itself', () => {
    const files = SCANNED.flatMap(filesUnder);
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((file) => {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      return OUTSIDE.filter((needle) => text.includes(needle)).map((needle) => `${file}: ${needle}`);
    });
    expect(offenders).toEqual([]);
  });
});
