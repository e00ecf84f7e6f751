// The one place that reads the environment: every variable of docs/api-reference.md#configuration, validated into a typed Config.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { EncryptionKey } from './kernel/secret-box.ts';
import { parseAmount, type Centavos } from './money.ts';
// The fee rules' own parsers (pricing.ts is pure and imports only money.ts), so FEE_QR reads exactly as a plan is kept.
import { parseFixedFee, parseQrPrice, type PricePlan } from './merchants/pricing.ts';
import { isLoopbackHost } from './ip.ts';
import { RAIL_NAMES } from './rails/names.ts';
import { isKnownTimeZone, parseDuration } from './time.ts';

export type Mode = 'sandbox' | 'live';
export type Role = 'api' | 'worker' | 'all';

export type DatabaseTarget =
  | { kind: 'postgres'; url: string }
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'pglite-memory' };

export interface RateLimitConfig {
  /** Tokens added per second. */
  ratePerSecond: number;
  /** Bucket capacity. */
  burst: number;
}

/** Banco Económico's API Market (RAIL=baneco; docs/rails.md): where it is and what it issued to the platform. */
export interface BanecoConfig {
  /** Base URL of the bank's gateway, ending in `/`. */
  url: string;
  user: string;
  /** Kept in clear only in memory; sent encrypted. */
  password: string;
  /** The 32-character key of the bank's AES fields. */
  aesKey: string;
  /** The platform's account at the bank: QR payments are credited to it, pay-outs debited from it. */
  account: string;
  /** The secret path segment of the bank's callbacks. */
  callbackSecret: string;
  branchCode: string | null;
  qrDueDays: number;
  pollIntervalMs: number;
  batchIntervalMs: number;
  amlSource: string;
  amlDestination: string;
  timeoutMs: number;
}

/** The rail: how money enters and leaves (RAIL). */
export type RailConfig = { kind: 'sandbox' } | { kind: 'baneco'; baneco: BanecoConfig };

/** A time of day on the wall clock, 00:00 to 23:59. */
export interface TimeOfDay {
  hour: number;
  minute: number;
}

/** A bank a transfer may be sent to (GET /api/v2/banks). */
export interface BankConfig {
  bankCode: number;
  name: string;
}

export interface Config {
  port: number;
  host: string;
  database: DatabaseTarget;
  /**
   * A PostgreSQL streaming replica of `database` (DATABASE_REPLICA_URL) for the reads that may lag: lists,
   * movements, statements and the journal export (docs/architecture.md#read-replica); null: every read goes to
   * `database`.
   */
  databaseReplica: { kind: 'postgres'; url: string } | null;
  /** PostgreSQL: longest a statement of a request or job may wait for its answer before it fails as unavailable (503). */
  databaseQueryTimeoutMs: number;
  mode: Mode;
  /** The rail (RAIL): `sandbox`, the pretend bank (MODE=sandbox only), or a real bank's API. */
  rail: RailConfig;
  publicBaseUrl: string;
  /** Bearer token of the operator API; null disables `/admin/v1` (404). */
  adminToken: string | null;
  serviceTimeZone: string;
  onboardingIntentTtlMs: number;
  /** How old a payment may be and still be refunded (REFUND_WINDOW). */
  refundWindowMs: number;
  onboardingActivationFeeCentavos: Centavos;
  /** The price plan a new merchant gets (FEE_QR and FEE_TRANSFER; docs/fees.md): the free plan unless set. */
  defaultPricePlan: PricePlan;
  /** When scheduled payouts run each day (PAYOUT_TIME): a wall-clock time in `serviceTimeZone`. */
  payoutTime: TimeOfDay;
  webhookRetryScheduleMs: number[];
  webhookTimeoutMs: number;
  /** PENDING→IN_TRANSIT and IN_TRANSIT→COMPLETED delays; null: only the advance helper moves transfers. */
  sandboxSettlementMs: [number, number] | null;
  /** null: rate limiting off (benchmarks). */
  rateLimit: RateLimitConfig | null;
  /** Per client address on routes without a key (hosted pages, unknown keys); null: off. */
  publicRateLimit: RateLimitConfig | null;
  /** Proxy addresses or CIDR ranges whose X-Forwarded-For is believed; empty: the socket's address is the client. */
  trustProxy: string[];
  /** Longest a client may take to send a request's headers (HTTP_HEADERS_TIMEOUT), and the whole request (HTTP_REQUEST_TIMEOUT). */
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  /** Open connections one client network may hold (TRUST_PROXY's addresses exempt); null: no limit. */
  connectionsPerAddress: number | null;
  /** Bearer token /metrics asks for; null: /metrics is open (bind HOST to a private interface then). */
  metricsToken: string | null;
  role: Role;
  /** Whether a sandbox may deliver webhooks to private addresses (live mode never does). */
  webhookPrivateTargets: 'allow' | 'deny';
  /** Banks of BANKS_FILE; null: the shipped default list of Bolivian banks (src/transfers/banks.ts). */
  banks: BankConfig[] | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Keys that seal stored secrets (kernel/secret-box.ts): the first seals, every one opens. In sandbox the
   * published development key is always among them, so a sandbox database stays readable when
   * ENCRYPTION_KEYS is set later.
   */
  encryptionKeys: EncryptionKey[];
  /** False when only the sandbox's published development key is in use (the banner says so). */
  encryptionKeysConfigured: boolean;
}

