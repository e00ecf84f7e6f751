// The owner's API keys page over HTTP (docs/console.md#keys-webhooks-and-events): a merchant key and a terminal
// key made through the form are shown once and work against the API as their kind says (a terminal key makes
// a QR and cannot read the balance); the list names keys by prefix, never the key; a double submit of one form
// makes one key (the form's idempotency key; the second answer names the key without its secret); a revoke
// takes effect at once (401); another merchant's prefix is not found and stays live; CSRF, cashier and bad
// input refusals change nothing. On PGlite, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { createQr } from '../qr/qr-helpers.ts';
import { ConsoleBrowser, ownersAndCashier } from './helpers.ts';

describe.each(databaseKinds())('the console\'s API keys page on %s', (kind) => {
  let t: TestApp;
  let a: { businessCode: number; apiKey: string; keyPrefix: string };
  let b: { businessCode: number; apiKey: string; keyPrefix: string };
  let ownerA: ConsoleBrowser;
  let cashierA: ConsoleBrowser;
  let ownerB: ConsoleBrowser;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    a = await t.createMerchant({ name: 'Café A' });
    b = await t.createMerchant({ name: 'Tienda B' });
    ({ ownerA, cashierA, ownerB } = await ownersAndCashier(t, 'keys', a, b));
  });
  afterAll(() => t?.close());

  const keyCount = async (businessCode: number) =>
    (await t.db.query<{ n: number }>('select count(*)::int as n from api_keys where business_code = $1', [businessCode])).rows[0]!.n;
  const formKeyOf = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1]!;
  const shownKeyOf = (html: string) => /id="new-key"[^>]*>([^<]+)</.exec(html)?.[1] ?? null;
  /** Opens the keys page and creates a key of `kind`; the answer and the key shown. */
  const createKey = async (browser: ConsoleBrowser, keyKind: string) => {
    const page = await browser.get('/console/keys');
    expect(page.status).toBe(200);
    const answer = await browser.post('/console/keys', { kind: keyKind, idempotency_key: formKeyOf(page.text) });
    return { answer, key: shownKeyOf(answer.text) };
  };
  const balanceStatus = async (apiKey: string) => (await t.request('GET', '/api/v2/balance', { apiKey })).status;

  it('creates a merchant key, shown once with its warning and no language switch; it uses the whole API; the list names it by prefix only', async () => {
    const { answer, key } = await createKey(ownerA, 'merchant');
    expect(answer.status).toBe(201);
    expect(key).toMatch(/^mk_test_[0-9A-Za-z]{32}$/);
    expect(answer.text).toContain('Guárdala como una contraseña');
    expect(answer.text).not.toContain('hreflang');
    expect(answer.headers.get('cache-control')).toContain('no-store');
    expect(await balanceStatus(key!)).toBe(200);

    const list = await ownerA.get('/console/keys');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(key!);
    const prefix = key!.slice(0, 'mk_test_'.length + 8);
    expect(list.text).toContain(`data-key="${prefix}"`);
    expect(list.text).toContain('Clave de comercio');
    expect(list.text).toContain('Pruebas (sandbox)');
    // The operator's first key is listed too, with its use.
    expect(list.text).toContain(`data-key="${a.keyPrefix}"`);
    expect(list.text).not.toContain(a.apiKey);
  });

  it('creates a terminal key: it makes a QR and cannot read the balance (403 KEY_SCOPE_INSUFFICIENT)', async () => {
    const { answer, key } = await createKey(ownerA, 'terminal');
    expect(answer.status).toBe(201);
    expect(key).toMatch(/^tk_test_[0-9A-Za-z]{32}$/);
    const qr = await createQr(t, { businessCode: a.businessCode, apiKey: key! }, { amount: 12.5 });
    expect(qr.id).toEqual(expect.any(String));
    const balance = await t.request('GET', '/api/v2/balance', { apiKey: key! });
    expect(balance.status).toBe(403);
    expect(balance.body.code).toBe('KEY_SCOPE_INSUFFICIENT');
    const list = await ownerA.get('/console/keys');
    expect(list.text).toContain(`data-key="${key!.slice(0, 16)}"`);
    expect(list.text).toContain('Clave de terminal');
  });

  it('makes one key for a double submit of one form (sequential and concurrent): the second answer names the key, without it', async () => {
    const page = await ownerA.get('/console/keys');
    const form = { kind: 'merchant', idempotency_key: formKeyOf(page.text) };
    const before = await keyCount(a.businessCode);
    const first = await ownerA.post('/console/keys', form);
    const second = await ownerA.post('/console/keys', form);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    const key = shownKeyOf(first.text)!;
    expect(shownKeyOf(second.text)).toBeNull();
    expect(second.text).not.toContain(key);
    expect(second.text).toContain(key.slice(0, 16));
    expect(await keyCount(a.businessCode)).toBe(before + 1);

    const again = await ownerA.get('/console/keys');
    const concurrent = { kind: 'terminal', idempotency_key: formKeyOf(again.text) };
    const answers = await Promise.all([ownerA.post('/console/keys', concurrent), ownerA.post('/console/keys', concurrent), ownerA.post('/console/keys', concurrent)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 201]);
    expect(answers.filter((answer) => shownKeyOf(answer.text) !== null)).toHaveLength(1);
    expect(await keyCount(a.businessCode)).toBe(before + 2);
  });

  it('revokes a key after a confirmation: the API refuses it at once (401), the list says revoked, a second revoke is 404', async () => {
    const { key } = await createKey(ownerA, 'merchant');
    const prefix = key!.slice(0, 16);
    expect(await balanceStatus(key!)).toBe(200);
    const confirm = await ownerA.get(`/console/keys/${prefix}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`¿Revocar la clave ${prefix}?`);
    expect(confirm.text).toContain('id="revoke-button"');
    expect(await balanceStatus(key!)).toBe(200); // the confirmation page revokes nothing
    const revoked = await ownerA.post(`/console/keys/${prefix}/revoke`);
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe('/console/keys');
    expect(await balanceStatus(key!)).toBe(401);
    const list = await ownerA.get('/console/keys');
    expect(list.text).toMatch(new RegExp(`data-key="${prefix}"[\\s\\S]*?data-state="revoked"`));
    expect(list.text).not.toContain(`/console/keys/${prefix}/revoke`);
    expect((await ownerA.post(`/console/keys/${prefix}/revoke`)).status).toBe(404);
    expect((await ownerA.get(`/console/keys/${prefix}/revoke`)).status).toBe(404);
  });

  it('does not find another merchant\'s key: its confirmation and its revoke are 404, and it stays live', async () => {
    const { key } = await createKey(ownerA, 'merchant');
    const prefix = key!.slice(0, 16);
    await ownerB.get('/console/keys');
    const confirm = await ownerB.get(`/console/keys/${prefix}/revoke`);
    expect(confirm.status).toBe(404);
    const revoke = await ownerB.post(`/console/keys/${prefix}/revoke`);
    expect(revoke.status).toBe(404);
    expect(await balanceStatus(key!)).toBe(200);
    expect((await ownerB.get('/console/keys')).text).not.toContain(prefix);
    // Nor the operator's first key of the other merchant.
    expect((await ownerB.post(`/console/keys/${a.keyPrefix}/revoke`)).status).toBe(404);
    expect(await balanceStatus(a.apiKey)).toBe(200);
  });

  it('refuses a form without its CSRF field (403): no key made, none revoked', async () => {
    const page = await ownerA.get('/console/keys');
    const before = await keyCount(a.businessCode);
    const create = await ownerA.postRaw('/console/keys', { kind: 'merchant', idempotency_key: formKeyOf(page.text) });
    expect(create.status).toBe(403);
    expect(await keyCount(a.businessCode)).toBe(before);
    const { key } = await createKey(ownerA, 'merchant');
    const prefix = key!.slice(0, 16);
    const revoke = await ownerA.postRaw(`/console/keys/${prefix}/revoke`, { csrf_token: 'not-the-token' });
    expect(revoke.status).toBe(403);
    expect(await balanceStatus(key!)).toBe(200);
  });

  it('is the owner\'s: a cashier gets 403 on the page, the create and the revoke, and changes nothing', async () => {
    const before = await keyCount(a.businessCode);
    expect((await cashierA.get('/console/keys')).status).toBe(403);
    await cashierA.get('/console/terminal');
    expect((await cashierA.post('/console/keys', { kind: 'merchant', idempotency_key: crypto.randomUUID() })).status).toBe(403);
    expect((await cashierA.post(`/console/keys/${a.keyPrefix}/revoke`)).status).toBe(403);
    expect(await keyCount(a.businessCode)).toBe(before);
    expect(await balanceStatus(a.apiKey)).toBe(200);
    // Nor is the section offered to a cashier.
    expect((await cashierA.get('/console')).text).not.toContain('/console/keys');
    expect((await ownerA.get('/console')).text).toContain('data-section="/console/keys"');
  });

  it('refuses a bad form with 422 (a partner key, no form key, a key altered) and hostile prefixes with a page, never a 5xx; nothing made', async () => {
    const before = await keyCount(a.businessCode);
    const page = await ownerA.get('/console/keys');
    for (const form of <Array<Record<string, string>>>[
      { kind: 'partner', idempotency_key: formKeyOf(page.text) },
      { kind: '', idempotency_key: formKeyOf(page.text) },
      { kind: 'merchant' },
      { kind: 'merchant', idempotency_key: 'not-a-uuid' },
      { kind: 'merchant\u0000', idempotency_key: formKeyOf(page.text) },
    ]) {
      const answer = await ownerA.post('/console/keys', form);
      expect(answer.status).toBe(422);
      expect(answer.text).toContain('id="form-alert"');
    }
    expect(await keyCount(a.businessCode)).toBe(before);
    for (const prefix of ['%00', 'x'.repeat(65), '..%2F..%2Fadmin', encodeURIComponent('<script>')]) {
      const answer = await ownerA.get(`/console/keys/${prefix}/revoke`);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      const posted = await ownerA.post(`/console/keys/${prefix}/revoke`);
      expect(posted.status).toBeGreaterThanOrEqual(400);
      expect(posted.status).toBeLessThan(500);
    }
  });

  it('answers in English with ?lang=en', async () => {
    const page = await ownerA.get('/console/keys?lang=en');
    expect(page.text).toContain('<h1 id="keys-heading">API keys</h1>');
    expect(page.text).toContain('Terminal key');
  });
});
