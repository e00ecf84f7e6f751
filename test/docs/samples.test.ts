// A program shown in the docs is a file the tests run: a `<!-- sample: path -->` line before a fenced
// block says which, and this test fails when the block is not that file, word for word. (The files
// themselves run in test/examples/examples.test.ts.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_BLOCKS } from './doc-blocks.ts';

describe('code samples in the docs', () => {
  const samples = ALL_BLOCKS.flatMap((block) => (block.marker?.kind === 'sample' ? [{ ...block, sample: block.marker.path }] : []));

  it('exist', () => {
    expect(samples.length).toBeGreaterThan(0);
  });

  it.each(samples.map((s) => [`${s.page}:${s.line} shows ${s.sample}`, s] as const))('%s word for word', (_, { sample, code }) => {
    expect(code).toBe(readFileSync(sample, 'utf8'));
  });
});