/**
 * The sandbox's key when ENCRYPTION_KEYS is unset: published here, so it protects nothing, and only a
 * sandbox may use it (MODE=live refuses to start without ENCRYPTION_KEYS).
 */
export const SANDBOX_ENCRYPTION_KEY: EncryptionKey = {
  id: 'sandbox',
  key: createHash('sha256').update('merchant-payments-service sandbox encryption key (public, protects nothing)').digest(),
};

/** A wrong value: `message` is one line naming the variable and what it accepts. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Variables that may hold a secret (a token, a password in a URL): a wrong value is named, never echoed. */
const SECRET_VARIABLES = new Set(['ADMIN_TOKEN', 'DATABASE_URL', 'DATABASE_REPLICA_URL', 'METRICS_TOKEN', 'ENCRYPTION_KEYS',
  'BANECO_USER', 'BANECO_PASSWORD', 'BANECO_AES_KEY', 'BANECO_ACCOUNT', 'BANECO_CALLBACK_SECRET']);

/** Reads and validates the environment; throws ConfigError listing every wrong variable, one line each. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const read = <T>(name: string, fallback: string, parse: (text: string) => T | null, allowed: string): T => {
    const raw = env[name];
    const text = raw === undefined || raw.trim() === '' ? fallback : raw.trim();
    const value = parse(text);
    if (value === null) {
      const shown = SECRET_VARIABLES.has(name) ? '(value hidden)' : JSON.stringify(raw);
      problems.push(`${name}=${shown} is not valid: ${allowed}`);
      return undefined as T;
    }
    return value;
  };

  const port = read('PORT', '3000', (t) => wholeNumber(t, 0, 65535), 'a whole number from 0 to 65535');
  const host = read('HOST', '127.0.0.1', (t) => t, 'a host name or address');
  const database = read('DATABASE_URL', '', (t) => databaseTarget(t, env.DATA_DIR, cwd),
    'postgres://user@host:port/database, postgresql://…, or memory:// (unset: embedded database in DATA_DIR)');
  // A replica of the embedded database cannot exist: PGlite has no replication.
  const replicaNeedsPostgres = database !== undefined && database.kind !== 'postgres';
  const databaseReplica = read('DATABASE_REPLICA_URL', '', (t) => {
    if (t === '') return { replica: null };
    const target = databaseTarget(t, undefined, cwd);
    return target?.kind === 'postgres' && !replicaNeedsPostgres ? { replica: target } : null;
  }, replicaNeedsPostgres
    ? 'a read replica needs DATABASE_URL to name a PostgreSQL server (the embedded database has no replicas); unset DATABASE_REPLICA_URL or set DATABASE_URL'
    : 'unset, or postgres://user@host:port/database of a streaming replica of DATABASE_URL')?.replica ?? null;
  const databaseQueryTimeoutMs = read('DATABASE_QUERY_TIMEOUT', '15s', (t) => {
    const ms = positiveDuration(t);
    return ms !== null && ms <= 600_000 ? ms : null;
  }, 'a duration from 1ms to 10m, such as 15s');
  const mode = read('MODE', 'sandbox', (t) => oneOf(t, ['sandbox', 'live'] as const), 'sandbox or live');
  const railKind = read('RAIL', 'sandbox', (t) => oneOf(t, RAIL_NAMES), RAIL_NAMES.join(' or '));
  const rail: RailConfig = railKind === 'baneco' ? { kind: 'baneco', baneco: readBaneco(read, problems, env) } : { kind: 'sandbox' };
  // The sandbox rail is a pretend bank: a live service on it would hand out QRs no payer can pay and keep
  // transfers PENDING forever, all while it looks healthy. Refused, by default too (RAIL unset), so a live
  // service always has a bank's rail (src/composition.ts relies on it).
  if (mode === 'live' && railKind === 'sandbox') {
    const unset = (env.RAIL ?? '').trim() === '';
    problems.push(`RAIL=sandbox${unset ? ' (the default: RAIL is unset)' : ''} cannot run with MODE=live; set RAIL=baneco and its BANECO_* `
      + 'variables: the sandbox rail is a pretend bank that moves no money (docs/going-live.md)');
  }
  const publicBaseUrl = read('PUBLIC_BASE_URL', `http://localhost:${port ?? 3000}`, baseUrl,
    'an absolute http(s) URL without query or fragment, e.g. https://pay.example.com');
  if (mode === 'live') problems.push(...liveRefusals(database, publicBaseUrl));
  const adminToken = read('ADMIN_TOKEN', '', bearerToken, TOKEN_RULE)?.token ?? null;
  const serviceTimeZone = read('SERVICE_TIMEZONE', 'America/La_Paz', (t) => (isKnownTimeZone(t) ? t : null),
    'an IANA time zone such as America/La_Paz');
  const onboardingIntentTtlMs = read('ONBOARDING_INTENT_TTL', '120m', positiveDuration,
    'a duration such as 30m, 2h (units ms, s, m, h, d), greater than zero');
  const refundWindowMs = read('REFUND_WINDOW', '180d', positiveDuration,
    'a duration such as 180d or 12h (units ms, s, m, h, d), greater than zero');
  const onboardingActivationFeeCentavos = read('ONBOARDING_ACTIVATION_FEE', '10.00', (t) => {
    const parsed = parseAmount(t, { min: 0, max: 10_000_000 });
    return parsed.ok ? parsed.centavos : null;
  }, 'an amount in BOB with at most two decimals, from 0 (no fee) to 100000.00');
  const qrPrice = read('FEE_QR', '0%+0.00', parseQrPrice,
    'PERCENT%+FIXED such as 1.5%+0.30: a percentage from 0 to 10.00 and an amount in BOB from 0 to 100.00, each with at most two decimals');
  const transferFixed = read('FEE_TRANSFER', '0.00', parseFixedFee, 'an amount in BOB with at most two decimals, from 0 (no fee) to 100.00');
  const defaultPricePlan: PricePlan = { ...qrPrice, transferFixed };
  const payoutTime = read('PAYOUT_TIME', '18:00', timeOfDay, 'a time of day HH:MM on a 24-hour clock, in SERVICE_TIMEZONE, such as 18:00');
  const webhookRetryScheduleMs = read('WEBHOOK_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,3h,6h,12h,24h',
    (t) => durationList(t, 1, 30), 'a comma-separated list of 1 to 30 durations such as 5s,30s,2m');
  const webhookTimeoutMs = read('WEBHOOK_TIMEOUT', '10s', (t) => {
    const ms = positiveDuration(t);
    return ms !== null && ms <= 60_000 ? ms : null;
  }, 'a duration from 1ms to 60s, such as 10s');
  const sandboxSettlementMs = read('SANDBOX_SETTLEMENT', '10s,10s', (t) => {
    if (t === 'off') return { delays: null };
    const list = durationList(t, 2, 2);
    return list ? { delays: list as [number, number] } : null;
  }, 'two durations such as 10s,10s, or off')?.delays ?? null;
  const webhookPrivateTargets = read('WEBHOOK_PRIVATE_TARGETS', mode === 'live' ? 'deny' : 'allow', (t) => {
    const value = oneOf(t, ['allow', 'deny'] as const);
    return value === 'allow' && mode === 'live' ? null : value; // live mode always guards its deliveries
  }, 'allow or deny (live mode: deny only; the guard cannot be turned off there)');
  const rateLimit = read('RATE_LIMIT', '100/s,200', parseRateLimit,
    'RATE/s,BURST with whole numbers (e.g. 100/s,200), or off')?.limit ?? null;
  const publicRateLimit = read('PUBLIC_RATE_LIMIT', '20/s,40', parseRateLimit,
    'RATE/s,BURST with whole numbers (e.g. 20/s,40), or off')?.limit ?? null;
  const trustProxy = read('TRUST_PROXY', '', (t) => (t === '' ? [] : addressList(t)),
    'a comma-separated list of IP addresses or CIDR ranges, e.g. 10.0.0.1,10.1.0.0/16')!;
  const httpRequestTimeoutMs = read('HTTP_REQUEST_TIMEOUT', '30s', (t) => {
    const ms = positiveDuration(t);
    return ms !== null && ms >= 1_000 && ms <= 600_000 ? ms : null;
  }, 'a duration from 1s to 10m, such as 30s');
  const httpHeadersTimeoutMs = read('HTTP_HEADERS_TIMEOUT', '15s', (t) => {
    const ms = positiveDuration(t);
    return ms !== null && ms >= 1_000 && ms <= (httpRequestTimeoutMs ?? 600_000) ? ms : null;
  }, 'a duration from 1s up to HTTP_REQUEST_TIMEOUT, such as 15s');
  const connectionsPerAddress = read('CONNECTIONS_PER_ADDRESS', '256', (t) => (t === 'off' ? { limit: null } : wholeNumber(t, 1, 1_000_000) === null ? null : { limit: Number(t) }),
    'a whole number from 1 to 1000000, or off')?.limit ?? null;
  const metricsToken = read('METRICS_TOKEN', '', bearerToken, TOKEN_RULE)?.token ?? null;
  const role = read('ROLE', 'all', (t) => oneOf(t, ['api', 'worker', 'all'] as const), 'api, worker or all');
  const banks = read('BANKS_FILE', '', (t) => (t === '' ? { banks: null } : banksFile(path.resolve(cwd, t))),
    'a readable JSON file holding an array of 1 to 500 { "bank_code": integer 1–999999999, "name": 1–100 characters }, codes unique')?.banks ?? null;
  const logLevel = read('LOG_LEVEL', 'info',
    (t) => oneOf(t, ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    'fatal, error, warn, info, debug, trace or silent');

  const configuredKeys = read('ENCRYPTION_KEYS', '', encryptionKeyList,
    'a comma-separated list of ID:KEY, each ID 1–32 letters, digits, _ or -, each KEY the base64 of 32 random bytes '
    + '(make one with: node -e "console.log(\'k1:\' + crypto.randomBytes(32).toString(\'base64\'))"); the first seals new secrets')?.keys;
  if (configuredKeys?.length === 0 && mode === 'live') {
    problems.push('ENCRYPTION_KEYS is required in MODE=live: stored webhook secrets and onboarding links are sealed with it '
      + '(make one with: node -e "console.log(\'k1:\' + crypto.randomBytes(32).toString(\'base64\'))")');
  }
  const encryptionKeys = mode === 'sandbox' ? [...(configuredKeys ?? []), SANDBOX_ENCRYPTION_KEY] : configuredKeys ?? [];
  const encryptionKeysConfigured = (configuredKeys?.length ?? 0) > 0;

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    encryptionKeys, encryptionKeysConfigured, rail,
    port, host, database, databaseReplica, databaseQueryTimeoutMs, mode, publicBaseUrl, adminToken, serviceTimeZone, onboardingIntentTtlMs,
    refundWindowMs, onboardingActivationFeeCentavos, defaultPricePlan, payoutTime, webhookRetryScheduleMs, webhookTimeoutMs, sandboxSettlementMs, webhookPrivateTargets,
    rateLimit, publicRateLimit, trustProxy, httpHeadersTimeoutMs, httpRequestTimeoutMs, connectionsPerAddress, metricsToken, role, banks, logLevel,
  };
}

/**
 * What a live start refuses because money would be lost (docs/going-live.md#what-the-start-checks); what
 * only needs attention is a warning of src/start-warnings.ts.
 * - An in-memory database forgets every payment and balance when the process stops.
 * - Pay links and the bank's callbacks are built on PUBLIC_BASE_URL: over plain http anyone on the path
 *   can swap the QR a payer scans for their own, and read the callbacks. A loopback address reaches no
 *   payer and no path, so a trial on one machine may keep http (it is warned about).
 */
