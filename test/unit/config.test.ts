// loadConfig(env, cwd): the defaults of docs/api-reference.md#configuration, every wrong value refused with one line naming its
// variable, and the real entry point exiting with code 2 on a wrong value.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The ConfigError that loadConfig throws for `env`. */
function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env, '/srv/mps');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** A key list live mode needs (ENCRYPTION_KEYS). */
const LIVE_KEYS = `k1:${Buffer.alloc(32, 1).toString('base64')}`;

/** A complete RAIL=baneco: what live mode needs beside ENCRYPTION_KEYS (the sandbox rail is refused there). */
const BANECO = {
  RAIL: 'baneco', BANECO_URL: 'http://127.0.0.1:3900/ApiGateway/', BANECO_USER: 'plataforma', BANECO_PASSWORD: 'clave-del-banco',
  BANECO_AES_KEY: '40A318B299F245C2B697176723088629', BANECO_ACCOUNT: '1041070599', BANECO_CALLBACK_SECRET: 'c'.repeat(32),
};

/** What a live service needs at the least: its keys and a bank's rail. */
const LIVE = { MODE: 'live', ENCRYPTION_KEYS: LIVE_KEYS, ...BANECO };

/** True when `line` names `variable` as a word (PORT, not the PORT inside SUPPORT). */
function names(line: string, variable: string): boolean {
  return new RegExp(`(^|[^A-Z_])${variable}([^A-Z_]|$)`).test(line);
}

describe('loadConfig defaults (docs/api-reference.md#configuration)', () => {
  const config = loadConfig({}, '/srv/mps');

  it('listens on 127.0.0.1:3000', () => {
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
  });

  it('uses the embedded database in ./data of the working directory', () => {
    expect(config.database).toEqual({ kind: 'pglite', dataDir: path.resolve('/srv/mps', 'data') });
  });

  it('runs in sandbox mode with the operator API off', () => {
    expect(config.mode).toBe('sandbox');
    expect(config.adminToken).toBeNull();
  });

  it('uses http://localhost:PORT as the public base URL', () => {
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect(loadConfig({ PORT: '8080' }, '/srv/mps').publicBaseUrl).toBe('http://localhost:8080');
  });

  it('reads absolute QR expirations in America/La_Paz', () => {
    expect(config.serviceTimeZone).toBe('America/La_Paz');
  });

  it('gives onboarding intents 120 minutes and an activation fee of 10.00', () => {
    expect(config.onboardingIntentTtlMs).toBe(120 * 60_000);
    expect(config.onboardingActivationFeeCentavos).toBe(1_000);
  });

  it('gives new merchants the free price plan and pays scheduled payouts out at 18:00', () => {
    expect(config.defaultPricePlan).toEqual({ qrBasisPoints: 0, qrFixed: 0, transferFixed: 0 });
    expect(config.payoutTime).toEqual({ hour: 18, minute: 0 });
  });

  it('retries webhooks on 5s,30s,2m,10m,30m,1h,3h,6h,12h,24h with a 10 s timeout', () => {
    const s = 1_000;
    const m = 60 * s;
    const h = 60 * m;
    expect(config.webhookRetryScheduleMs).toEqual([5 * s, 30 * s, 2 * m, 10 * m, 30 * m, 1 * h, 3 * h, 6 * h, 12 * h, 24 * h]);
    expect(config.webhookTimeoutMs).toBe(10_000);
  });

  it('settles sandbox transfers after 10s and 10s', () => {
    expect(config.sandboxSettlementMs).toEqual([10_000, 10_000]);
  });

  it('limits each key to 100 requests/s with a burst of 200', () => {
    expect(config.rateLimit).toEqual({ ratePerSecond: 100, burst: 200 });
  });

  it('limits each client address without a key to 20 requests/s with a burst of 40, trusts no proxy, leaves /metrics open', () => {
    expect(config.publicRateLimit).toEqual({ ratePerSecond: 20, burst: 40 });
    expect(config.trustProxy).toEqual([]);
    expect(config.metricsToken).toBeNull();
  });

  it('lets a sandbox deliver webhooks to private addresses, and never live mode', () => {
    expect(config.webhookPrivateTargets).toBe('allow');
    expect(loadConfig(LIVE, '/srv/mps').webhookPrivateTargets).toBe('deny');
  });

  it('runs every role in one process', () => {
    expect(config.role).toBe('all');
  });

  it('treats empty variables as unset', () => {
    const blank = loadConfig({ PORT: '', MODE: ' ', DATABASE_URL: '', ROLE: '', RATE_LIMIT: '' }, '/srv/mps');
    expect(blank).toEqual(config);
  });
});


