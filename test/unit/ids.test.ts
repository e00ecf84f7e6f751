import { describe, expect, it } from 'vitest';
import { randomBase62 } from '../../src/ids.ts';

describe('randomBase62', () => {
  it('gives text of the asked length from the base62 alphabet', () => {
    for (const length of [1, 8, 22, 24, 32, 300]) expect(randomBase62(length)).toMatch(new RegExp(`^[0-9A-Za-z]{${length}}$`));
  });

  it('never repeats a 22-character token across many draws, including across refills of the byte pool', () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 20_000; i++) tokens.add(randomBase62(22)); // ~120 refills of the 4 KiB pool
    expect(tokens.size).toBe(20_000);
  });

  it('uses every character about equally often (rejection sampling leaves no bias)', () => {
    const counts = new Map<string, number>();
    const draws = 62 * 4_000;
    for (const character of randomBase62(draws)) counts.set(character, (counts.get(character) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Chi-square with 61 degrees of freedom: its 99.99th percentile is about 115. A modulo bias toward the
    // first 8 characters (bytes 248–255 kept) would push it past 1,000 at this sample size.
    const expected = draws / 62;
    const chiSquare = [...counts.values()].reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
    expect(chiSquare).toBeLessThan(115);
  });
});