function liveRefusals(database: DatabaseTarget | undefined, publicBaseUrl: string | undefined): string[] {
  const refusals: string[] = [];
  if (database?.kind === 'pglite-memory') {
    refusals.push('DATABASE_URL=memory:// cannot run with MODE=live: every payment and balance is lost when the process stops; '
      + 'use PostgreSQL (docs/going-live.md)');
  }
  if (publicBaseUrl !== undefined) {
    const url = new URL(publicBaseUrl);
    if (url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
      refusals.push(`PUBLIC_BASE_URL=${JSON.stringify(publicBaseUrl)} must be https:// with MODE=live: payers open pay links and the bank `
        + 'calls back on it, and over plain http anyone on the way can swap the QR a payer scans (docs/going-live.md#3-https-in-front)');
    }
  }
  return refusals;
}

type Read = <T>(name: string, fallback: string, parse: (text: string) => T | null, allowed: string) => T;

/** The BANECO_* variables of RAIL=baneco: each required one missing is a problem naming it, never its value. */
function readBaneco(read: Read, problems: string[], env: Env): BanecoConfig {
  const required = (name: string, parse: (text: string) => string | null, allowed: string): string => {
    if ((env[name] ?? '').trim() === '') {
      problems.push(`${name} is required with RAIL=baneco: ${allowed}`);
      return '';
    }
    return read(name, '', parse, allowed);
  };
  const duration = (name: string, fallback: string, maxMs: number, allowed: string) => read(name, fallback, (t) => {
    const ms = positiveDuration(t);
    return ms !== null && ms <= maxMs ? ms : null;
  }, allowed);
  return {
    url: required('BANECO_URL', (t) => {
      const base = baseUrl(t);
      return base !== null && t.endsWith('/') ? `${base}/` : null;
    }, 'the http(s) base URL of the bank\'s gateway, ending in / (e.g. https://apimktdesa.baneco.com.bo/ApiGateway/)'),
    user: required('BANECO_USER', (t) => (t.length <= 200 ? t : null), 'the user name the bank issued'),
    password: required('BANECO_PASSWORD', (t) => (t.length <= 200 ? t : null), 'the password the bank issued'),
    aesKey: required('BANECO_AES_KEY', (t) => (/^[\x21-\x7e]{32}$/.test(t) ? t : null), 'the 32-character key the bank issued for its AES fields'),
    account: required('BANECO_ACCOUNT', (t) => (/^[0-9][0-9-]{0,33}$/.test(t) ? t : null), 'the platform\'s account number at the bank (digits and hyphens)'),
    callbackSecret: required('BANECO_CALLBACK_SECRET', (t) => (/^[A-Za-z0-9_-]{32,128}$/.test(t) ? t : null),
      'at least 32 URL-safe characters (A-Z a-z 0-9 _ -), the secret path segment of the bank\'s callbacks'),
    branchCode: read('BANECO_BRANCH_CODE', '', (t) => (t === '' ? { code: null } : t.length <= 5 ? { code: t } : null), 'unset, or at most 5 characters')?.code ?? null,
    qrDueDays: read('BANECO_QR_DUE_DAYS', '365', (t) => wholeNumber(t, 1, 3650), 'a whole number of days from 1 to 3650'),
    pollIntervalMs: duration('BANECO_POLL_INTERVAL', '30s', 3_600_000, 'a duration from 1ms to 1h, such as 30s'),
    batchIntervalMs: duration('BANECO_BATCH_INTERVAL', '60s', 86_400_000, 'a duration from 1ms to 1d, such as 60s'),
    amlSource: read('BANECO_AML_SOURCE', 'Cobros QR de comercios', (t) => (t.length <= 200 ? t : null), 'at most 200 characters'),
    amlDestination: read('BANECO_AML_DESTINATION', 'Pago a comercio', (t) => (t.length <= 200 ? t : null), 'at most 200 characters'),
    timeoutMs: duration('BANECO_TIMEOUT', '10s', 120_000, 'a duration from 1ms to 2m, such as 10s'),
  };
}

