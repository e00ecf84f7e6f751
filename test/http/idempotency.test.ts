// Idempotency-Key on money writes (docs/api-reference.md#idempotency), through HTTP on the production hooks, with the fixture
// route POST /test/movements (a ledger credit or debit plus its event inside runIdempotent).
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.ts';
import type { Queryable, Transaction } from '../../src/db/database.ts';
import * as events from '../../src/events/service.ts';
import { callerScope, merchantOf } from '../../src/kernel/principal.ts';
import { ApiError } from '../../src/kernel/errors.ts';
import { sendIdempotentResult } from '../../src/idempotency/http.ts';
import { fingerprint, IDEMPOTENCY_RETENTION_MS, purgeExpiredOutcomes, runIdempotent, type IdempotencyScope } from '../../src/idempotency/service.ts';
import * as ledger from '../../src/ledger/service.ts';
import { parseAmount } from '../../src/money.ts';
import { startTestApp, type TestApp, type TestResponse } from '../helpers/app.ts';
import { databaseKinds, describeOnPostgres } from '../helpers/databases.ts';
import { fixtureRoutes, MovementBody } from '../helpers/fixture-routes.ts';
import { centavos } from '../../src/money.ts';

type Merchant = { businessCode: number; apiKey: string };

/**
 * A second idempotent route, the same credit under another route name: the same key used on two routes
 * must be two requests (docs/api-reference.md#idempotency: keys are scoped per route).
 */
const otherIdempotentRoute: FastifyPluginAsync<AppContext> = async (app, { db, clock }) => {
  app.post('/test/other-movements', {
    config: { auth: 'merchant', idempotency: 'required' },
    schema: { body: MovementBody },
  }, async (request, reply) => {
    const businessCode = merchantOf(request.principal);
    const body = request.body as typeof MovementBody.static;
    if (body.business_code !== businessCode) throw new ApiError('BUSINESS_CODE_MISMATCH');
    const parsed = parseAmount(body.amount, { min: 10, max: 2_000_000 });
    if (!parsed.ok) throw new Error('validated amount did not parse');
    const canonical = { business_code: body.business_code, amount_centavos: parsed.centavos, direction: 'credit', reference: body.reference ?? null };
    const scope = { caller: callerScope(request.principal!), route: 'POST /test/other-movements', key: request.idempotencyKey! };
    const outcome = await runIdempotent(db, scope, canonical, clock.now(), async (tx) => {
      const movement = await ledger.credit(tx, { businessCode, amountCentavos: parsed.centavos, reference: canonical.reference, snapshot: { source: 'other' }, now: clock.now() });
      await events.emit(tx, { kind: 'merchant', businessCode }, 'simple_qr.payment_received', { movement_id: movement.id }, clock.now());
      return { statusCode: 201, body: { movement_id: movement.id, route: 'other' } };
    });
    return sendIdempotentResult(reply, outcome);
  });
};

function movementRequest(t: TestApp, merchant: Merchant, key: string | null, body: unknown, path = '/test/movements'): Promise<TestResponse> {
  return t.request('POST', path, {
    apiKey: merchant.apiKey,
    body,
    headers: key === null ? {} : { 'idempotency-key': key },
  });
}

async function movementCount(t: TestApp, businessCode: number): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>('select count(*)::int as n from movements where business_code = $1::bigint', [businessCode]);
  return rows[0]!.n;
}

async function eventCount(t: TestApp, businessCode: number): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>(
    "select count(*)::int as n from events where owner_kind = 'merchant' and owner_id = $1::bigint",
    [businessCode],
  );
  return rows[0]!.n;
}

async function storedOutcomeCount(t: TestApp, key: string): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>('select count(*)::int as n from idempotency_keys where idempotency_key = $1::uuid', [key]);
  return rows[0]!.n;
}

/** The outcome a racing request with the same key and body stored: 201 with `{ winner: true }`. */
async function storeWinningOutcome(db: Queryable, scope: IdempotencyScope): Promise<void> {
  await db.query(
    `insert into idempotency_keys (caller, route, idempotency_key, request_hash, status_code, response_body, created_at)
     values ($1::text, $2::text, $3::uuid, $4::text, 201, '{"winner":true}'::jsonb, now())`,
    [scope.caller, scope.route, scope.key, fingerprint({ n: 1 })],
  );
}

