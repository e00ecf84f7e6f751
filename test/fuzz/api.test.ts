// Property-based fuzzing of the HTTP API, driven by the service's own OpenAPI document: for every route
// with a body, query parameters or path parameters, requests built from its schemas and requests with one
// thing broken (docs/api-reference.md: Request rules, Hostile input, Errors).
//
// - Well-formed requests go to the "sandbox" world, which they may change: each answer must be within the
//   contract (never a 5xx, X-Request-Id, the error shape) and never call the request malformed.
// - Mutated requests go to the "target" world: each must be refused as the API reference says (status, code, the
//   failing field), and the target — its balance, every list, its keys, its partner — must read exactly
//   the same after the refusal as before.
// - At the end the operator's ledger check finds every balance consistent.
//
// Bounded by default: a few cases per route and a fixed seed, a few seconds per database. For a long run:
//   FUZZ_RUNS=2000 npx vitest run test/fuzz            (FUZZ_SEED=<n> for another seed; see settings.ts)
// A failure prints fast-check's counterexample with its seed and path.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatorCompiler } from '../../src/kernel/validation.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { expectAcceptedAsWellFormed, expectRefusal, expectWithinContract } from './contract.ts';
import { describeRequest, HttpClient, type HttpRequest } from './http.ts';
import { fuzzableRoutes, renderRequest, routeName, type OpenApiDocument, type RequestParts, type Route } from './openapi-routes.ts';
import { mutatedRequest, wellFormedRequest } from './requests.ts';
import { fuzzSettings } from './settings.ts';
import { buildWorld, credentialsFor, scopeOf, snapshotOf, withOperatorSubject, type World } from './world.ts';

const WELL_FORMED_RUNS = fuzzSettings.runs(4);
const MUTATED_RUNS = fuzzSettings.runs(4);

/**
 * Vitest must know the tests before any hook runs, so the routes are read from GET /openapi.json when this
 * file loads, from the PGlite app that the PGlite tests then use (starting an app takes seconds).
 */
const pgliteApp = await startTestApp({ kind: 'pglite' });
afterAll(() => pgliteApp.close()); // after every describe's own afterAll

async function readRoutes(app: TestApp): Promise<Route[]> {
  const response = await app.request<OpenApiDocument>('GET', '/openapi.json');
  if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
  return fuzzableRoutes(response.body);
}

/**
 * Routes that end a resource (DELETE, `…/cancel`) come last, so that the well-formed requests of the
 * other routes still find the sandbox's QRs, transfers and endpoints alive.
 */
const endsResource = (route: Route) => route.method === 'DELETE' || route.template.endsWith('/cancel');
const ROUTES = (await readRoutes(pgliteApp)).sort((a, b) => Number(endsResource(a)) - Number(endsResource(b)));

/** Ids for drawing requests without an app: the generator's own checks only look at bodies and queries. */
const GENERATOR_WORLD: World = {
  merchant: { businessCode: 1001, apiKey: 'mk_test_x', keyPrefix: 'mk_test_x' },
  partner: { partnerId: 1, masterKey: 'pk_master_test_x', keyPrefix: 'pk_master_test_x' },
  resources: { qr: [], payToken: [], transfer: [], endpoint: [], event: [], intent: [], merchant: [], partner: [], keyPrefix: [] },
};

/** Headers every request of the route carries besides its parts. */
function withRouteHeaders(route: Route, request: HttpRequest): HttpRequest {
  const headers = { ...request.headers };
  // A fresh key on every write: routes that require one get it, the others ignore it.
  if (route.method !== 'GET') headers['idempotency-key'] = crypto.randomUUID();
  // A long poll (`wait`) answers at once when the client's ETag is not the current one, so no case waits 30 s.
  if (route.queryParameters.some((parameter) => parameter.name === 'wait')) headers['if-none-match'] = '"fuzz-stale"';
  return { ...request, headers };
}