/**
 * Shortest operator or metrics token: 32 characters of a random base64 string carry about 190 bits, beyond
 * any guessing even without the lockout of src/http/token-lockout.ts (which the audit found missing when
 * 16 characters were enough).
 */
export const MIN_TOKEN_LENGTH = 32;
const TOKEN_RULE = `unset, or a secret of at least ${MIN_TOKEN_LENGTH} characters (make one with: node -e "console.log(crypto.randomBytes(32).toString('base64url'))")`;

function bearerToken(text: string): { token: string | null } | null {
  if (text === '') return { token: null };
  return text.length >= MIN_TOKEN_LENGTH ? { token: text } : null;
}

/** `k2:BASE64,k1:BASE64`: unique ids, each key 32 bytes; '' → no keys. */
function encryptionKeyList(text: string): { keys: EncryptionKey[] } | null {
  if (text === '') return { keys: [] };
  const keys: EncryptionKey[] = [];
  for (const item of text.split(',')) {
    const match = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/]{43}=)$/.exec(item.trim());
    if (!match || match[1] === SANDBOX_ENCRYPTION_KEY.id || keys.some((key) => key.id === match[1])) return null;
    keys.push({ id: match[1]!, key: Buffer.from(match[2]!, 'base64') });
  }
  return { keys };
}