async function balanceOf(t: TestApp, merchant: Merchant): Promise<{ available: number; pending_out: number }> {
  const response = await t.request('GET', '/api/v2/balance', { apiKey: merchant.apiKey });
  expect(response.status).toBe(200);
  return { available: response.body.available, pending_out: response.body.pending_out };
}

describe.each(databaseKinds())('Idempotency-Key on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes, otherIdempotentRoute] });
  });
  afterAll(() => t.close());

  async function merchantWithBalance(centavos = 0): Promise<Merchant> {
    const merchant = await t.createMerchant({ name: 'Idempotent Shop' });
    if (centavos > 0) {
      const funded = await movementRequest(t, merchant, randomUUID(), { business_code: merchant.businessCode, amount: centavos / 100 });
      expect(funded.status).toBe(201);
    }
    return merchant;
  }

  it('a write without Idempotency-Key is refused with 400 IDEMPOTENCY_KEY_MISSING and moves nothing', async () => {
    const merchant = await merchantWithBalance();
    const response = await movementRequest(t, merchant, null, { business_code: merchant.businessCode, amount: 10 });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ type: 'invalid_request_error', code: 'IDEMPOTENCY_KEY_MISSING', message: expect.any(String) });
    expect(await movementCount(t, merchant.businessCode)).toBe(0);
    expect(await balanceOf(t, merchant)).toEqual({ available: 0, pending_out: 0 });
  });

  it('the missing key is reported before body validation (400, not 422)', async () => {
    const merchant = await merchantWithBalance();
    const response = await movementRequest(t, merchant, null, { business_code: merchant.businessCode, amount: '10.001', typo: 1 });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('IDEMPOTENCY_KEY_MISSING');
  });

  it.each([
    ['not a UUID', 'not-a-uuid'],
    ['a UUID v1', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'],
    ['a UUID v4 with a wrong variant', '3f2a9c1e-7b4d-4e8f-c123-0123456789ab'],
    ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
    ['a UUID v4 in braces', '{3f2a9c1e-7b4d-4e8f-9123-0123456789ab}'],
    ['a UUID v4 without hyphens', '3f2a9c1e7b4d4e8f91230123456789ab'],
  ])('an Idempotency-Key that is %s is refused with 400 IDEMPOTENCY_KEY_INVALID', async (_what, key) => {
    const merchant = await merchantWithBalance();
    const response = await movementRequest(t, merchant, key, { business_code: merchant.businessCode, amount: 10 });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ type: 'invalid_request_error', code: 'IDEMPOTENCY_KEY_INVALID', message: expect.any(String) });
    expect(await movementCount(t, merchant.businessCode)).toBe(0);
  });

  it('the same key with the same body replays the same status and body, marked Idempotent-Replayed, and moves money once', async () => {
    const merchant = await merchantWithBalance();
    const key = randomUUID();
    const body = { business_code: merchant.businessCode, amount: 25.5, reference: 'Order 1' };

    const first = await movementRequest(t, merchant, key, body);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.body).toEqual({ movement_id: expect.any(Number), amount_centavos: 2550, status: 'COMPLETED' });

    const second = await movementRequest(t, merchant, key, body);
    const third = await movementRequest(t, merchant, key, body);
    for (const replay of [second, third]) {
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(first.body);
    }

    expect(await balanceOf(t, merchant)).toEqual({ available: 25.5, pending_out: 0 });
    expect(await movementCount(t, merchant.businessCode)).toBe(1);
    expect(await eventCount(t, merchant.businessCode)).toBe(1);
  });

  it('a key is the same key whatever its letter case', async () => {
    const merchant = await merchantWithBalance();
    const key = randomUUID();
    const body = { business_code: merchant.businessCode, amount: 3 };
    const first = await movementRequest(t, merchant, key.toUpperCase(), body);
    expect(first.status).toBe(201);
    const replay = await movementRequest(t, merchant, key.toLowerCase(), body);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await movementCount(t, merchant.businessCode)).toBe(1);
  });

  it('0.1 and "0.10", and the same fields in another order, are the same request', async () => {
    const merchant = await merchantWithBalance();
    const key = randomUUID();
    const first = await movementRequest(t, merchant, key, { business_code: merchant.businessCode, amount: 0.1, direction: 'credit', reference: 'R' });
    expect(first.status).toBe(201);

    const rawBodies = [
      `{"reference":"R","direction":"credit","amount":"0.10","business_code":${merchant.businessCode}}`,
      `{"amount":"0.1","reference":"R","business_code":${merchant.businessCode},"direction":"credit"}`,
      `{"direction":"credit","business_code":${merchant.businessCode},"reference":"R","amount":0.10}`,
    ];
    for (const rawBody of rawBodies) {
      const replay = await t.request('POST', '/test/movements', {
        apiKey: merchant.apiKey,
        rawBody,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      });
      expect(replay.status, rawBody).toBe(201);
      expect(replay.headers.get('idempotent-replayed'), rawBody).toBe('true');
      expect(replay.body).toEqual(first.body);
    }
    expect(await balanceOf(t, merchant)).toEqual({ available: 0.1, pending_out: 0 });
    expect(await movementCount(t, merchant.businessCode)).toBe(1);
  });

  it.each([
    ['another amount', { amount: 10.01 }],
    ['another direction', { direction: 'debit' }],
    ['a reference added', { reference: 'Changed' }],
  ])('the same key with a different body (%s) is refused with 422 IDEMPOTENCY_KEY_REUSED and moves nothing', async (_what, change) => {
    const merchant = await merchantWithBalance(5000);
    const key = randomUUID();
    const body = { business_code: merchant.businessCode, amount: 10, direction: 'credit' };
    const first = await movementRequest(t, merchant, key, body);
    expect(first.status).toBe(201);
    const balanceAfterFirst = await balanceOf(t, merchant);

    const reused = await movementRequest(t, merchant, key, { ...body, ...change });
    expect(reused.status).toBe(422);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
    expect(reused.body).toEqual({ type: 'idempotency_error', code: 'IDEMPOTENCY_KEY_REUSED', message: expect.any(String) });

    expect(await balanceOf(t, merchant)).toEqual(balanceAfterFirst);
    expect(await movementCount(t, merchant.businessCode)).toBe(2); // the funding credit and the first request
    expect(await eventCount(t, merchant.businessCode)).toBe(2);
    // The original request still replays after the refused one.
    const replay = await movementRequest(t, merchant, key, body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
  });

  it('keys are scoped per merchant: another merchant may use the same key for its own request', async () => {
    const first = await merchantWithBalance();
    const second = await merchantWithBalance();
    const key = randomUUID();

    const ofFirst = await movementRequest(t, first, key, { business_code: first.businessCode, amount: 7 });
    const ofSecond = await movementRequest(t, second, key, { business_code: second.businessCode, amount: 7 });
    expect(ofFirst.status).toBe(201);
    expect(ofSecond.status).toBe(201);
    expect(ofSecond.headers.get('idempotent-replayed')).toBeNull();
    expect(ofSecond.body.movement_id).not.toBe(ofFirst.body.movement_id);

    expect(await balanceOf(t, first)).toEqual({ available: 7, pending_out: 0 });
    expect(await balanceOf(t, second)).toEqual({ available: 7, pending_out: 0 });
    expect(await movementCount(t, first.businessCode)).toBe(1);
    expect(await movementCount(t, second.businessCode)).toBe(1);

    // Each merchant replays its own outcome.
    const replayOfSecond = await movementRequest(t, second, key, { business_code: second.businessCode, amount: 7 });
    expect(replayOfSecond.headers.get('idempotent-replayed')).toBe('true');
    expect(replayOfSecond.body).toEqual(ofSecond.body);
  });

  it('keys are scoped per route: the same key on another route is another request', async () => {
    const merchant = await merchantWithBalance();
    const key = randomUUID();
    const body = { business_code: merchant.businessCode, amount: 4 };

    const onMovements = await movementRequest(t, merchant, key, body);
    const onOther = await movementRequest(t, merchant, key, body, '/test/other-movements');
    expect(onMovements.status).toBe(201);
    expect(onOther.status).toBe(201);
    expect(onOther.headers.get('idempotent-replayed')).toBeNull();
    expect(onOther.body).toEqual({ movement_id: expect.any(Number), route: 'other' });
    expect(await movementCount(t, merchant.businessCode)).toBe(2);

    const replayOnMovements = await movementRequest(t, merchant, key, body);
    const replayOnOther = await movementRequest(t, merchant, key, body, '/test/other-movements');
    expect(replayOnMovements.body).toEqual(onMovements.body);
    expect(replayOnOther.body).toEqual(onOther.body);
    expect(replayOnMovements.headers.get('idempotent-replayed')).toBe('true');
    expect(replayOnOther.headers.get('idempotent-replayed')).toBe('true');
    expect(await balanceOf(t, merchant)).toEqual({ available: 8, pending_out: 0 });
  });

  it('a 422 validation error is not stored: the corrected retry with the same key executes', async () => {
    const merchant = await merchantWithBalance();
    const key = randomUUID();
    const invalid = await movementRequest(t, merchant, key, { business_code: merchant.businessCode, amount: '10.001' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe('VALIDATION_FAILED');
    expect(await storedOutcomeCount(t, key)).toBe(0);

    const corrected = await movementRequest(t, merchant, key, { business_code: merchant.businessCode, amount: '10.00' });
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
    expect(await movementCount(t, merchant.businessCode)).toBe(1);
    expect(await balanceOf(t, merchant)).toEqual({ available: 10, pending_out: 0 });
  });

  it('a 403 BUSINESS_CODE_MISMATCH is not stored: the corrected retry with the same key executes', async () => {
    const merchant = await merchantWithBalance();
    const other = await merchantWithBalance();
    const key = randomUUID();
    const mismatch = await movementRequest(t, merchant, key, { business_code: other.businessCode, amount: 12 });
    expect(mismatch.status).toBe(403);
    expect(mismatch.body).toEqual({ type: 'permission_error', code: 'BUSINESS_CODE_MISMATCH', message: expect.any(String) });
    expect(await storedOutcomeCount(t, key)).toBe(0);
    expect(await movementCount(t, other.businessCode)).toBe(0);

    const corrected = await movementRequest(t, merchant, key, { business_code: merchant.businessCode, amount: 12 });
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
    expect(await balanceOf(t, merchant)).toEqual({ available: 12, pending_out: 0 });
    expect(await balanceOf(t, other)).toEqual({ available: 0, pending_out: 0 });
  });

  it('400 INSUFFICIENT_FUNDS is stored and replayed, and moves no money, writes no movement and no event', async () => {
    const merchant = await merchantWithBalance(500);
    const key = randomUUID();
    const debit = { business_code: merchant.businessCode, amount: 10, direction: 'debit' };

    const refused = await movementRequest(t, merchant, key, debit);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('idempotent-replayed')).toBeNull();
    expect(refused.body).toEqual({ type: 'business_logic_error', code: 'INSUFFICIENT_FUNDS', message: expect.any(String) });
    expect(await storedOutcomeCount(t, key)).toBe(1);
    expect(await balanceOf(t, merchant)).toEqual({ available: 5, pending_out: 0 });
    expect(await movementCount(t, merchant.businessCode)).toBe(1); // the funding credit only
    expect(await eventCount(t, merchant.businessCode)).toBe(1);

    const replay = await movementRequest(t, merchant, key, debit);
    expect(replay.status).toBe(400);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(refused.body);

    // Funds arrive; the stored refusal is still what this key answers: it is not executed again.
    const topUp = await movementRequest(t, merchant, randomUUID(), { business_code: merchant.businessCode, amount: 20 });
    expect(topUp.status).toBe(201);
    const afterTopUp = await movementRequest(t, merchant, key, debit);
    expect(afterTopUp.status).toBe(400);
    expect(afterTopUp.headers.get('idempotent-replayed')).toBe('true');
    expect(afterTopUp.body).toEqual(refused.body);
    expect(await balanceOf(t, merchant)).toEqual({ available: 25, pending_out: 0 });
    const { rows } = await t.db.query<{ n: number }>(
      "select count(*)::int as n from movements where business_code = $1::bigint and type = 'transfer'",
      [merchant.businessCode],
    );
    expect(rows[0]!.n).toBe(0);
    expect(await eventCount(t, merchant.businessCode)).toBe(2);

    // And the stored refusal keeps its fingerprint: another body under the key is a reuse.
    const reused = await movementRequest(t, merchant, key, { ...debit, amount: 1 });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('a debit the balance covers moves available to pending_out once, even when replayed', async () => {
    const merchant = await merchantWithBalance(1000);
    const key = randomUUID();
    const debit = { business_code: merchant.businessCode, amount: 4, direction: 'debit' };
    const first = await movementRequest(t, merchant, key, debit);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ movement_id: expect.any(Number), amount_centavos: -400, status: 'PENDING' });
    const replay = await movementRequest(t, merchant, key, debit);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await balanceOf(t, merchant)).toEqual({ available: 6, pending_out: 4 });
    expect(await movementCount(t, merchant.businessCode)).toBe(2);
  });
});

