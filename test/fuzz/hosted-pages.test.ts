// Property-based fuzzing of the hosted forms, which the OpenAPI document leaves out (they are `hide: true`):
// the sandbox pay form (POST /pay/{token}), the onboarding registration form (POST /onboarding/{token},
// behind the flow cookie and its CSRF field), and the merchant console's sign-in and cashier-invite forms
// (behind their cookies and CSRF fields). Field values are drawn from valid ones, hostile text, U+0000,
// long text and broken percent-encodings, sent as forms, as JSON and as other media types.
//
// Every answer: never a 5xx, an X-Request-Id, and a 4xx either an HTML page or the JSON error shape.
// docs/api-reference.md (Request rules, Hostile input): the pages take form posts only (a JSON body → 415); a field with U+0000
// gets the form's error message (422). A refused post changes nothing: the target merchant reads the same,
// and a refused registration leaves its intent at the form step.
//
// Bounded by default like api.test.ts; FUZZ_RUNS / FUZZ_SEED (settings.ts) make a longer run.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { ConsoleBrowser, newOwner } from '../console/helpers.ts';
import { FlowBrowser, newIntent, tokenOf as intentTokenOf } from '../onboarding/helpers.ts';
import { expectWithinContract } from './contract.ts';
import { describeRequest, describeResponse, HttpClient, percentEncode, type HttpRequest, type HttpResponse } from './http.ts';
import { amountForms, hostileText } from './json-schema-arbitrary.ts';
import { fuzzSettings } from './settings.ts';
import { buildWorld, snapshotOf, type World } from './world.ts';

const FORM_RUNS = fuzzSettings.runs(10);
const FORM_BODY_LIMIT_BYTES = 8 * 1024;
const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** A form field's value as a browser would never send it: hostile text, U+0000, long text, broken percent-encodings. */
const brokenValue = (valid: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.oneof(
  hostileText({ maxLength: 300 }).map(percentEncode),
  fc.tuple(valid, hostileText({ maxLength: 5 })).map(([text, tail]) => percentEncode(`${text}\0${tail}`)),
  fc.integer({ min: 200, max: 3000 }).map((length) => 'x'.repeat(length)),
  fc.constantFrom('', '%', '%G1', '%FF', '%C0%80', '%ED%A0%80', '+', '%2B', 'a%00b', '%E2%80%AE'),
);

const decoded = (encoded: string) => new URLSearchParams(`v=${encoded}`).get('v') ?? '';

/** A form: the fields by name, as sent (percent-encoded); a missing field is left out. */
type Form = Record<string, string>;

/**
 * Forms of `fields` (each given by its valid values): entirely valid, valid but for one field broken or
 * left out, or every field broken or left out; now and then with fields the form does not have.
 */
function formOf(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<Form> {
  const names = Object.keys(fields);
  const valid = fc.record(Object.fromEntries(names.map((name) => [name, fields[name]!.map(percentEncode)])));
  const oneBroken = fc.tuple(valid, fc.constantFrom(...names)).chain(([form, name]) => fc.option(brokenValue(fields[name]!), { nil: undefined })
    .map((value) => {
      const { [name]: _replaced, ...rest } = form;
      return value === undefined ? rest : { ...rest, [name]: value };
    }));
  const allBroken = fc.record(Object.fromEntries(names.map((name) => [name, brokenValue(fields[name]!)])), { requiredKeys: [] });
  const extra = fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'csrf_token[]'), hostileText({ minLength: 1, maxLength: 10 })),
    hostileText({ maxLength: 20 }).map(percentEncode), { minKeys: 1, maxKeys: 2, noNullPrototype: true });
  return fc.tuple(
    fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: oneBroken }, { weight: 1, arbitrary: allBroken }),
    fc.option(extra, { nil: undefined, freq: 4 }),
  ).map(([form, extras]) => ({ ...extras, ...form }) as Form);
}

function formText(form: Form): string {
  return Object.entries(form).map(([name, value]) => `${percentEncode(name)}=${value}`).join('&');
}

/** How the form travels: as a form (most of the time), or as JSON or another media type the page must refuse. */
type Encoding = 'form' | 'json' | 'deep-json' | 'text/plain' | 'multipart/form-data; boundary=x' | 'none';
const encoding: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Encoding>('form') },
  { weight: 1, arbitrary: fc.constantFrom<Encoding>('json', 'deep-json', 'text/plain', 'multipart/form-data; boundary=x', 'none') },
);