function wholeNumber(text: string, min: number, max: number): number | null {
  if (!/^\d+$/.test(text)) return null;
  const value = Number(text);
  return value >= min && value <= max ? value : null;
}

/** `18:00`, `9:30`: hours 0–23, minutes 0–59. */
function timeOfDay(text: string): TimeOfDay | null {
  const match = /^([01]?[0-9]|2[0-3]):([0-5][0-9])$/.exec(text);
  return match ? { hour: Number(match[1]), minute: Number(match[2]) } : null;
}

function oneOf<const T extends string>(text: string, values: readonly T[]): T | null {
  return (values as readonly string[]).includes(text) ? (text as T) : null;
}

function positiveDuration(text: string): number | null {
  const ms = parseDuration(text);
  return ms !== null && ms > 0 ? ms : null;
}

function durationList(text: string, minCount: number, maxCount: number): number[] | null {
  const items = text.split(',').map((item) => positiveDuration(item));
  if (items.length < minCount || items.length > maxCount || items.some((ms) => ms === null)) return null;
  return items as number[];
}

function parseRateLimit(text: string): { limit: RateLimitConfig | null } | null {
  if (text === 'off') return { limit: null };
  const match = /^(\d{1,6})\/s,(\d{1,6})$/.exec(text);
  if (!match) return null;
  const ratePerSecond = Number(match[1]);
  const burst = Number(match[2]);
  if (ratePerSecond < 1 || burst < 1) return null;
  return { limit: { ratePerSecond, burst } };
}

