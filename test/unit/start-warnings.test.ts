// What a live start refuses (money would be lost: loadConfig) and what it only warns about (startWarnings),
// each named by its variable (docs/going-live.md#what-the-start-checks).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { isLoopbackHost } from '../../src/ip.ts';
import { startWarnings } from '../../src/start-warnings.ts';

const BANECO = {
  RAIL: 'baneco', BANECO_URL: 'http://127.0.0.1:3900/ApiGateway/', BANECO_USER: 'plataforma', BANECO_PASSWORD: 'clave-del-banco',
  BANECO_AES_KEY: '40A318B299F245C2B697176723088629', BANECO_ACCOUNT: '1041070599', BANECO_CALLBACK_SECRET: 'c'.repeat(32),
};
const LIVE = { MODE: 'live', ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`, ...BANECO };
/** A live service set up as docs/going-live.md says: nothing to warn about. */
const WELL_CONFIGURED = {
  ...LIVE, DATABASE_URL: 'postgres://mps@db.internal:5432/mps', PUBLIC_BASE_URL: 'https://pay.example.com', HOST: '0.0.0.0',
  TRUST_PROXY: '10.0.0.0/8', METRICS_TOKEN: 'm'.repeat(32), BANKS_FILE: '',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv/mps');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const variablesWarned = (env: Record<string, string>) => startWarnings(loadConfig(env, '/srv/mps')).map((w) => w.variable);

describe('a live start refuses what would lose money', () => {
  it('refuses PUBLIC_BASE_URL on plain http beyond this machine, in one line naming it', () => {
    const problems = problemsOf({ ...LIVE, PUBLIC_BASE_URL: 'http://pay.example.com' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^PUBLIC_BASE_URL="http:\/\/pay\.example\.com" must be https:\/\/ with MODE=live/);
    expect(problemsOf({ ...LIVE, PUBLIC_BASE_URL: 'http://10.0.0.5:3000' })).toHaveLength(1);
  });

  it('refuses an in-memory database', () => {
    const problems = problemsOf({ ...LIVE, DATABASE_URL: 'memory://', PUBLIC_BASE_URL: 'https://pay.example.com' });
    expect(problems).toEqual([expect.stringMatching(/^DATABASE_URL=memory:\/\/ cannot run with MODE=live/)]);
  });

  it('takes https, and http on a loopback name (a trial on one machine); a sandbox takes any', () => {
    for (const url of ['https://pay.example.com', 'http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
      expect(problemsOf({ ...LIVE, PUBLIC_BASE_URL: url }), url).toEqual([]);
    }
    expect(problemsOf({ PUBLIC_BASE_URL: 'http://pay.example.com', DATABASE_URL: 'memory://' })).toEqual([]);
  });
});

describe('startWarnings', () => {
  it('says nothing for a live service set up as documented, nor for a plain sandbox', () => {
    expect(variablesWarned(WELL_CONFIGURED)).toEqual(['BANKS_FILE']); // the shipped list is not ASFI codes
    expect(variablesWarned({})).toEqual([]);
    expect(variablesWarned({ HOST: '0.0.0.0', ADMIN_TOKEN: 'a'.repeat(32) })).toEqual([]);
  });

  it('lists what a live start on the defaults leaves unconfigured', () => {
    expect(variablesWarned(LIVE)).toEqual(['BANKS_FILE', 'PUBLIC_BASE_URL', 'DATABASE_URL', 'METRICS_TOKEN']);
  });

  it('warns of ADMIN_TOKEN only where the API listens beyond this machine', () => {
    const admin = { ADMIN_TOKEN: 'a'.repeat(32) };
    expect(variablesWarned({ ...WELL_CONFIGURED, ...admin })).toContain('ADMIN_TOKEN');
    expect(variablesWarned({ ...WELL_CONFIGURED, ...admin, HOST: '127.0.0.1' })).not.toContain('ADMIN_TOKEN');
    expect(variablesWarned({ ...WELL_CONFIGURED, ...admin, ROLE: 'worker' })).not.toContain('ADMIN_TOKEN');
  });

  it('warns of TRUST_PROXY only beyond loopback', () => {
    expect(variablesWarned({ ...WELL_CONFIGURED, TRUST_PROXY: '' })).toContain('TRUST_PROXY');
    expect(variablesWarned({ ...WELL_CONFIGURED, TRUST_PROXY: '', HOST: '::1' })).not.toContain('TRUST_PROXY');
  });

  it('never prints a secret it names', () => {
    const env = { ...WELL_CONFIGURED, ADMIN_TOKEN: 'a'.repeat(32), DATABASE_URL: 'postgres://mps:s3cret@db.internal/mps' };
    const text = startWarnings(loadConfig(env, '/srv/mps')).map((w) => w.text).join('\n');
    for (const secret of ['a'.repeat(32), 's3cret', BANECO.BANECO_PASSWORD, BANECO.BANECO_AES_KEY]) expect(text).not.toContain(secret);
  });
});

describe('isLoopbackHost', () => {
  it('knows this machine in every spelling, and nothing else', () => {
    for (const host of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'pay.example.com', 'localhost.example.com', '::2', '::ffff:10.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