function bodyOf(form: Form, how: Encoding): { body: string; contentType?: string } {
  switch (how) {
    case 'form': return { body: formText(form), contentType: FORM_MEDIA_TYPE };
    case 'json': return { body: JSON.stringify(Object.fromEntries(Object.entries(form).map(([name, value]) => [name, decoded(value)]))), contentType: 'application/json' };
    case 'deep-json': return { body: '['.repeat(5000) + ']'.repeat(5000), contentType: 'application/json' };
    case 'none': return { body: formText(form) };
    default: return { body: formText(form), contentType: how };
  }
}

/** The refusal the contract promises for how the form was sent, before any field is looked at; null when it is a form. */
function mediaRefusal(how: Encoding, bodyBytes: number): readonly number[] | null {
  if (how === 'deep-json') return [400, 415];
  if (how !== 'form') return bodyBytes === 0 ? null : [415];
  return bodyBytes > FORM_BODY_LIMIT_BYTES ? [413] : null;
}

function expectStatusIn(request: HttpRequest, response: HttpResponse, statuses: readonly number[], why: string): void {
  expect(statuses, `${why}: expected ${statuses.join(' or ')}\n--- request\n${describeRequest(request)}\n--- response\n${describeResponse(response)}`).toContain(response.status);
}

/** The sandbox pay form's fields (src/qr/pages/routes.ts), each with valid values. */
const payFormFields = {
  source_bank: fc.oneof(fc.constant('Banco Unión'), hostileText({ minLength: 1, maxLength: 100 })),
  account_number: fc.stringMatching(/^[0-9]{4,30}$/),
  account_titular: hostileText({ minLength: 1, maxLength: 140 }),
  amount: fc.integer({ min: 10, max: 10_000_000 }).chain((centavos) => fc.constantFrom(...amountForms(centavos).map(String))),
};
const PAY_FORM_FIELDS = Object.keys(payFormFields);

/** The registration form's fields (src/onboarding/pages/registration-form.ts), each with valid values. */
const registrationFields = {
  legal_name: hostileText({ minLength: 1, maxLength: 200 }),
  trade_name: hostileText({ minLength: 1, maxLength: 200 }),
  tax_id: fc.stringMatching(/^[0-9]{5,15}$/),
  email: fc.emailAddress(),
  phone: fc.constantFrom('+591 71234567', '71234567', '(591) 7123-4567', '+591-2-2441234'),
  city: hostileText({ minLength: 1, maxLength: 100 }),
  mcc: fc.oneof(fc.constant(''), fc.stringMatching(/^[0-9]{4}$/)),
  bank_code: fc.integer({ min: 1001, max: 1014 }).map(String),
  account_number: fc.stringMatching(/^[0-9-]{0,33}[0-9]$/),
  account_holder: hostileText({ minLength: 1, maxLength: 100 }),
};
const REGISTRATION_FIELDS = Object.keys(registrationFields);