describe('the request fingerprint', () => {
  it('ignores key order at every depth and undefined fields, and tells different values apart', () => {
    const a = { business_code: 1001, amount_centavos: 10, nested: { x: 1, y: [1, { p: 'q', r: null }] } };
    const b = { nested: { y: [1, { r: null, p: 'q' }], x: 1 }, amount_centavos: 10, business_code: 1001, reference: undefined };
    expect(fingerprint(a)).toBe(fingerprint(b));
    expect(fingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint({ ...a, amount_centavos: 11 })).not.toBe(fingerprint(a));
    expect(fingerprint({ ...a, nested: { x: 1, y: [{ p: 'q', r: null }, 1] } })).not.toBe(fingerprint(a)); // array order matters
    expect(fingerprint({ reference: null })).not.toBe(fingerprint({ reference: 'null' }));
    expect(fingerprint({ amount: 10 })).not.toBe(fingerprint({ amount: '10' }));
  });
});

// runIdempotent itself, on the service's database, for what the fixture route cannot show.
describe.each(databaseKinds())('runIdempotent on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind });
  });
  afterAll(() => t.close());

  it('a stored refusal undoes whatever the work wrote before refusing, and is then replayed without running the work', async () => {
    const merchant = await t.createMerchant({ name: 'Refused Shop' });
    const scope = { caller: `merchant:${merchant.businessCode}`, route: 'POST /test/service', key: randomUUID() };
    let runs = 0;
    const work = async (tx: Transaction) => {
      runs++;
      const movement = await ledger.credit(tx, { businessCode: merchant.businessCode, amountCentavos: centavos(500), reference: null, snapshot: {}, now: t.clock.now() });
      await events.emit(tx, { kind: 'merchant', businessCode: merchant.businessCode }, 'simple_qr.payment_received', { movement_id: movement.id }, t.clock.now());
      throw new ApiError('INSUFFICIENT_FUNDS');
    };
    const first = await runIdempotent(t.db, scope, { n: 1 }, t.clock.now(), work);
    expect(first).toEqual({ statusCode: 400, body: new ApiError('INSUFFICIENT_FUNDS').toBody(), replayed: false });
    expect(await movementCount(t, merchant.businessCode)).toBe(0);
    expect(await eventCount(t, merchant.businessCode)).toBe(0);
    expect(await balanceOf(t, merchant)).toEqual({ available: 0, pending_out: 0 });
    expect(await storedOutcomeCount(t, scope.key)).toBe(1);

    const second = await runIdempotent(t.db, scope, { n: 1 }, t.clock.now(), work);
    expect(second).toEqual({ ...first, replayed: true });
    expect(runs).toBe(1);
  });

  it.each([
    ['a 409 business error', () => new ApiError('TRANSFER_NOT_CANCELABLE')],
    ['a 422 validation error', () => new ApiError('VALIDATION_FAILED')],
    ['an unexpected error', () => new Error('rail unreachable')],
  ])('%s is not stored: the work and the key are undone, and a retry runs the work again', async (_what, makeError) => {
    const merchant = await t.createMerchant({ name: 'Retry Shop' });
    const scope = { caller: `merchant:${merchant.businessCode}`, route: 'POST /test/service', key: randomUUID() };
    const failure = makeError();
    const failing = await runIdempotent(t.db, scope, { n: 1 }, t.clock.now(), async (tx) => {
      await ledger.credit(tx, { businessCode: merchant.businessCode, amountCentavos: centavos(500), reference: null, snapshot: {}, now: t.clock.now() });
      throw failure;
    }).then(() => null, (error: unknown) => error);
    expect(failing).toBe(failure);
    expect(await storedOutcomeCount(t, scope.key)).toBe(0);
    expect(await movementCount(t, merchant.businessCode)).toBe(0);

    const retry = await runIdempotent(t.db, scope, { n: 1 }, t.clock.now(), async () => ({ statusCode: 201, body: { ok: true } }));
    expect(retry).toEqual({ statusCode: 201, body: { ok: true }, replayed: false });
  });

  it('an outcome stored for the key after the claim read it (a request that committed in between) undoes the work and that row with it: 409', async () => {
    const merchant = await t.createMerchant({ name: 'Overtaken Shop' });
    const scope = { caller: `merchant:${merchant.businessCode}`, route: 'POST /test/service', key: randomUUID() };
    const overtaken = await runIdempotent(t.db, scope, { n: 1 }, t.clock.now(), async (tx) => {
      await ledger.credit(tx, { businessCode: merchant.businessCode, amountCentavos: centavos(500), reference: null, snapshot: {}, now: t.clock.now() });
      // What the winner of the race committed between claimKeys' read and its lock, written here where
      // the work runs, which comes after both. (On PGlite, with one connection, only this transaction can write it.)
      await storeWinningOutcome(tx, scope);
      return { statusCode: 201, body: { winner: false } };
    }).then(() => null, (error: unknown) => error);
    expect(overtaken).toBeInstanceOf(ApiError);
    expect((overtaken as ApiError).code).toBe('IDEMPOTENCY_KEY_IN_USE');
    // The whole transaction was undone, the winner's row (written inside it here) with it.
    expect(await movementCount(t, merchant.businessCode)).toBe(0);
    expect(await storedOutcomeCount(t, scope.key)).toBe(0);
  });

  it('a merchant and a partner with the same number are different callers', async () => {
    const key = randomUUID();
    const asMerchant = await runIdempotent(t.db, { caller: 'merchant:1001', route: 'POST /x', key }, { n: 1 }, t.clock.now(), async () => ({ statusCode: 201, body: { who: 'merchant' } }));
    const asPartner = await runIdempotent(t.db, { caller: 'partner:1001', route: 'POST /x', key }, { n: 1 }, t.clock.now(), async () => ({ statusCode: 201, body: { who: 'partner' } }));
    expect(asMerchant).toEqual({ statusCode: 201, body: { who: 'merchant' }, replayed: false });
    expect(asPartner).toEqual({ statusCode: 201, body: { who: 'partner' }, replayed: false });
  });
});