describe('the request generator', () => {
  // The service's own validators, compiled from the document's schemas: a generator that drew values the
  // schemas refuse would make the well-formed cases test nothing.
  const validatorOf = (schema: object, httpPart: string) => validatorCompiler({ schema, httpPart, method: 'POST', url: '/' }) as (value: unknown) => boolean;

  it.each(ROUTES.filter((route) => route.body).map((route) => [routeName(route), route] as const))('draws bodies that %s validates', (_name, route) => {
    const validate = validatorOf(route.body!, 'body');
    fc.assert(fc.property(wellFormedRequest(route, scopeOf(GENERATOR_WORLD, true)), (parts) => {
      expect(validate((parts.body as { json: unknown }).json), JSON.stringify(parts.body)).toBe(true);
    }), { seed: fuzzSettings.seed, numRuns: 200 });
  });

  it.each(ROUTES.filter((route) => route.queryParameters.length > 0).map((route) => [routeName(route), route] as const))('draws query strings that %s validates', (_name, route) => {
    const schema = {
      type: 'object', additionalProperties: false,
      properties: Object.fromEntries(route.queryParameters.map((parameter) => [parameter.name, parameter.schema])),
    };
    const validate = validatorOf(schema, 'querystring');
    fc.assert(fc.property(wellFormedRequest(route, scopeOf(GENERATOR_WORLD, true)), (parts) => {
      expect(validate(Object.fromEntries(parts.query)), JSON.stringify(parts.query)).toBe(true);
    }), { seed: fuzzSettings.seed, numRuns: 200 });
  });
});

describe.each(databaseKinds())('fuzzing the API on %s', (kind) => {
  let t: TestApp;
  let client: HttpClient;
  let target: World;
  let sandbox: World;
  beforeAll(async () => {
    t = kind === 'pglite' ? pgliteApp : await startTestApp({ kind });
    client = new HttpClient(t.baseUrl);
    target = await buildWorld(t, 'Target');
    sandbox = await withOperatorSubject(t, await buildWorld(t, 'Sandbox'));
  });
  afterAll(async () => {
    client?.close();
    if (t !== pgliteApp) await t?.close();
  });

  const send = (route: Route, world: World, parts: RequestParts) => {
    const request = withRouteHeaders(route, renderRequest(route, parts, credentialsFor(world, route.caller)));
    return client.send(request).then((response) => ({ request, response }));
  };

  it('reads routes with bodies, queries and path parameters from the OpenAPI document', () => {
    expect(ROUTES.filter((route) => route.body).length).toBeGreaterThan(5);
    expect(ROUTES.filter((route) => route.queryParameters.length > 0).length).toBeGreaterThan(3);
    expect(ROUTES.filter((route) => route.pathParameters.length > 0).length).toBeGreaterThan(5);
  });

  for (const route of ROUTES) {
    it(`${routeName(route)} answers well-formed requests within the contract`, async () => {
      await fc.assert(fc.asyncProperty(wellFormedRequest(route, scopeOf(sandbox, false)), async (parts) => {
        const { request, response } = await send(route, sandbox, parts);
        expectAcceptedAsWellFormed(request, response);
      }), { seed: fuzzSettings.seed, numRuns: WELL_FORMED_RUNS });
    }, fuzzSettings.timeoutFor(WELL_FORMED_RUNS, 50));

    it(`${routeName(route)} refuses mutated requests and leaves the target unchanged`, async () => {
      // The snapshot after a refusal is the one before the next case, as nothing else runs in between.
      let unchangedSince: Record<string, unknown> | undefined;
      await fc.assert(fc.asyncProperty(mutatedRequest(route, scopeOf(target, true)), async (mutation) => {
        const before = unchangedSince ?? await snapshotOf(t, target);
        unchangedSince = undefined;
        const { request, response } = await send(route, target, mutation.parts);
        if (mutation.refusal) expectRefusal(request, response, mutation.refusal, mutation.what);
        else expectWithinContract(request, response, { what: mutation.what });
        if (response.status < 400) return;
        const after = await snapshotOf(t, target);
        const changed = Object.keys(before).filter((part) => !isDeepStrictEqual(before[part], after[part]));
        expect(changed, `the target changed (${changed.join(', ')}) after a refused request: ${mutation.what}\n${describeRequest(request)}`).toEqual([]);
        unchangedSince = after;
      }), { seed: fuzzSettings.seed, numRuns: MUTATED_RUNS });
    }, fuzzSettings.timeoutFor(MUTATED_RUNS, 150));
  }

  it('leaves every balance consistent with its movements (operator ledger check)', async () => {
    const check = await t.request('GET', '/admin/v1/ledger/check');
    expect(check.status).toBe(200);
    expect(check.body, check.text).toMatchObject({ ok: true, violations: [] });
  });
});
