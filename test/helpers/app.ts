// Starts the real app (buildApp, as main.ts does) on a real port over a test database, and talks to it
// over HTTP with fetch. Fixtures are made through the operator API, never by inserting rows.
import { afterAll, beforeAll } from 'vitest';
import { appendFileSync } from 'node:fs';
import { contractCheckerFor, type ContractChecker } from './contract-check.ts';
import { prismCanRelay, prismProblems, prismViolations, startPrismProxy, type PrismProxy } from './prism-proxy.ts';
import type { FastifyPluginAsync } from 'fastify';
import { loadConfig, type BanecoConfig, type Config } from '../../src/config.ts';
import type { AppContext } from '../../src/context.ts';
import type { Database } from '../../src/db/database.ts';
import { buildApp, type App } from '../../src/http/app.ts';
import { createLogger } from '../../src/kernel/logging.ts';
import type { Clock } from '../../src/time.ts';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './databases.ts';
import { trackOpen } from './open-resources.ts';
import { createAppContext } from '../../src/composition.ts';
import type { PaymentPurposeHandler } from '../../src/qr/purposes.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123';
/** A key that seals stored secrets in tests (ENCRYPTION_KEYS; live mode refuses to start without one). */
export const TEST_ENCRYPTION_KEYS = `test1:${Buffer.alloc(32, 7).toString('base64')}`;

