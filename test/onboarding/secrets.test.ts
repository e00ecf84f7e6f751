// What the onboarding flow keeps secret (docs/onboarding.md#5-decisions, "Secrets at rest"): the flow token is never in
// the database in clear — not on the intent, not in the stored idempotent answer — yet a replay still
// answers the same url; and the done page's key goes only to the browser the form post bound, never to a
// flow cookie planted before the form (session fixation).
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import * as onboarding from '../../src/onboarding/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, openEmptyDatabase } from '../helpers/databases.ts';
import { createIntent, FlowBrowser, tokenOf, VALID_FORM, type Partner } from './helpers.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const keyOf = (html: string) => /mk_test_[0-9A-Za-z]{32}/.exec(html)?.[0] ?? null;

describe.each(databaseKinds())('onboarding secrets on %s', (kind) => {
  let t: TestApp;
  let partner: Partner;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
    partner = await t.createPartner();
  });
  afterAll(() => t.close());

  /** Rows of `table` whose text holds `needle` anywhere (every column, as JSON). */
  const rowsHolding = async (table: 'onboarding_intents' | 'idempotency_keys', needle: string) => {
    const { rows } = await t.db.query<{ n: number }>(
      `select count(*)::int8 as n from ${table} r where strpos(row_to_json(r)::text, $1::text) > 0`, [needle]);
    return Number(rows[0]!.n);
  };

  it('keeps the flow token only hashed and sealed; a replay answers the same url, and the link works', async () => {
    const key = randomUUID();
    const first = await createIntent(t, partner, { metadata: { customer: 'cus_9' } }, key);
    expect(first.status).toBe(201);
    expect(first.body.url).toMatch(/^https:\/\/pay\.example\.com\/onboarding\/[0-9A-Za-z]{32}$/);
    const token = tokenOf(first.body);

    expect(await rowsHolding('onboarding_intents', token)).toBe(0);
    expect(await rowsHolding('idempotency_keys', token)).toBe(0);
    expect(await rowsHolding('idempotency_keys', first.body.code)).toBe(1); // the answer is stored, without its url
    const { rows } = await t.db.query<{ token_hash: string; token_sealed: string }>(
      'select token_hash, token_sealed from onboarding_intents where code = $1::text', [first.body.code]);
    expect(rows[0]!.token_hash).toBe(sha256(token));
    expect(rows[0]!.token_sealed).toMatch(/^v1\.test1\./);

    const replay = await createIntent(t, partner, { metadata: { customer: 'cus_9' } }, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(Object.keys(replay.body)).toEqual(['code', 'url', 'expires_at']);

    const browser = new FlowBrowser(t, token);
    expect((await browser.get()).status).toBe(200);
    expect((await browser.register()).status).toBe(303);
    expect((await browser.get()).text).toContain('csrf_token');
    expect(await rowsHolding('onboarding_intents', token)).toBe(0);
  });

  it('a sealed token opens on its own intent only: copied onto another, the replay fails and shows nothing', async () => {
    const key = randomUUID();
    const victim = (await createIntent(t, partner)).body;
    const other = (await createIntent(t, partner, {}, key)).body;
    await t.db.query(
      `update onboarding_intents set token_sealed = (select token_sealed from onboarding_intents where code = $1::text) where code = $2::text`,
      [victim.code, other.code]);
    const replay = await createIntent(t, partner, {}, key);
    expect(replay.status).toBe(500);
    expect(replay.text).not.toContain(tokenOf(victim));
  });

  it('a flow cookie planted before the form does not reach the done page\'s key; the browser that posted does', async () => {
    const intent = (await createIntent(t, partner)).body;
    const planted = `mps_onboarding=${'P'.repeat(32)}`; // well-formed, and known to whoever planted it
    const merchant = new FlowBrowser(t, tokenOf(intent));
    merchant.cookie = planted;
    const form = await merchant.get();
    expect(form.status).toBe(200);
    expect(form.headers.get('set-cookie')).toBeNull(); // the planted value passes the form's CSRF check…
    const posted = await merchant.post('', VALID_FORM);
    expect(posted.status).toBe(303);
    // …but the post binds the browser with a new secret of the service's, set over the planted one.
    expect(posted.headers.get('set-cookie')).toMatch(new RegExp(`^mps_onboarding=[0-9A-Za-z]{32}; Path=/onboarding/${tokenOf(intent)};`));
    expect(merchant.cookie).not.toBe(planted);
    await merchant.get();
    const paid = await merchant.post('/simulate-payment');
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`/onboarding/${tokenOf(intent)}/done`);

    const attacker = new FlowBrowser(t, tokenOf(intent));
    attacker.cookie = planted;
    const stolen = await attacker.get('/done');
    expect(stolen.status).toBe(410);
    expect(keyOf(stolen.text)).toBeNull();
    const done = await merchant.get('/done');
    expect(done.status).toBe(200);
    expect(keyOf(done.text)).toMatch(/^mk_test_/);
  });
});

describe.each(databaseKinds())('migration 015 on %s', (kind) => {
  it('hashes the tokens of existing intents with sha256() and clears them; the link still finds its intent', async () => {
    const empty = await openEmptyDatabase(kind);
    try {
      const migrations = loadMigrations();
      await migrate(empty.db, migrations.filter((m) => m.version < 15));
      const token = 'Tok3nOfAnIntentMadeBefore015xyzA';
      const { rows } = await empty.db.query<{ id: number }>(`insert into partners (name) values ('Old partner') returning id`);
      await empty.db.query(
        `insert into onboarding_intents (code, partner_id, token, expires_at, created_at)
         values ('onb_AAAAAAAAAAAAAAAAAAAAAA', $1::bigint, $2::text, now() + interval '1 hour', now())`, [rows[0]!.id, token]);
      await migrate(empty.db, migrations);
      const intent = await empty.db.query<Record<string, unknown>>('select * from onboarding_intents');
      expect(intent.rows[0]).toMatchObject({ code: 'onb_AAAAAAAAAAAAAAAAAAAAAA', token_hash: sha256(token), token_sealed: null });
      expect(intent.rows[0]).toMatchObject({ token: null });
      expect(JSON.stringify(intent.rows[0])).not.toContain(token);
      expect((await onboarding.findIntentByToken(empty.db, token))?.code).toBe('onb_AAAAAAAAAAAAAAAAAAAAAA');
      // A process of the previous version, still running during a rolling deploy, writes the clear column:
      // it is kept only as its hash.
      const later = 'Tok3nWrittenByAnOldProcessAfter0';
      await empty.db.query(
        `insert into onboarding_intents (code, partner_id, token, expires_at, created_at)
         values ('onb_BBBBBBBBBBBBBBBBBBBBBB', $1::bigint, $2::text, now() + interval '1 hour', now())`, [rows[0]!.id, later]);
      const written = await empty.db.query<Record<string, unknown>>(`select * from onboarding_intents where code = 'onb_BBBBBBBBBBBBBBBBBBBBBB'`);
      expect(written.rows[0]).toMatchObject({ token: null, token_hash: sha256(later) });
      expect((await onboarding.findIntentByToken(empty.db, later))?.code).toBe('onb_BBBBBBBBBBBBBBBBBBBBBB');
    } finally {
      await empty.drop();
    }
  }, 120_000);
});