/** `10.0.0.1,10.1.0.0/16,::1`: each an IP address, optionally with a prefix length that fits its family. */
function addressList(text: string): string[] | null {
  const items = text.split(',').map((item) => item.trim());
  for (const item of items) {
    const [address, prefix, ...rest] = item.split('/');
    const family = net.isIP(address ?? '');
    if (family === 0 || rest.length > 0) return null;
    if (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128))) return null;
  }
  return items;
}

/** Reads BANKS_FILE: `[{ "bank_code": 1001, "name": "Banco Nacional de Bolivia" }, …]`; null when unreadable or invalid. */
function banksFile(file: string): { banks: BankConfig[] } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length < 1 || parsed.length > 500) return null;
  const banks: BankConfig[] = [];
  const codes = new Set<number>();
  for (const entry of parsed) {
    if (typeof entry !== 'object' || entry === null || Object.keys(entry).some((key) => key !== 'bank_code' && key !== 'name')) return null;
    const { bank_code: bankCode, name } = entry as { bank_code?: unknown; name?: unknown };
    if (typeof bankCode !== 'number' || !Number.isInteger(bankCode) || bankCode < 1 || bankCode > 999_999_999) return null;
    if (typeof name !== 'string' || name.trim() === '' || name.length > 100) return null;
    if (codes.has(bankCode)) return null;
    codes.add(bankCode);
    banks.push({ bankCode, name });
  }
  return { banks };
}

function baseUrl(text: string): string | null {
  try {
    const url = new URL(text);
    if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) return null;
    return url.toString().replace(/\/+$/, '');
  } catch {
    return null;
  }
}

function databaseTarget(text: string, dataDir: string | undefined, cwd: string): DatabaseTarget | null {
  if (text === '') return { kind: 'pglite', dataDir: path.resolve(cwd, dataDir?.trim() || './data') };
  if (text === 'memory://') return { kind: 'pglite-memory' };
  if (/^postgres(ql)?:\/\/./.test(text)) {
    try {
      new URL(text);
      return { kind: 'postgres', url: text };
    } catch {
      return null;
    }
  }
  return null;
}

/** The database URL with any password replaced, for logs and messages. */
export function describeDatabase(target: DatabaseTarget): string {
  switch (target.kind) {
    case 'postgres': {
      const url = new URL(target.url);
      if (url.password) url.password = '***';
      return url.toString();
    }
    case 'pglite':
      return `embedded PGlite in ${target.dataDir}`;
    case 'pglite-memory':
      return 'in-memory PGlite (nothing is kept)';
  }
}
