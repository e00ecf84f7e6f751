// A program shown in the docs is a file the tests run: a `<!-- sample: path -->` line before a fenced
// block says which, and this test fails when the block is not that file, word for word. (The files
// themselves run in test/examples/examples.test.ts.)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const MARKDOWN = [
  'README.md',
  ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
  'sdk/README.md',
  ...readdirSync('examples', { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('README.md')).map((name) => path.join('examples', name)),
];
const SAMPLE = /<!-- sample: (\S+) -->\n```\w*\n([\s\S]*?)```/g;

describe('code samples in the docs', () => {
  const samples = MARKDOWN.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(SAMPLE)].map((match) => ({ file, sample: match[1]!, shown: match[2]! })));

  it('exist', () => {
    expect(samples.length).toBeGreaterThan(0);
  });

  it.each(samples.map((s) => [`${s.file} shows ${s.sample}`, s] as const))('%s word for word', (_, { sample, shown }) => {
    expect(shown).toBe(readFileSync(sample, 'utf8'));
  });
});