describe('ENCRYPTION_KEYS', () => {
  it('defaults, in sandbox, to the published development key alone', () => {
    const sandbox = loadConfig({}, '/srv/mps');
    expect(sandbox.encryptionKeys.map((key) => key.id)).toEqual(['sandbox']);
    expect(sandbox.encryptionKeysConfigured).toBe(false);
  });

  it('seals with the first key given, opens with all, and keeps the sandbox key only in sandbox', () => {
    const two = `${LIVE_KEYS},k0:${Buffer.alloc(32, 2).toString('base64')}`;
    expect(loadConfig({ ENCRYPTION_KEYS: two }, '/srv/mps').encryptionKeys.map((key) => key.id)).toEqual(['k1', 'k0', 'sandbox']);
    const live = loadConfig({ ...LIVE, ENCRYPTION_KEYS: two }, '/srv/mps');
    expect(live.encryptionKeys.map((key) => key.id)).toEqual(['k1', 'k0']);
    expect(live.encryptionKeys[0]!.key).toEqual(Buffer.alloc(32, 1));
    expect(live.encryptionKeysConfigured).toBe(true);
  });

  it('is required in live mode, in one line that says how to make a key', () => {
    const error = configErrorOf({ MODE: 'live', ...BANECO });
    expect(error.problems).toEqual([expect.stringMatching(/^ENCRYPTION_KEYS is required in MODE=live: .*randomBytes\(32\)/)]);
  });

  it.each([
    ['k1:short'], [`k1:${Buffer.alloc(16).toString('base64')}`], [`${LIVE_KEYS},${LIVE_KEYS}`], [`sandbox:${Buffer.alloc(32).toString('base64')}`], ['no-colon'],
  ])('refuses %s without echoing it', (value) => {
    const error = configErrorOf({ ENCRYPTION_KEYS: value });
    expect(error.problems).toEqual([expect.stringContaining('ENCRYPTION_KEYS=(value hidden) is not valid')]);
  });
});