/** A clock the test moves by hand, starting from a fixed instant. */
export class TestClock implements Clock {
  private current: number;
  constructor(start = '2026-11-22T16:00:00.000Z') {
    this.current = Date.parse(start);
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(iso: string): void {
    this.current = Date.parse(iso);
  }
}

export interface TestResponse<Body = any> {
  status: number;
  headers: Headers;
  body: Body;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
  /** X-API-KEY. */
  apiKey?: string;
  /** Authorization: Bearer (defaults to the test ADMIN_TOKEN on /admin routes). */
  adminToken?: string | null;
}

export interface TestApp {
  kind: DatabaseKind;
  app: App;
  db: Database;
  database: TestDatabase;
  /** The context the app was built with (for calling services directly). */
  context: AppContext;
  config: Config;
  clock: TestClock;
  baseUrl: string;
  request<Body = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<Body>>;
  /** Creates a merchant through the operator API; returns its business_code and API key. */
  createMerchant(options?: { name?: string; ach_enabled?: boolean; partner_id?: number }): Promise<{ businessCode: number; apiKey: string; keyPrefix: string }>;
  /** Creates a partner through the operator API; returns its id and master key. */
  createPartner(name?: string): Promise<{ partnerId: number; masterKey: string; keyPrefix: string }>;
  close(): Promise<void>;
}

export interface StartOptions {
  kind: DatabaseKind;
  env?: Record<string, string>;
  plugins?: FastifyPluginAsync<AppContext>[];
  /** Reuse a database (a second instance on the same PostgreSQL database). */
  database?: TestDatabase;
  /** Open a second pool on `database` instead of sharing its Database object. */
  separatePool?: boolean;
  clock?: TestClock;
  /** Further QR purposes, beside the app's own (tests of the purpose hook). */
  purposes?: Record<string, PaymentPurposeHandler>;
  /** Registry served on /metrics (to share it with worker jobs under test). */
  metrics?: import('prom-client').Registry;
  /**
   * Values of the Banco Económico rail's typed config, set over what RAIL=baneco and the BANECO_* variables
   * of `env` gave (test/helpers/baneco.ts starts the app and the bank simulator together).
   */
  baneco?: Partial<BanecoConfig>;
  /** Port to listen on (default: any free one): a bank simulator's callbacks need it before the app starts. */
  port?: number;
  /** The app's logger (default: one at LOG_LEVEL); tests that read the log pass their own. */
  logger?: import('fastify').FastifyBaseLogger;
}

/**
 * Builds the app as startService does, less the start's database work: the database is a migrated clone, and
 * its mode (migration 026) is neither recorded nor checked here — startService and the CLI do that
 * (test/process/database-mode.test.ts) — so a file may start apps of both modes on one database.
 */
export async function startTestApp(options: StartOptions): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase(options.kind));
  const ownsDatabase = !options.database;
  const db = options.separatePool ? await database.openAnother() : database.db;
  const config = loadConfig({
    // Never opened: the test decides the database (below). Not memory://, which MODE=live refuses.
    DATABASE_URL: 'postgres://test-database.invalid/placeholder',
    ADMIN_TOKEN,
    ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS,
    RATE_LIMIT: 'off',
    PUBLIC_RATE_LIMIT: 'off',
    LOG_LEVEL: 'silent',
    SANDBOX_SETTLEMENT: 'off',
    ...options.env,
  });
  if (options.baneco) {
    if (config.rail.kind !== 'baneco') throw new Error('startTestApp: `baneco` changes a RAIL=baneco configuration; set RAIL and BANECO_* in `env`');
    config.rail = { kind: 'baneco', baneco: { ...config.rail.baneco, ...options.baneco } };
  }
  const clock = options.clock ?? new TestClock();
  const logger = options.logger ?? createLogger(config.logLevel);
  const context = createAppContext({ config, db, clock }, { purposes: options.purposes, log: logger });
  const app = await buildApp(context, { plugins: options.plugins, logger, metrics: options.metrics });
  // As startService does: the context's render threads, QR read model and key cache run while the app does.
  await context.lifecycle.start();
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const closed = trackOpen('a test app');
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  let checker: ContractChecker | null = null;
  // CONTRACT_PROXY=prism (npm run contract): documented requests go through Stoplight Prism as well.
  let prism: PrismProxy | null = null;
  if (process.env.CONTRACT_PROXY === 'prism') {
    try {
      prism = await startPrismProxy(app.swagger(), baseUrl);
    } catch (error) {
      await context.lifecycle.stop(() => app.close());
      if (ownsDatabase) await database.drop();
      closed();
      throw error;
    }
  }
  const request = async <Body = any>(method: string, path: string, requestOptions: RequestOptions = {}): Promise<TestResponse<Body>> => {
    const headers: Record<string, string> = { accept: 'application/json', ...requestOptions.headers };
    if (requestOptions.apiKey !== undefined) headers['x-api-key'] = requestOptions.apiKey;
    const adminToken = requestOptions.adminToken === undefined ? ADMIN_TOKEN : requestOptions.adminToken;
    if (path.startsWith('/admin/') && adminToken !== null && !('authorization' in headers)) headers.authorization = `Bearer ${adminToken}`;
    let body: string | undefined;
    if (requestOptions.rawBody !== undefined) {
      body = requestOptions.rawBody;
    } else if (requestOptions.body !== undefined) {
      body = JSON.stringify(requestOptions.body);
      headers['content-type'] ??= 'application/json';
    }
    checker ??= contractCheckerFor(app.swagger() as Record<string, unknown>);
    const operation = checker.operationOf(method, path);
    const throughPrism = prism !== null && operation !== null && prismCanRelay(path, headers['content-type'], body);
    const response = await fetch((throughPrism && prism ? prism.url : baseUrl) + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.includes('json') && text !== '') parsed = JSON.parse(text);
    // Every answer is held to the service's own /openapi.json (helpers/contract-check.ts).
    const problems = checker.check({ method, path, sentBody: body !== undefined, status: response.status, headers: response.headers, contentType, body: parsed });
    if (throughPrism) problems.push(...prismProblems(`${method} ${path} → ${response.status}`, response.status, prismViolations(response.headers)));
    if (problems.length > 0) reportContractProblems(problems);
    // What `npm run contract` counts as exercised: an exchange Prism matched to its operation and checked.
    if (operation && process.env.CONTRACT_COVERAGE) appendFileSync(process.env.CONTRACT_COVERAGE, `${operation} ${response.status}${throughPrism ? '' : ' direct'}\n`);
    return { status: response.status, headers: response.headers, body: parsed as Body, text };
  };

  return {
    kind: options.kind,
    app,
    db,
    database,
    context,
    config,
    clock,
    baseUrl,
    request,
    async createMerchant(merchant = {}) {
      const response = await request('POST', '/admin/v1/merchants', { body: { name: 'Test Merchant', ...merchant } });
      if (response.status !== 201) throw new Error(`creating a merchant answered ${response.status}: ${response.text}`);
      return { businessCode: response.body.business_code, apiKey: response.body.api_key, keyPrefix: response.body.key_prefix };
    },
    async createPartner(name = 'Test Partner') {
      const response = await request('POST', '/admin/v1/partners', { body: { name } });
      if (response.status !== 201) throw new Error(`creating a partner answered ${response.status}: ${response.text}`);
      return { partnerId: response.body.id, masterKey: response.body.master_key, keyPrefix: response.body.key_prefix };
    },
    async close() {
      await prism?.close();
      await context.lifecycle.stop(() => app.close());
      if (options.separatePool) await db.close();
      if (ownsDatabase) await database.drop();
      closed();
    },
  };
}

/**
 * Two service instances on one PostgreSQL database — separate pools, one clock — started before the
 * suite's tests and closed after them: what a race between processes needs. Call inside a describe.
 */
export function twoInstances(kind: DatabaseKind, options: Omit<StartOptions, 'kind' | 'database' | 'separatePool' | 'clock'> = {}): { first(): TestApp; second(): TestApp } {
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  beforeAll(async () => {
    first = await startTestApp({ kind, ...options });
    second = await startTestApp({ kind, ...options, database: first.database, separatePool: true, clock: first.clock });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });
  return { first: () => first!, second: () => second! };
}

/** A contract violation fails the request's test; with CONTRACT_REPORT=<file> it is listed there instead (to survey). */
function reportContractProblems(problems: string[]): void {
  if (process.env.CONTRACT_REPORT) {
    appendFileSync(process.env.CONTRACT_REPORT, `${problems.join('\n')}\n`);
    return;
  }
  throw new Error(`the answer breaks /openapi.json:\n${problems.join('\n')}`);
}