describe.each(databaseKinds())('stored idempotency outcomes expire on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    // A room of its own: purging counts every outcome in the database.
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t.close());

  it('outcomes are kept 24 hours and purged after; the key then executes again', async () => {
    const merchant = await t.createMerchant({ name: 'Expiring Shop' });
    const createdAt = t.clock.now().getTime();
    const oldKey = randomUUID();
    const oldBody = { business_code: merchant.businessCode, amount: 2 };
    const old = await movementRequest(t, merchant, oldKey, oldBody);
    expect(old.status).toBe(201);

    t.clock.advance(60 * 60 * 1000);
    const youngKey = randomUUID();
    const youngBody = { business_code: merchant.businessCode, amount: 3 };
    const young = await movementRequest(t, merchant, youngKey, youngBody);
    expect(young.status).toBe(201);

    // Just short of 24 h: nothing goes, and the key still replays.
    expect(await purgeExpiredOutcomes(t.db, new Date(createdAt + IDEMPOTENCY_RETENTION_MS - 1))).toBe(0);
    expect(await storedOutcomeCount(t, oldKey)).toBe(1);
    t.clock.set(new Date(createdAt + IDEMPOTENCY_RETENTION_MS - 1).toISOString());
    const stillKept = await movementRequest(t, merchant, oldKey, oldBody);
    expect(stillKept.headers.get('idempotent-replayed')).toBe('true');
    expect(stillKept.body).toEqual(old.body);

    // Past 24 h: the old outcome goes, the younger one stays.
    const after = new Date(createdAt + IDEMPOTENCY_RETENTION_MS + 1);
    expect(await purgeExpiredOutcomes(t.db, after)).toBe(1);
    expect(await storedOutcomeCount(t, oldKey)).toBe(0);
    expect(await storedOutcomeCount(t, youngKey)).toBe(1);

    t.clock.set(after.toISOString());
    const again = await movementRequest(t, merchant, oldKey, oldBody);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.movement_id).not.toBe(old.body.movement_id);
    const youngReplay = await movementRequest(t, merchant, youngKey, youngBody);
    expect(youngReplay.headers.get('idempotent-replayed')).toBe('true');
    expect(youngReplay.body).toEqual(young.body);

    expect(await movementCount(t, merchant.businessCode)).toBe(3);
    expect(await balanceOf(t, merchant)).toEqual({ available: 7, pending_out: 0 });
  });

  it('a purge removes at most its limit of outcomes per call', async () => {
    // Move past every earlier outcome's retention and clear them, so the counts below are this test's own.
    t.clock.advance(IDEMPOTENCY_RETENTION_MS * 2);
    await purgeExpiredOutcomes(t.db, t.clock.now(), 10_000);
    const merchant = await t.createMerchant({ name: 'Purged Shop' });
    for (const amount of [1, 2, 3]) {
      expect((await movementRequest(t, merchant, randomUUID(), { business_code: merchant.businessCode, amount })).status).toBe(201);
    }
    const later = new Date(t.clock.now().getTime() + IDEMPOTENCY_RETENTION_MS + 1);
    expect(await purgeExpiredOutcomes(t.db, later, 2)).toBe(2);
    expect(await purgeExpiredOutcomes(t.db, later, 2)).toBe(1);
    expect(await purgeExpiredOutcomes(t.db, later, 2)).toBe(0);
  });
});