describe.each(databaseKinds())('fuzzing the hosted forms on %s', (kind) => {
  let t: TestApp;
  let client: HttpClient;
  let target: World;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    client = new HttpClient(t.baseUrl);
    target = await buildWorld(t, 'Target');
  });
  afterAll(async () => {
    client?.close();
    await t?.close();
  });

  const post = (path: string, body: { body: string; contentType?: string }, headers: Record<string, string> = {}) => {
    const request: HttpRequest = {
      method: 'POST', target: path, body: body.body,
      headers: { accept: 'text/html', ...headers, ...(body.contentType === undefined ? {} : { 'content-type': body.contentType }) },
    };
    return client.send(request).then((response) => ({ request, response }));
  };

  it('the sandbox pay form answers any post within the contract, and a refused one changes nothing', async () => {
    // The target's open QR (multi-use, payer chooses the amount) takes payments; its paid and canceled QRs do not.
    const [paidToken, openToken, canceledToken] = target.resources.payToken as [string, string, string];
    const payForm = formOf(payFormFields);
    const token = fc.oneof(
      { weight: 6, arbitrary: fc.constant(openToken) },
      { weight: 1, arbitrary: fc.constantFrom(paidToken, canceledToken, 'AAAAAAAAAAAAAAAAAAAAAA', `${openToken}%00`, 'x'.repeat(300)) },
    );
    let unchangedSince: Record<string, unknown> | undefined;
    await fc.assert(fc.asyncProperty(token, payForm, encoding, async (payToken, form, how) => {
      const before = unchangedSince ?? await snapshotOf(t, target);
      unchangedSince = undefined;
      const body = bodyOf(form, how);
      const { request, response } = await post(`/pay/${payToken}`, body);
      expectWithinContract(request, response, { htmlErrorsAllowed: true });
      const refusedMedia = mediaRefusal(how, Buffer.byteLength(body.body));
      // A token that names no QR is a 404 whatever the body, which is not even read when the path itself is invalid.
      const unknownToken = !target.resources.payToken.includes(payToken);
      if (refusedMedia) expectStatusIn(request, response, unknownToken ? [...refusedMedia, 404] : refusedMedia, 'the pay form takes form posts only, up to 8 KiB');
      else if (unknownToken) expectStatusIn(request, response, [404], 'a token that names no QR');
      else if (payToken === openToken && PAY_FORM_FIELDS.some((name) => decoded(form[name] ?? '').includes('\0'))) {
        expectStatusIn(request, response, [422], 'a field with U+0000 gets the form\'s error message');
      }
      if (response.status < 400) return;
      const after = await snapshotOf(t, target);
      const changed = Object.keys(before).filter((part) => !isDeepStrictEqual(before[part], after[part]));
      expect(changed, `the target changed (${changed.join(', ')}) after a refused pay form\n${describeRequest(request)}`).toEqual([]);
      unchangedSince = after;
    }), { seed: fuzzSettings.seed, numRuns: FORM_RUNS });
  }, fuzzSettings.timeoutFor(FORM_RUNS, 150));

  it('the onboarding registration form answers any post within the contract, and a refused one leaves the intent at the form', async () => {
    const partner = { partnerId: target.partner.partnerId, masterKey: target.partner.masterKey };
    const registrationForm = formOf(registrationFields);
    /** Whether the post carries the browser's flow cookie and CSRF field; mostly it does. */
    const credentials = fc.oneof(
      { weight: 4, arbitrary: fc.constant('both' as const) },
      { weight: 1, arbitrary: fc.constantFrom('no cookie' as const, 'no csrf' as const, 'wrong csrf' as const, 'garbage cookie' as const) },
    );

    // An open intent at its form step; replaced once a registration goes through.
    let flow: { code: string; browser: FlowBrowser } | undefined;
    const openFlow = async () => {
      const intent = await newIntent(t, partner, { metadata: { fuzz: randomUUID() } });
      const browser = new FlowBrowser(t, intentTokenOf(intent));
      await browser.get();
      return { code: intent.code, browser };
    };
    /** What a refused post must leave as it was: the intent as the partner reads it, and the flow still at its form. */
    const stateOf = async ({ code, browser }: { code: string; browser: FlowBrowser }) => {
      const intent = await t.request('GET', `/api/v2/onboarding/intent/${code}`, { apiKey: partner.masterKey });
      const page = await browser.get();
      return { intent: intent.body, step: page.status === 200 && page.text.includes('name="legal_name"') ? 'form' : `status ${page.status}` };
    };

    await fc.assert(fc.asyncProperty(registrationForm, credentials, encoding, async (form, sent, how) => {
      flow ??= await openFlow();
      const before = await stateOf(flow);
      const { browser } = flow;
      const csrf = sent === 'no csrf' ? undefined : sent === 'wrong csrf' ? 'A'.repeat(43) : browser.csrf!;
      const withCsrf = csrf === undefined ? form : { ...form, csrf_token: percentEncode(csrf) };
      const cookie = sent === 'no cookie' ? undefined : sent === 'garbage cookie' ? 'mps_onboarding=%00; x=;;' : browser.cookie!;
      const body = bodyOf(withCsrf, how);
      const { request, response } = await post(`/onboarding/${browser.token}`, body, cookie === undefined ? {} : { cookie });
      expectWithinContract(request, response, { htmlErrorsAllowed: true });
      const refusedMedia = mediaRefusal(how, Buffer.byteLength(body.body));
      if (refusedMedia) expectStatusIn(request, response, refusedMedia, 'the registration form takes form posts only, up to 8 KiB');
      else if (sent !== 'both') expectStatusIn(request, response, [403], 'a post without the flow cookie and its CSRF field');
      else if (REGISTRATION_FIELDS.some((name) => decoded(form[name] ?? '').includes('\0'))) {
        expectStatusIn(request, response, [422], 'a field with U+0000 gets the form\'s error message');
      }
      if (response.status < 400) {
        flow = undefined; // registered (or on to the payment step): the next case needs a fresh intent
        return;
      }
      const after = await stateOf(flow);
      expect(after, `a refused registration changed the intent\n${describeRequest(request)}`).toEqual(before);
    }), { seed: fuzzSettings.seed, numRuns: FORM_RUNS });
  }, fuzzSettings.timeoutFor(FORM_RUNS, 150));

  it('the console\'s sign-in and invite forms answer any post within the contract, and a refused one changes nothing', async () => {
    const ownerEmail = `fuzz.owner.${randomUUID()}@example.com`;
    const owner = await newOwner(t, target.merchant.businessCode, ownerEmail, 'fuzz owner password');
    await owner.get('/console/users');
    const visitor = new ConsoleBrowser(t);
    await visitor.get('/console/sign-in');
    const cookieOf = (browser: ConsoleBrowser) => [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const signInForm = formOf({ email: fc.oneof(fc.constant(ownerEmail), fc.emailAddress()), password: hostileText({ minLength: 1, maxLength: 60 }) });
    const inviteForm = formOf({ email: fc.emailAddress() });
    const which = fc.oneof(
      fc.tuple(fc.constant('sign-in' as const), signInForm),
      fc.tuple(fc.constant('invite' as const), inviteForm),
    );
    const credentials = fc.oneof(
      { weight: 4, arbitrary: fc.constant('both' as const) },
      { weight: 1, arbitrary: fc.constantFrom('no cookie' as const, 'no csrf' as const, 'wrong csrf' as const) },
    );
    /** What a refused post must leave as it was: the console's users, invitations and sessions. */
    const stateOf = async () => (await t.db.query<{ users: number; invitations: number; sessions: number }>(
      `select (select count(*)::int from console_users) as users, (select count(*)::int from console_invitations) as invitations,
              (select count(*)::int from console_sessions where ended_at is null) as sessions`)).rows[0];

    await fc.assert(fc.asyncProperty(which, credentials, encoding, async ([kind, form], sent, how) => {
      const before = await stateOf();
      const browser = kind === 'sign-in' ? visitor : owner;
      const csrf = sent === 'no csrf' ? undefined : sent === 'wrong csrf' ? 'A'.repeat(43) : browser.csrf!;
      const withCsrf = csrf === undefined ? form : { ...form, csrf_token: percentEncode(csrf) };
      const body = bodyOf(withCsrf, how);
      const path = kind === 'sign-in' ? '/console/sign-in' : '/console/users';
      const { request, response } = await post(path, body, sent === 'no cookie' ? {} : { cookie: cookieOf(browser) });
      expectWithinContract(request, response, { htmlErrorsAllowed: true });
      const refusedMedia = mediaRefusal(how, Buffer.byteLength(body.body));
      if (refusedMedia) expectStatusIn(request, response, refusedMedia, 'the console\'s forms take form posts only, up to 8 KiB');
      // Without the session cookie the invite form is a signed-out visit: to the sign-in page.
      else if (sent === 'no cookie' && kind === 'invite') expectStatusIn(request, response, [303], 'a post without a session');
      else if (sent !== 'both') expectStatusIn(request, response, [403], 'a post without its cookie or CSRF field');
      else if (Object.values(form).some((value) => decoded(value).includes('\0'))) {
        expectStatusIn(request, response, [422], 'a field with U+0000 gets the form\'s error message');
      }
      else expectStatusIn(request, response, kind === 'sign-in' ? [303, 401, 422, 429] : [201, 409, 422], 'a well-sent form');
      if (response.status < 400 && !(sent === 'no cookie' && kind === 'invite')) return;
      expect(await stateOf(), `a refused console form changed users, invitations or sessions\n${describeRequest(request)}`).toEqual(before);
    }), { seed: fuzzSettings.seed, numRuns: FORM_RUNS });
  }, fuzzSettings.timeoutFor(FORM_RUNS, 150));

  it('leaves every balance consistent with its movements (operator ledger check)', async () => {
    const check = await t.request('GET', '/admin/v1/ledger/check');
    expect(check.status).toBe(200);
    expect(check.body, check.text).toMatchObject({ ok: true, violations: [] });
  });
});