describe('RAIL and the BANECO_* variables', () => {
  it('defaults to the sandbox rail', () => {
    expect(loadConfig({}, '/srv/mps').rail).toEqual({ kind: 'sandbox' });
  });

  it('names each missing or malformed BANECO_* variable in one line, never its value', () => {
    const error = configErrorOf({ ...BANECO, BANECO_URL: 'http://bank/no-slash', BANECO_AES_KEY: 'short-secret-key', BANECO_PASSWORD: '', BANECO_BRANCH_CODE: '123456' });
    expect(error.problems).toEqual([
      expect.stringMatching(/^BANECO_URL=.* is not valid: .*ending in \//),
      expect.stringMatching(/^BANECO_PASSWORD is required with RAIL=baneco/),
      expect.stringMatching(/^BANECO_AES_KEY=\(value hidden\) is not valid/),
      expect.stringMatching(/^BANECO_BRANCH_CODE=.* is not valid/),
    ]);
    expect(error.message).not.toContain('short-secret-key');
  });

  it('refuses MODE=live on the sandbox rail, named or by default, in one line naming RAIL', () => {
    const envs: Record<string, string>[] = [{ MODE: 'live', ENCRYPTION_KEYS: LIVE_KEYS }, { MODE: 'live', ENCRYPTION_KEYS: LIVE_KEYS, RAIL: 'sandbox' }];
    for (const env of envs) {
      const error = configErrorOf(env);
      expect(error.problems).toHaveLength(1);
      const line = error.problems[0]!;
      expect(line).toMatch(/^RAIL=sandbox .*cannot run with MODE=live; set RAIL=baneco /);
      expect(names(line, 'RAIL'), line).toBe(true);
      expect(error.message).toBe(line);
    }
    expect(configErrorOf({ MODE: 'live', ENCRYPTION_KEYS: LIVE_KEYS }).problems[0]).toContain('RAIL is unset');
    expect(configErrorOf({ MODE: 'live', ENCRYPTION_KEYS: LIVE_KEYS, RAIL: 'sandbox' }).problems[0]).not.toContain('unset');
  });

  it('lists the sandbox rail beside the other problems of a live start: one line each', () => {
    const error = configErrorOf({ MODE: 'live' });
    expect(error.problems).toEqual([
      expect.stringMatching(/^RAIL=sandbox .*cannot run with MODE=live/),
      expect.stringMatching(/^ENCRYPTION_KEYS is required in MODE=live/),
    ]);
  });

  it('takes MODE=live with RAIL=baneco and every BANECO_* variable, into the typed rail', () => {
    const config = loadConfig(LIVE, '/srv/mps');
    expect(config.mode).toBe('live');
    expect(config.rail).toEqual({
      kind: 'baneco',
      baneco: {
        url: 'http://127.0.0.1:3900/ApiGateway/', user: 'plataforma', password: 'clave-del-banco', aesKey: '40A318B299F245C2B697176723088629',
        account: '1041070599', callbackSecret: 'c'.repeat(32), branchCode: null, qrDueDays: 365, pollIntervalMs: 30_000, batchIntervalMs: 60_000,
        amlSource: 'Cobros QR de comercios', amlDestination: 'Pago a comercio', timeoutMs: 10_000,
      },
    });
  });

  it('takes RAIL=baneco in MODE=sandbox (the bank\'s certification environment with test keys), without ENCRYPTION_KEYS', () => {
    const config = loadConfig(BANECO, '/srv/mps');
    expect(config.mode).toBe('sandbox');
    expect(config.rail.kind).toBe('baneco');
  });

  it('reads the optional BANECO_* variables', () => {
    const config = loadConfig({
      ...BANECO, BANECO_BRANCH_CODE: '701', BANECO_QR_DUE_DAYS: '30', BANECO_POLL_INTERVAL: '5s', BANECO_BATCH_INTERVAL: '2m',
      BANECO_AML_SOURCE: 'Ventas', BANECO_AML_DESTINATION: 'Liquidación', BANECO_TIMEOUT: '20s',
    }, '/srv/mps');
    expect(config.rail).toMatchObject({
      kind: 'baneco',
      baneco: { branchCode: '701', qrDueDays: 30, pollIntervalMs: 5_000, batchIntervalMs: 120_000, amlSource: 'Ventas', amlDestination: 'Liquidación', timeoutMs: 20_000 },
    });
  });

  it('refuses a missing BANECO_* variable in live mode too, naming it and not RAIL', () => {
    const { BANECO_ACCOUNT: _account, ...withoutAccount } = LIVE;
    const error = configErrorOf(withoutAccount);
    expect(error.problems).toEqual([expect.stringMatching(/^BANECO_ACCOUNT is required with RAIL=baneco/)]);
  });
});

describe('ADMIN_TOKEN and METRICS_TOKEN', () => {
  it.each(['ADMIN_TOKEN', 'METRICS_TOKEN'])('%s: refuses 31 characters in one line naming it without echoing it, and takes 32', (name) => {
    const error = configErrorOf({ [name]: 'a'.repeat(31) });
    expect(error.problems).toEqual([expect.stringMatching(new RegExp(`^${name}=\\(value hidden\\) is not valid: .*at least 32 characters`))]);
    expect(error.message).not.toContain('a'.repeat(31));
    expect(loadConfig({ [name]: 'a'.repeat(32) }, '/srv/mps')).toBeDefined();
  });
});

describe('loadConfig accepts the documented forms', () => {
  it('reads each variable', () => {
    const config = loadConfig({
      PORT: '8443',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://mps:secret@db.internal:5432/payments',
      ...LIVE,
      PUBLIC_BASE_URL: 'https://pay.example.com/',
      ADMIN_TOKEN: 'operator-token-0123456789abcdef012345',
      SERVICE_TIMEZONE: 'America/Lima',
      ONBOARDING_INTENT_TTL: '2h',
      ONBOARDING_ACTIVATION_FEE: '25.5',
      FEE_QR: '2.75%+1',
      FEE_TRANSFER: '3.5',
      PAYOUT_TIME: '17:45',
      WEBHOOK_RETRY_SCHEDULE: '500ms,3s,1d',
      WEBHOOK_TIMEOUT: '3s',
      SANDBOX_SETTLEMENT: '1s,2m',
      RATE_LIMIT: '10/s,20',
      PUBLIC_RATE_LIMIT: '5/s,8',
      DATABASE_QUERY_TIMEOUT: '30s',
      TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,::1',
      METRICS_TOKEN: 'metrics-token-0123456789abcdef0123456789',
      WEBHOOK_PRIVATE_TARGETS: 'deny',
      ROLE: 'worker',
    }, '/srv/mps');
    expect(config).toMatchObject({
      port: 8443,
      host: '0.0.0.0',
      database: { kind: 'postgres', url: 'postgres://mps:secret@db.internal:5432/payments' },
      mode: 'live',
      rail: { kind: 'baneco', baneco: expect.objectContaining({ url: 'http://127.0.0.1:3900/ApiGateway/', account: '1041070599' }) },
      publicBaseUrl: 'https://pay.example.com',
      adminToken: 'operator-token-0123456789abcdef012345',
      serviceTimeZone: 'America/Lima',
      onboardingIntentTtlMs: 2 * 3_600_000,
      onboardingActivationFeeCentavos: 2_550,
      defaultPricePlan: { qrBasisPoints: 275, qrFixed: 100, transferFixed: 350 },
      payoutTime: { hour: 17, minute: 45 },
      webhookRetryScheduleMs: [500, 3_000, 86_400_000],
      webhookTimeoutMs: 3_000,
      sandboxSettlementMs: [1_000, 120_000],
      rateLimit: { ratePerSecond: 10, burst: 20 },
      publicRateLimit: { ratePerSecond: 5, burst: 8 },
      databaseQueryTimeoutMs: 30_000,
      trustProxy: ['10.0.0.1', '10.1.0.0/16', '::1'],
      metricsToken: 'metrics-token-0123456789abcdef0123456789',
      webhookPrivateTargets: 'deny',
      role: 'worker',
    });
  });

  it('reads memory://, postgresql:// and DATA_DIR relative to the working directory', () => {
    expect(loadConfig({ DATABASE_URL: 'memory://' }, '/srv/mps').database).toEqual({ kind: 'pglite-memory' });
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/d' }, '/srv/mps').database).toEqual({ kind: 'postgres', url: 'postgresql://u@h/d' });
    expect(loadConfig({ DATA_DIR: 'var/db' }, '/srv/mps').database).toEqual({ kind: 'pglite', dataDir: '/srv/mps/var/db' });
    expect(loadConfig({ DATA_DIR: '/var/lib/mps' }, '/srv/mps').database).toEqual({ kind: 'pglite', dataDir: '/var/lib/mps' });
  });

  it('reads off for RATE_LIMIT and SANDBOX_SETTLEMENT, and a fee of 0', () => {
    const config = loadConfig({ RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off', ONBOARDING_ACTIVATION_FEE: '0' }, '/srv/mps');
    expect(config.rateLimit).toBeNull();
    expect(config.sandboxSettlementMs).toBeNull();
    expect(config.onboardingActivationFeeCentavos).toBe(0);
  });

  it('reads DATABASE_REPLICA_URL beside a PostgreSQL DATABASE_URL, and refuses it beside the embedded database without echoing it', () => {
    const primary = 'postgres://mps@db-primary:5432/payments';
    expect(loadConfig({ DATABASE_URL: primary }, '/srv/mps').databaseReplica).toBeNull();
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URL: 'postgresql://mps@db-replica/payments' }, '/srv/mps').databaseReplica)
      .toEqual({ kind: 'postgres', url: 'postgresql://mps@db-replica/payments' });
    for (const env of [
      { DATABASE_REPLICA_URL: 'postgres://mps:s3cret@db-replica/payments' }, // embedded primary: PGlite has no replicas
      { DATABASE_URL: 'memory://', DATABASE_REPLICA_URL: 'postgres://mps:s3cret@db-replica/payments' },
      { DATABASE_URL: primary, DATABASE_REPLICA_URL: 'mysql://mps:s3cret@db-replica/payments' },
      { DATABASE_URL: primary, DATABASE_REPLICA_URL: 'memory://' },
    ]) {
      let error: unknown;
      try {
        loadConfig(env, '/srv/mps');
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([expect.stringMatching(/^DATABASE_REPLICA_URL=\(value hidden\) is not valid: /)]);
    }
    // Beside the embedded database the message names what is really wrong: DATABASE_URL.
    expect(() => loadConfig({ DATABASE_REPLICA_URL: 'postgres://mps@db-replica/payments' }, '/srv/mps'))
      .toThrow(/needs DATABASE_URL to name a PostgreSQL server/);
  });

  it('reads FEE_QR and FEE_TRANSFER into the plan of new merchants, in basis points and centavos', () => {
    expect(loadConfig({ FEE_QR: '1.5%+0.30', FEE_TRANSFER: '0.5' }, '/srv/mps').defaultPricePlan).toEqual({ qrBasisPoints: 150, qrFixed: 30, transferFixed: 50 });
    expect(loadConfig({ FEE_QR: '10%+100', FEE_TRANSFER: '100.00' }, '/srv/mps').defaultPricePlan).toEqual({ qrBasisPoints: 1000, qrFixed: 10_000, transferFixed: 10_000 });
    expect(loadConfig({ FEE_QR: ' 0.01%+0 ' }, '/srv/mps').defaultPricePlan).toEqual({ qrBasisPoints: 1, qrFixed: 0, transferFixed: 0 });
  });

  it('reads PAYOUT_TIME as hour and minute, with or without a leading zero', () => {
    expect(loadConfig({ PAYOUT_TIME: '09:30' }, '/srv/mps').payoutTime).toEqual({ hour: 9, minute: 30 });
    expect(loadConfig({ PAYOUT_TIME: '7:05' }, '/srv/mps').payoutTime).toEqual({ hour: 7, minute: 5 });
    expect(loadConfig({ PAYOUT_TIME: '00:00' }, '/srv/mps').payoutTime).toEqual({ hour: 0, minute: 0 });
    expect(loadConfig({ PAYOUT_TIME: '23:59' }, '/srv/mps').payoutTime).toEqual({ hour: 23, minute: 59 });
  });

  it('reads the roles api, worker and all', () => {
    for (const role of ['api', 'worker', 'all'] as const) expect(loadConfig({ ROLE: role }, '/srv/mps').role).toBe(role);
  });
});

describe('loadConfig refuses wrong values with one line naming the variable', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['MODE', 'prod'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'postgres://'],
    ['PUBLIC_BASE_URL', 'ftp://x'],
    ['PUBLIC_BASE_URL', 'pay.example.com'],
    ['ADMIN_TOKEN', 'short'],
    ['SERVICE_TIMEZONE', 'Mars/Base'],
    ['ONBOARDING_INTENT_TTL', '0'],
    ['ONBOARDING_INTENT_TTL', '0m'],
    ['ONBOARDING_ACTIVATION_FEE', '1.234'],
    ['ONBOARDING_ACTIVATION_FEE', '-1'],
    ['FEE_QR', '1.5'],
    ['FEE_QR', '1.5%'],
    ['FEE_QR', '0.30+1.5%'],
    ['FEE_QR', '1.555%+0.30'],
    ['FEE_QR', '10.01%+0'],
    ['FEE_QR', '1.5%+100.01'],
    ['FEE_QR', '-1%+0'],
    ['FEE_QR', '1,5%+0,30'],
    ['FEE_TRANSFER', '0.505'],
    ['FEE_TRANSFER', '100.01'],
    ['FEE_TRANSFER', '-1'],
    ['FEE_TRANSFER', '1.5%'],
    ['PAYOUT_TIME', '24:00'],
    ['PAYOUT_TIME', '18:60'],
    ['PAYOUT_TIME', '18'],
    ['PAYOUT_TIME', '6pm'],
    ['PAYOUT_TIME', '18:00:00'],
    ['WEBHOOK_RETRY_SCHEDULE', '5x'],
    ['WEBHOOK_RETRY_SCHEDULE', '5s,,30s'],
    ['WEBHOOK_TIMEOUT', '2m'],
    ['SANDBOX_SETTLEMENT', '10s'],
    ['SANDBOX_SETTLEMENT', '10s,10s,10s'],
    ['RATE_LIMIT', '100'],
    ['RATE_LIMIT', '0/s,10'],
    ['PUBLIC_RATE_LIMIT', '20'],
    ['DATABASE_QUERY_TIMEOUT', '0s'],
    ['DATABASE_QUERY_TIMEOUT', '1h'],
    ['TRUST_PROXY', 'proxy.internal'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['METRICS_TOKEN', 'short'],
    ['WEBHOOK_PRIVATE_TARGETS', 'maybe'],
    ['ROLE', 'web'],
  ])('%s=%s', (variable, value) => {
    const error = configErrorOf({ [variable]: value });
    expect(error.problems).toHaveLength(1);
    const line = error.problems[0]!;
    expect(line).not.toContain('\n');
    expect(names(line, variable), `"${line}" names ${variable}`).toBe(true);
    expect(error.message).toBe(line);
  });

  it('refuses WEBHOOK_PRIVATE_TARGETS=allow in live mode: the guard cannot be turned off there', () => {
    const error = configErrorOf({ ...LIVE, WEBHOOK_PRIVATE_TARGETS: 'allow' });
    expect(error.problems).toEqual([expect.stringContaining('WEBHOOK_PRIVATE_TARGETS')]);
  });

  it('lists several wrong values, one line each', () => {
    const error = configErrorOf({ PORT: 'abc', MODE: 'prod', ROLE: 'web', WEBHOOK_TIMEOUT: '2m', HOST: 'localhost' });
    expect(error.problems).toHaveLength(4);
    expect(error.message.split('\n')).toEqual(error.problems);
    for (const variable of ['PORT', 'MODE', 'WEBHOOK_TIMEOUT', 'ROLE']) {
      expect(error.problems.filter((line) => names(line, variable)), `one line names ${variable}`).toHaveLength(1);
    }
  });

  it('lists several wrong values among ADMIN_TOKEN, SANDBOX_SETTLEMENT and RATE_LIMIT, one line each', () => {
    const error = configErrorOf({ ADMIN_TOKEN: 'short', SANDBOX_SETTLEMENT: '10s', RATE_LIMIT: '100', MODE: 'prod' });
    expect(error.problems).toHaveLength(4);
    for (const variable of ['ADMIN_TOKEN', 'SANDBOX_SETTLEMENT', 'RATE_LIMIT', 'MODE']) {
      expect(error.problems.filter((line) => names(line, variable)), `one line names ${variable}`).toHaveLength(1);
    }
  });
});

describe('npx tsx src/main.ts with a wrong value', () => {
  it('exits with code 2 and prints one line naming MODE', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-config-test-'));
    try {
      // node_modules/.bin/tsx is what `npx tsx` runs; calling it directly keeps npm's own warnings out of stderr.
      const tsx = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
      const child = spawn(tsx, ['src/main.ts'], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), MODE: 'bogus', DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (exitCode) => resolve(exitCode));
      });
      expect(code, `stderr: ${stderr}`).toBe(2);
      const lines = stderr.split('\n').filter((line) => line.trim() !== '');
      expect(lines, stderr).toHaveLength(1);
      expect(names(lines[0]!, 'MODE'), lines[0]).toBe(true);
      expect(lines[0]).toContain('bogus');
      expect(stdout).toBe('');
      // It stopped before opening the database.
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
