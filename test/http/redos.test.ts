// No request pattern backtracks (docs/security.md#regular-expressions): every pattern of every schema
// the service compiles to check input — the API's bodies, queries and paths, the hosted pages' forms, and
// whatever a later schema adds — goes through recheck, a ReDoS checker that finds polynomial as well as
// exponential backtracking. The list is not written here: it is what the running app compiled
// (kernel/validation.ts requestPatterns), so a new schema is checked the day it is added.
import { check } from 'recheck';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { requestPatterns } from '../../src/kernel/validation.ts';

describe('the patterns of every request schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind: 'pglite' });
  });
  afterAll(() => t?.close());

  it('are all compiled by the app, forms included', () => {
    const patterns = [...requestPatterns()];
    // Known ones, from the API (transfers, QRs, statements) and from the onboarding form: the walk is not empty.
    expect(patterns).toEqual(expect.arrayContaining([
      '^-*[0-9][0-9-]*$', // destination.account_number
      '^[A-Za-z0-9_.:-]+$', // external_reference
      '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', // statement dates
      '^(?=(?:[^0-9]*[0-9]){7,15}[^0-9]*$)\\+?[0-9 ()-]+$', // the onboarding form's phone
    ]));
    expect(patterns.length).toBeGreaterThanOrEqual(10);
  });

  it('backtrack neither exponentially nor polynomially (recheck)', { timeout: 120_000 }, async () => {
    const verdicts = await Promise.all([...requestPatterns()].map(async (pattern) => {
      const diagnostics = await check(pattern, '', { timeout: 30_000 });
      return { pattern, status: diagnostics.status, complexity: diagnostics.status === 'vulnerable' ? diagnostics.complexity.summary : undefined };
    }));
    // 'unknown' (the checker gave up) would fail as well: a pattern must be shown safe, not merely not shown unsafe.
    expect(verdicts.filter((verdict) => verdict.status !== 'safe')).toEqual([]);
  });

  it('flags the patterns the audit found, so the checker is not asleep', async () => {
    expect((await check('^[0-9-]*[0-9][0-9-]*$', '')).status).toBe('vulnerable');
    expect((await check('^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', '')).status).toBe('vulnerable');
  });
});
