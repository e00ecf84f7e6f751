// `mps rails sweep --date YYYY-MM-DD` (docs/rails.md): the daily sweep on demand — the command's own checks
// here; the sweep itself (sweepRailDay, the same call) is exercised against the bank simulator in
// sweep.test.ts and pay-in.test.ts, and as a CLI process against a bank rail by `npm run faults -- bank`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

describe('mps rails sweep', { timeout: 60_000 }, () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-sweep-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('is listed in --help', async () => {
    const help = await runCli(['--help'], {});
    expect(help.stdout).toContain('rails sweep --date YYYY-MM-DD');
  });

  it('refuses a date that is not a real YYYY-MM-DD, before opening a database', async () => {
    for (const date of ['2026-02-30', '26-11-01', 'yesterday']) {
      const result = await runCli(['rails', 'sweep', '--date', date], { DATA_DIR: path.join(root, 'never') });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain('--date must be a real date YYYY-MM-DD');
    }
    expect(fs.existsSync(path.join(root, 'never'))).toBe(false);
  });

  it('says so, exit 1, when the configured rail has no bank pay-in (RAIL=sandbox)', async () => {
    const result = await runCli(['rails', 'sweep', '--date', '2026-11-26'], { DATA_DIR: path.join(root, 'data') });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.trim()).toBe('mps: the configured rail has no bank pay-in to sweep (RAIL=sandbox)');
  });
});