/** Polls until `condition` holds; fails the test after `timeoutMs` rather than hanging. */
async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// PGlite runs one transaction at a time, so there a second request simply waits for the first: only
// PostgreSQL can show the in-flight conflict and the race between instances.
describeOnPostgres('concurrent requests with one Idempotency-Key on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t.close());

  async function advisoryLocksHeld(): Promise<number> {
    const { rows } = await t.db.query<{ n: number }>(
      `select count(*)::int as n from pg_locks
        where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`,
    );
    return rows[0]!.n;
  }

  it('while the first request is executing, a second with the same key gets 409 IDEMPOTENCY_KEY_IN_USE at once and moves nothing', async () => {
    const merchant = await t.createMerchant({ name: 'Busy Shop' });
    const key = randomUUID();
    const body = { business_code: merchant.businessCode, amount: 15, hold_ms: 1500 };

    let firstSettled = false;
    const firstPromise = movementRequest(t, merchant, key, body).finally(() => {
      firstSettled = true;
    });
    await waitUntil(async () => (await advisoryLocksHeld()) > 0, 'the first request holds its key lock');

    const second = await movementRequest(t, merchant, key, body);
    const secondInUpperCase = await movementRequest(t, merchant, key.toUpperCase(), body);
    // Answered while the first is still holding its transaction open: they did not wait for it.
    expect(firstSettled).toBe(false);
    for (const conflict of [second, secondInUpperCase]) {
      expect(conflict.status).toBe(409);
      expect(conflict.headers.get('idempotent-replayed')).toBeNull();
      expect(conflict.body).toEqual({ type: 'idempotency_error', code: 'IDEMPOTENCY_KEY_IN_USE', message: expect.any(String) });
    }

    const first = await firstPromise;
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const third = await movementRequest(t, merchant, key, body);
    expect(third.status).toBe(201);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    expect(third.body).toEqual(first.body);

    expect(await movementCount(t, merchant.businessCode)).toBe(1);
    expect(await eventCount(t, merchant.businessCode)).toBe(1);
    expect(await balanceOf(t, merchant)).toEqual({ available: 15, pending_out: 0 });
  });

  it('an outcome another request committed after this one\'s claim read the key: 409, nothing of this one is kept, and a retry replays the winner', async () => {
    const merchant = await t.createMerchant({ name: 'Overtaken Postgres Shop' });
    const scope = { caller: `merchant:${merchant.businessCode}`, route: 'POST /test/service', key: randomUUID() };
    const overtaken = await runIdempotent(t.db, scope, { n: 1 }, t.clock.now(), async (tx) => {
      await ledger.credit(tx, { businessCode: merchant.businessCode, amountCentavos: centavos(500), reference: null, snapshot: {}, now: t.clock.now() });
      // The winner commits on a connection of its own while this transaction is open (see claimKeys).
      await storeWinningOutcome(t.db, scope);
      return { statusCode: 201, body: { winner: false } };
    }).then(() => null, (error: unknown) => error);
    expect((overtaken as ApiError).code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(await movementCount(t, merchant.businessCode)).toBe(0);
    expect(await storedOutcomeCount(t, scope.key)).toBe(1);

    let ranAgain = false;
    const retry = await runIdempotent(t.db, scope, { n: 1 }, t.clock.now(), async () => {
      ranAgain = true;
      return { statusCode: 201, body: { winner: false } };
    });
    expect(retry).toEqual({ statusCode: 201, body: { winner: true }, replayed: true });
    expect(ranAgain).toBe(false);
  });

  it('the 409 is not stored: after the first finishes, the same key replays its outcome', async () => {
    const merchant = await t.createMerchant({ name: 'Busy Debit Shop' });
    expect((await movementRequest(t, merchant, randomUUID(), { business_code: merchant.businessCode, amount: 10 })).status).toBe(201);
    const key = randomUUID();
    const debit = { business_code: merchant.businessCode, amount: 6, direction: 'debit', hold_ms: 1000 };

    const firstPromise = movementRequest(t, merchant, key, debit);
    await waitUntil(async () => (await advisoryLocksHeld()) > 0, 'the first request holds its key lock');
    const conflict = await movementRequest(t, merchant, key, debit);
    expect(conflict.status).toBe(409);
    const first = await firstPromise;
    expect(first.status).toBe(201);

    const replay = await movementRequest(t, merchant, key, debit);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await balanceOf(t, merchant)).toEqual({ available: 4, pending_out: 6 });
  });

  it('the same key sent at once to two instances on one database executes exactly once', async () => {
    const second = await startTestApp({ kind: 'postgres', database: t.database, separatePool: true, plugins: [fixtureRoutes] });
    try {
      const merchant = await t.createMerchant({ name: 'Two Instances Shop' });
      const key = randomUUID();
      const body = { business_code: merchant.businessCode, amount: 33.33, hold_ms: 300 };

      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => movementRequest(i % 2 === 0 ? t : second, merchant, key, body)),
      );

      for (const response of responses) {
        expect([201, 409], response.text).toContain(response.status);
        if (response.status === 409) expect(response.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      }
      const executed = responses.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
      expect(executed).toHaveLength(1);
      for (const replayed of responses.filter((r) => r.status === 201)) expect(replayed.body).toEqual(executed[0]!.body);

      expect(await movementCount(t, merchant.businessCode)).toBe(1);
      expect(await eventCount(t, merchant.businessCode)).toBe(1);
      expect(await storedOutcomeCount(t, key)).toBe(1);
      expect(await balanceOf(t, merchant)).toEqual({ available: 33.33, pending_out: 0 });

      // Once it settles, both instances replay the one outcome.
      for (const instance of [t, second]) {
        const replay = await movementRequest(instance, merchant, key, body);
        expect(replay.status).toBe(201);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body).toEqual(executed[0]!.body);
      }
    } finally {
      await second.close();
    }
  });
});
