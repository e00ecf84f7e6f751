// The merchant console's people over HTTP (docs/console.md): invitations by the operator (admin API and
// CLI) and by an owner, accepting one, signing in and out, the lockout on the service's clock, CSRF on every
// form, roles enforced by the guard, sessions an owner ends, and tenancy across two merchants. On PGlite, and
// on PostgreSQL when TEST_DATABASE_URL is set.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { CLI_TIMEOUT_MS, runCli } from '../helpers/cli.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { ConsoleBrowser, inviteByOperator, newCashier, newOwner, tokenOf } from './helpers.ts';

const START = '2026-11-22T16:00:00.000Z';
const HOUR = 3_600_000;

describe.each(databaseKinds())('the merchant console\'s users on %s', (kind) => {
  let t: TestApp;
  let a: number;
  let b: number;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    a = (await t.createMerchant({ name: 'Café A' })).businessCode;
    b = (await t.createMerchant({ name: 'Tienda B' })).businessCode;
  });
  afterAll(() => t?.close());
  // Tests that move the clock put it back: sessions of other tests would otherwise sit idle for days.
  afterEach(() => t.clock.set(START));

  const userRow = async (email: string) =>
    (await t.db.query<{ id: number; status: string; role: string; password_hash: string | null; business_code: number }>(
      'select id, status, role, password_hash, business_code from console_users where lower(email) = lower($1)', [email])).rows[0];
  const userCount = async () => (await t.db.query<{ n: number }>('select count(*)::int as n from console_users')).rows[0]!.n;

  describe('the operator\'s invitation (POST /admin/v1/merchants/{business_code}/users)', () => {
    it('answers 201 with a single-use link under PUBLIC_BASE_URL valid 72 h, shown once; only its SHA-256 is stored', async () => {
      const response = await t.request('POST', `/admin/v1/merchants/${a}/users`, { body: { email: 'Owner.One@Example.com', role: 'owner' } });
      expect(response.status).toBe(201);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.body.user).toMatchObject({ business_code: a, email: 'Owner.One@Example.com', role: 'owner', status: 'invited' });
      expect(response.body.invitation_url).toMatch(new RegExp(`^${t.config.publicBaseUrl}/console/invitations/[0-9A-Za-z]{43}$`));
      expect(response.body.expires_at).toBe(new Date(Date.parse(START) + 72 * HOUR).toISOString());
      const token = tokenOf(response.body.invitation_url);
      const { rows } = await t.db.query<{ token_hash: string }>('select token_hash from console_invitations i join console_users u on u.id = i.user_id where u.email = $1', ['Owner.One@Example.com']);
      expect(rows).toEqual([{ token_hash: createHash('sha256').update(token).digest('hex') }]);
    });

    it('takes owner by default; refuses a bad email or role (422 each field), an unknown merchant (404), an email with an account (409)', async () => {
      const byDefault = await t.request('POST', `/admin/v1/merchants/${a}/users`, { body: { email: 'default.role@example.com' } });
      expect(byDefault.status).toBe(201);
      expect(byDefault.body.user.role).toBe('owner');
      const before = await userCount();
      const bad = await t.request('POST', `/admin/v1/merchants/${a}/users`, { body: { email: 'not-an-email', role: 'boss' } });
      expect(bad.status).toBe(422);
      expect(bad.body.code).toBe('VALIDATION_FAILED');
      expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['email', 'role']);
      expect((await t.request('POST', '/admin/v1/merchants/999999/users', { body: { email: 'x@example.com' } })).status).toBe(404);
      expect((await t.request('POST', `/admin/v1/merchants/${a}/users`, { body: { email: 'x@example.com' }, adminToken: 'wrong' })).status).toBe(401);
      expect(await userCount()).toBe(before);

      await newOwner(t, a, 'taken@example.com');
      for (const merchant of [a, b]) {
        const taken = await t.request('POST', `/admin/v1/merchants/${merchant}/users`, { body: { email: 'TAKEN@example.com' } });
        expect(taken.status).toBe(409);
        expect(taken.body).toMatchObject({ code: 'USER_EXISTS', type: 'business_logic_error' });
      }
    });

    it('sent again to an invitee who has not accepted: a new link, and the old one no longer works', async () => {
      const first = await inviteByOperator(t, a, 'again@example.com');
      const second = await inviteByOperator(t, a, 'again@example.com');
      const browser = new ConsoleBrowser(t);
      const old = await browser.get(`/console/invitations/${first}`);
      expect(old.status).toBe(410);
      expect(old.text).toContain('data-reason="expired"');
      expect((await browser.accept(second, 'a long enough password')).status).toBe(303);
      // invited by another merchant meanwhile? No: the email is now an account.
      expect((await t.request('POST', `/admin/v1/merchants/${b}/users`, { body: { email: 'again@example.com' } })).status).toBe(409);
    });
  });

  describe('the invitation page', () => {
    it('shows whom it invites, refuses a short or mismatched password without using the link, then signs the invitee in', async () => {
      const token = await inviteByOperator(t, a, 'new.owner@example.com');
      const browser = new ConsoleBrowser(t);
      const page = await browser.get(`/console/invitations/${token}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('new.owner@example.com');
      expect(page.text).toContain('Café A');
      expect(page.headers.get('content-security-policy')).toContain("script-src 'nonce-");
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');

      const short = await browser.post(`/console/invitations/${token}`, { password: 'short', password_confirmation: 'short' });
      expect(short.status).toBe(422);
      expect(short.text).toContain('al menos 10 caracteres');
      const mismatch = await browser.post(`/console/invitations/${token}`, { password: 'a long enough password', password_confirmation: 'another long password' });
      expect(mismatch.status).toBe(422);
      expect(mismatch.text).not.toContain('a long enough password');
      expect((await userRow('new.owner@example.com'))!.status).toBe('invited');

      const accepted = await browser.post(`/console/invitations/${token}`, { password: 'a long enough password', password_confirmation: 'a long enough password' });
      expect(accepted.status).toBe(303);
      expect(accepted.location).toBe('/console');
      const home = await browser.get('/console');
      expect(home.status).toBe(200);
      expect(home.text).toContain('Café A');
      expect(home.text).toContain('new.owner@example.com');
      expect(home.text).toContain('propietario');
      const stored = await userRow('new.owner@example.com');
      expect(stored!.status).toBe('active');
      expect(stored!.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
      expect(stored!.password_hash).not.toContain('a long enough password');
    });

    it('works once: a second use, even in another browser, is 410 and changes nothing', async () => {
      const token = await inviteByOperator(t, a, 'once@example.com');
      const first = new ConsoleBrowser(t);
      const second = new ConsoleBrowser(t);
      await first.get(`/console/invitations/${token}`);
      await second.get(`/console/invitations/${token}`);
      expect((await first.post(`/console/invitations/${token}`, { password: 'first password!', password_confirmation: 'first password!' })).status).toBe(303);
      const again = await second.post(`/console/invitations/${token}`, { password: 'second password', password_confirmation: 'second password' });
      expect(again.status).toBe(410);
      expect(again.text).toContain('data-reason="used"');
      expect((await second.get(`/console/invitations/${token}`)).status).toBe(410);
      expect((await new ConsoleBrowser(t).signIn('once@example.com', 'second password')).status).toBe(401);
      expect((await new ConsoleBrowser(t).signIn('once@example.com', 'first password!')).status).toBe(303);
    });

    it('of three acceptances sent at once, exactly one signs in (the database\'s guarded update)', async () => {
      const token = await inviteByOperator(t, a, 'race@example.com');
      const browsers = [new ConsoleBrowser(t), new ConsoleBrowser(t), new ConsoleBrowser(t)];
      for (const browser of browsers) await browser.get(`/console/invitations/${token}`);
      const answers = await Promise.all(browsers.map((browser, i) =>
        browser.post(`/console/invitations/${token}`, { password: `racing password ${i}`, password_confirmation: `racing password ${i}` })));
      expect(answers.map((answer) => answer.status).sort()).toEqual([303, 410, 410]);
      const { rows } = await t.db.query<{ n: number }>("select count(*)::int as n from console_sessions s join console_users u on u.id = s.user_id where u.email = 'race@example.com'");
      expect(rows[0]!.n).toBe(1);
    });

    it('expires after 72 hours on the service\'s clock; an unknown or malformed token is 404', async () => {
      const token = await inviteByOperator(t, a, 'late@example.com');
      const browser = new ConsoleBrowser(t);
      await browser.get(`/console/invitations/${token}`);
      t.clock.advance(72 * HOUR);
      const expired = await browser.post(`/console/invitations/${token}`, { password: 'too late password', password_confirmation: 'too late password' });
      expect(expired.status).toBe(410);
      expect(expired.text).toContain('data-reason="expired"');
      expect((await userRow('late@example.com'))!.status).toBe('invited');
      t.clock.set(START);
      expect((await browser.get(`/console/invitations/${'A'.repeat(43)}`)).status).toBe(404);
      expect((await browser.get('/console/invitations/short')).status).toBe(404);
    });
  });

  describe('signing in', () => {
    it('refuses a wrong password and an unknown email with the same words; a malformed form is 422', async () => {
      await newOwner(t, a, 'signin@example.com', 'the right password');
      const wrong = await new ConsoleBrowser(t).signIn('signin@example.com', 'the wrong password');
      const unknown = await new ConsoleBrowser(t).signIn('nobody@example.com', 'the wrong password');
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      const alert = (text: string) => /id="form-alert"><p class="error">([^<]+)</.exec(text)![1];
      expect(alert(wrong.text)).toBe(alert(unknown.text));
      expect(wrong.text).not.toContain('the wrong password');
      expect((await new ConsoleBrowser(t).signIn('not an email', 'x')).status).toBe(422);
      const right = await new ConsoleBrowser(t).signIn('SIGNIN@example.com', 'the right password');
      expect(right.status).toBe(303);
      expect(right.location).toBe('/console');
    });

    it('locks the account for 15 minutes after 10 wrong passwords in a row — even the right one is refused — then lets it in', async () => {
      await newOwner(t, a, 'locked@example.com', 'the right password');
      const browser = new ConsoleBrowser(t);
      await browser.get('/console/sign-in');
      for (let i = 1; i <= 9; i++) expect((await browser.post('/console/sign-in', { email: 'locked@example.com', password: `wrong ${i}` })).status).toBe(401);
      const tenth = await browser.post('/console/sign-in', { email: 'locked@example.com', password: 'wrong 10' });
      expect(tenth.status).toBe(429);
      expect(tenth.headers.get('retry-after')).toBe('900');
      expect(tenth.text).toContain('15 minutos');
      t.clock.advance(14 * 60_000);
      const stillLocked = await browser.post('/console/sign-in', { email: 'locked@example.com', password: 'the right password' });
      expect(stillLocked.status).toBe(429);
      expect(stillLocked.text).toContain('1 minuto');
      t.clock.advance(60_000);
      expect((await browser.post('/console/sign-in', { email: 'locked@example.com', password: 'the right password' })).status).toBe(303);
      // The count starts again after a success: nine more wrong ones do not lock it.
      const other = new ConsoleBrowser(t);
      await other.get('/console/sign-in');
      for (let i = 1; i <= 9; i++) expect((await other.post('/console/sign-in', { email: 'locked@example.com', password: `again ${i}` })).status).toBe(401);
      expect((await other.post('/console/sign-in', { email: 'locked@example.com', password: 'the right password' })).status).toBe(303);
    });

    it('sets the session in an HttpOnly, SameSite=Strict cookie for /console, without Secure on an http PUBLIC_BASE_URL', async () => {
      await newOwner(t, a, 'cookie@example.com', 'the right password');
      const browser = new ConsoleBrowser(t);
      const form = await browser.get('/console/sign-in');
      expect(form.setCookies).toHaveLength(1);
      expect(form.setCookies[0]).toMatch(/^mps_console_signin=[0-9A-Za-z]{32}; Path=\/console; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
      const signedIn = await browser.post('/console/sign-in', { email: 'cookie@example.com', password: 'the right password' });
      const session = signedIn.setCookies.find((line) => line.startsWith('mps_console='))!;
      expect(session).toMatch(/^mps_console=[0-9A-Za-z]{43}; Path=\/console; Max-Age=604800; HttpOnly; SameSite=Strict$/);
    });

    it('marks the cookies Secure when PUBLIC_BASE_URL is https', async () => {
      const https = await startTestApp({ kind, database: t.database, clock: t.clock, env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
      try {
        await newOwner(t, a, 'secure@example.com', 'the right password');
        const browser = new ConsoleBrowser(https);
        const form = await browser.get('/console/sign-in');
        expect(form.setCookies[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
        const signedIn = await browser.post('/console/sign-in', { email: 'secure@example.com', password: 'the right password' });
        expect(signedIn.status).toBe(303);
        expect(signedIn.setCookies.find((line) => line.startsWith('mps_console='))).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
        const invite = await https.request('POST', `/admin/v1/merchants/${a}/users`, { body: { email: 'via-https@example.com' } });
        expect(invite.body.invitation_url).toMatch(/^https:\/\/pay\.example\.com\/console\/invitations\//);
      } finally {
        await https.close();
      }
    });

    it('sends a browser without a session to the sign-in page, in its language', async () => {
      const browser = new ConsoleBrowser(t);
      for (const page of ['/console', '/console/users', '/console/sessions']) {
        const response = await browser.get(page);
        expect(response.status).toBe(303);
        expect(response.location).toBe('/console/sign-in');
      }
      expect((await browser.get('/console?lang=en')).location).toBe('/console/sign-in?lang=en');
      const english = await browser.get('/console/sign-in?lang=en');
      expect(english.text).toContain('Sign in to your business console');
      expect((await browser.get('/console/sign-in')).text).toContain('Ingresa a la consola de tu negocio');
    });
  });

  describe('CSRF', () => {
    it('refuses a form without its field or with a wrong one (403 page) and changes nothing', async () => {
      const owner = await newOwner(t, a, 'csrf.owner@example.com');
      await owner.get('/console/users');
      let before = await userCount();
      for (const csrf of [undefined, 'A'.repeat(43), `${owner.csrf}x`]) {
        const refused = await owner.postRaw('/console/users', csrf === undefined ? { email: 'csrf.victim@example.com' } : { csrf_token: csrf, email: 'csrf.victim@example.com' });
        expect(refused.status).toBe(403);
        expect(refused.text).toContain('data-reason="csrf"');
        expect(refused.text).toContain('No se cambió nada');
      }
      expect(await userCount()).toBe(before);
      expect((await owner.postRaw('/console/sign-out', {})).status).toBe(403);
      expect((await owner.get('/console')).status).toBe(200); // still signed in
      // Another session's field is refused too: the field is this session's.
      const other = await newOwner(t, a, 'csrf.other@example.com');
      await other.get('/console');
      before = await userCount();
      expect((await owner.postRaw('/console/users', { csrf_token: other.csrf!, email: 'csrf.victim@example.com' })).status).toBe(403);
      // The sign-in form's field comes from its cookie: without the cookie, refused.
      const stranger = new ConsoleBrowser(t);
      await stranger.get('/console/sign-in');
      stranger.cookies.clear();
      expect((await stranger.post('/console/sign-in', { email: 'csrf.owner@example.com', password: 'correct horse battery' })).status).toBe(403);
      expect(await userCount()).toBe(before);
    });

    it('takes form posts only: JSON to a console form is 415', async () => {
      const owner = await newOwner(t, a, 'json@example.com');
      const response = await fetch(`${t.baseUrl}/console/users`, {
        method: 'POST', headers: { 'content-type': 'application/json', cookie: [...owner.cookies].map(([n, v]) => `${n}=${v}`).join('; ') },
        body: JSON.stringify({ csrf_token: owner.csrf, email: 'json.victim@example.com' }),
      });
      expect(response.status).toBe(415);
      expect(await userRow('json.victim@example.com')).toBeUndefined();
    });
  });

  describe('sessions', () => {
    it('sign-out ends the session: its cookie is deleted, and the old token no longer opens anything', async () => {
      const owner = await newOwner(t, a, 'signout@example.com');
      const token = owner.cookies.get('mps_console')!;
      await owner.get('/console');
      const out = await owner.post('/console/sign-out');
      expect(out.status).toBe(303);
      expect(out.location).toBe('/console/sign-in');
      expect(out.setCookies.find((line) => line.startsWith('mps_console='))).toMatch(/^mps_console=; Path=\/console; Max-Age=0; HttpOnly; SameSite=Strict$/);
      const replayed = new ConsoleBrowser(t);
      replayed.cookies.set('mps_console', token);
      expect((await replayed.get('/console')).status).toBe(303);
    });

    it('an owner sees the business\'s open sessions (device, created, last used) and ends another one', async () => {
      const owner = await newOwner(t, a, 'sessions.owner@example.com', 'owner password 1');
      const laptop = new ConsoleBrowser(t, 'Mozilla/5.0 (laptop <b>)');
      expect((await laptop.signIn('sessions.owner@example.com', 'owner password 1')).status).toBe(303);
      const page = await owner.get('/console/sessions');
      expect(page.status).toBe(200);
      expect(page.text).toContain('Mozilla/5.0 (laptop &lt;b&gt;)');
      expect(page.text).toContain('este navegador');
      const { rows } = await t.db.query<{ id: number; user_agent: string }>(
        "select s.id, s.user_agent from console_sessions s join console_users u on u.id = s.user_id where u.email = 'sessions.owner@example.com' and s.ended_at is null order by s.id");
      const laptopSession = rows.find((row) => row.user_agent.includes('laptop'))!;
      expect(page.text).toContain(`data-session="${laptopSession.id}"`);
      const ended = await owner.post(`/console/sessions/${laptopSession.id}/end`);
      expect(ended.status).toBe(303);
      expect(ended.location).toBe('/console/sessions');
      expect((await laptop.get('/console')).status).toBe(303);
      expect((await owner.get('/console/sessions')).text).not.toContain(`data-session="${laptopSession.id}"`);
      expect((await owner.post(`/console/sessions/${laptopSession.id}/end`)).status).toBe(404);
    });

    it('a session unused for 12 hours has ended', async () => {
      const owner = await newOwner(t, a, 'idle@example.com');
      t.clock.advance(12 * HOUR);
      expect((await owner.get('/console')).status).toBe(303);
    });
  });

  describe('roles', () => {
    it('an owner invites a cashier (the link shown once); the cashier reaches the home only, every owner page and form refused by the guard', async () => {
      const owner = await newOwner(t, a, 'roles.owner@example.com');
      const { browser: cashier } = await newCashier(owner, t, 'roles.cashier@example.com');
      expect((await userRow('roles.cashier@example.com'))).toMatchObject({ role: 'cashier', status: 'active', business_code: a });
      const home = await cashier.get('/console');
      expect(home.status).toBe(200);
      expect(home.text).toContain('data-section="/console/terminal"');
      expect(home.text).not.toContain('href="/console/users"');
      for (const page of ['/console/users', '/console/sessions']) {
        const refused = await cashier.get(page);
        expect(refused.status).toBe(403);
        expect(refused.text).toContain('data-reason="forbidden"');
      }
      await cashier.get('/console');
      const before = await userCount();
      expect((await cashier.post('/console/users', { email: 'sneaky@example.com' })).status).toBe(403);
      expect(await userCount()).toBe(before);
      const ownerRow = await t.db.query<{ id: number }>("select id from console_users where email = 'roles.owner@example.com'");
      expect((await cashier.post(`/console/users/${ownerRow.rows[0]!.id}/disable`)).status).toBe(403);
      expect((await cashier.post('/console/sessions/1/end')).status).toBe(403);
      expect((await userRow('roles.owner@example.com'))!.status).toBe('active');
    });

    it('an owner disables a cashier: their sessions end, they cannot sign in, and owners cannot be disabled from the console', async () => {
      const owner = await newOwner(t, a, 'disable.owner@example.com');
      const { browser: cashier } = await newCashier(owner, t, 'disable.cashier@example.com', 'cashier password 1');
      const { rows } = await t.db.query<{ id: number }>("select id from console_users where email in ('disable.cashier@example.com', 'disable.owner@example.com') order by role");
      const [cashierId, ownerId] = [rows[0]!.id, rows[1]!.id];
      await owner.get('/console/users');
      expect((await owner.post(`/console/users/${ownerId}/disable`)).status).toBe(404);
      const disabled = await owner.post(`/console/users/${cashierId}/disable`);
      expect(disabled.status).toBe(303);
      expect((await userRow('disable.cashier@example.com'))!.status).toBe('disabled');
      expect((await cashier.get('/console')).status).toBe(303);
      expect((await new ConsoleBrowser(t).signIn('disable.cashier@example.com', 'cashier password 1')).status).toBe(401);
      const page = await owner.get('/console/users');
      expect(page.text).toMatch(new RegExp(`data-user="${cashierId}"[\\s\\S]*?deshabilitado`));
    });

    it('an owner gives a cashier a new password link: the old password works until the link is used, then only the new one, the cashier\'s other sessions end and a lockout is lifted', async () => {
      const owner = await newOwner(t, a, 'link.owner@example.com');
      const { browser: till } = await newCashier(owner, t, 'link.cashier@example.com', 'the old password');
      const cashierId = (await userRow('link.cashier@example.com'))!.id;
      const page = await owner.get('/console/users');
      expect(page.text).toContain(`action="/console/users/${cashierId}/link"`);
      const first = await owner.post(`/console/users/${cashierId}/link`);
      expect(first.status).toBe(201);
      expect(first.text).toContain('Enlace de acceso listo');
      const second = await owner.post(`/console/users/${cashierId}/link`);
      const linkOf = (html: string) => tokenOf(/id="invitation-link"[^>]*>([^<]+)</.exec(html)![1]!);
      // Nothing changes until the link is used; a newer link withdraws the older one.
      expect((await till.get('/console')).status).toBe(200);
      expect((await new ConsoleBrowser(t).signIn('link.cashier@example.com', 'the old password')).status).toBe(303);
      const phone = new ConsoleBrowser(t);
      expect((await phone.get(`/console/invitations/${linkOf(first.text)}`)).status).toBe(410);
      // Someone guessing locks the account (even the right password is refused); the link still works and unlocks it.
      for (let i = 0; i < 10; i++) await new ConsoleBrowser(t).signIn('link.cashier@example.com', `wrong guess ${i}`);
      expect((await new ConsoleBrowser(t).signIn('link.cashier@example.com', 'the old password')).status).not.toBe(303);
      const form = await phone.get(`/console/invitations/${linkOf(second.text)}`);
      expect(form.status).toBe(200);
      expect(form.text).toContain('Crea una contraseña nueva');
      expect((await phone.accept(linkOf(second.text), 'the new password')).status).toBe(303);
      expect((await phone.get('/console')).status).toBe(200);
      expect((await till.get('/console')).status).toBe(303); // the till's session ended
      expect((await new ConsoleBrowser(t).signIn('link.cashier@example.com', 'the old password')).status).toBe(401);
      expect((await new ConsoleBrowser(t).signIn('link.cashier@example.com', 'the new password')).status).toBe(303);
      expect((await phone.get(`/console/invitations/${linkOf(second.text)}`)).status).toBe(410); // once
    });

    it('a disabled cashier comes back through a new link', async () => {
      const owner = await newOwner(t, a, 'comeback.owner@example.com');
      await newCashier(owner, t, 'comeback.cashier@example.com', 'cashier password 1');
      const cashierId = (await userRow('comeback.cashier@example.com'))!.id;
      await owner.get('/console/users');
      expect((await owner.post(`/console/users/${cashierId}/disable`)).status).toBe(303);
      const link = await owner.post(`/console/users/${cashierId}/link`);
      expect(link.status).toBe(201);
      expect(link.text).toContain('puede volver a ingresar');
      expect((await userRow('comeback.cashier@example.com'))!.status).toBe('disabled'); // until the link is used
      const token = tokenOf(/id="invitation-link"[^>]*>([^<]+)</.exec(link.text)![1]!);
      expect((await new ConsoleBrowser(t).accept(token, 'back at the till')).status).toBe(303);
      expect((await userRow('comeback.cashier@example.com'))!.status).toBe('active');
      expect((await new ConsoleBrowser(t).signIn('comeback.cashier@example.com', 'back at the till')).status).toBe(303);
    });

    it('a password link is for a cashier of the business only: an owner, another merchant\'s cashier, a cashier\'s own request, or a missing CSRF field change nothing', async () => {
      const ownerA = await newOwner(t, a, 'link.tenancy.a@example.com');
      const ownerB = await newOwner(t, b, 'link.tenancy.b@example.com');
      const { browser: cashierB } = await newCashier(ownerB, t, 'link.tenancy.b.cashier@example.com');
      const invitations = async () => (await t.db.query<{ n: number }>('select count(*)::int as n from console_invitations')).rows[0]!.n;
      const before = await invitations();
      const cashierBId = (await userRow('link.tenancy.b.cashier@example.com'))!.id;
      const ownerAId = (await userRow('link.tenancy.a@example.com'))!.id;
      await ownerA.get('/console/users');
      expect((await ownerA.post(`/console/users/${cashierBId}/link`)).status).toBe(404);
      expect((await ownerA.post(`/console/users/${ownerAId}/link`)).status).toBe(404);
      expect((await ownerA.post('/console/users/99999999/link')).status).toBe(404);
      expect((await ownerA.postRaw(`/console/users/${cashierBId}/link`, {})).status).toBe(403);
      await cashierB.get('/console');
      expect((await cashierB.post(`/console/users/${cashierBId}/link`)).status).toBe(403);
      expect(await invitations()).toBe(before);
    });

    it('an owner cannot invite an email that already has an account (409 on the page, nothing created)', async () => {
      const owner = await newOwner(t, a, 'dup.owner@example.com');
      await owner.get('/console/users');
      const before = await userCount();
      const taken = await owner.post('/console/users', { email: 'dup.owner@example.com' });
      expect(taken.status).toBe(409);
      expect(taken.text).toContain('Este correo ya tiene una cuenta');
      const malformed = await owner.post('/console/users', { email: 'nope' });
      expect(malformed.status).toBe(422);
      expect(await userCount()).toBe(before);
    });
  });

  describe('tenancy', () => {
    it('a session of merchant A never reaches merchant B\'s users or sessions', async () => {
      const ownerA = await newOwner(t, a, 'tenant.a@example.com');
      const ownerB = await newOwner(t, b, 'tenant.b@example.com');
      const { browser: cashierB } = await newCashier(ownerB, t, 'tenant.b.cashier@example.com');
      const usersA = await ownerA.get('/console/users');
      expect(usersA.text).toContain('tenant.a@example.com');
      expect(usersA.text).not.toContain('tenant.b');
      expect(usersA.text).toContain('Café A');
      expect(usersA.text).not.toContain('Tienda B');
      expect((await ownerA.get('/console/sessions')).text).not.toContain('tenant.b');

      const ids = async (email: string) => (await t.db.query<{ user_id: number; session_id: number }>(
        'select u.id as user_id, s.id as session_id from console_users u join console_sessions s on s.user_id = u.id where u.email = $1 and s.ended_at is null', [email])).rows[0]!;
      const b1 = await ids('tenant.b.cashier@example.com');
      const b2 = await ids('tenant.b@example.com');
      await ownerA.get('/console/users');
      expect((await ownerA.post(`/console/users/${b1.user_id}/disable`)).status).toBe(404);
      expect((await ownerA.post(`/console/sessions/${b1.session_id}/end`)).status).toBe(404);
      expect((await ownerA.post(`/console/sessions/${b2.session_id}/end`)).status).toBe(404);
      expect((await cashierB.get('/console')).status).toBe(200);
      expect((await ownerB.get('/console/users')).status).toBe(200);
      expect((await userRow('tenant.b.cashier@example.com'))!.status).toBe('active');
    });
  });
});

// Six CLI runs and a service, one after the other: a minute alone, several on a machine busy with other suites.
describe('mps user invite and mps user link on an embedded DATA_DIR', { timeout: CLI_TIMEOUT_MS * 5 }, () => {
  let root: string;
  let env: Record<string, string>;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-console-cli-'));
    env = { DATA_DIR: path.join(root, 'data'), PUBLIC_BASE_URL: 'https://pay.example.com' };
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('invites an owner and a cashier, refuses a bad email or role, and the service accepts the links', async () => {
    const merchant = await runCli(['merchant', 'create', '--name', 'Kiosco CLI'], env);
    expect(merchant.exitCode).toBe(0);
    const businessCode = String(merchant.json.business_code);
    const owner = await runCli(['user', 'invite', businessCode, 'cli.owner@example.com'], env);
    expect(owner.stderr).toBe('');
    expect(owner.exitCode).toBe(0);
    expect(owner.json.user).toMatchObject({ email: 'cli.owner@example.com', role: 'owner', status: 'invited' });
    expect(owner.json.invitation_url).toMatch(/^https:\/\/pay\.example\.com\/console\/invitations\/[0-9A-Za-z]{43}$/);
    const cashier = await runCli(['user', 'invite', businessCode, 'cli.cashier@example.com', '--role', 'cashier'], env);
    expect(cashier.json.user.role).toBe('cashier');
    const bad = await runCli(['user', 'invite', businessCode, 'not-an-email', '--role', 'boss'], env);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('EMAIL must be an email address');
    expect(bad.stderr).toContain('--role');
    const taken = await runCli(['user', 'invite', businessCode, 'cli.owner@example.com'], env);
    expect(taken.exitCode).toBe(0); // not accepted yet: a new link
    const unknown = await runCli(['user', 'invite', '999999', 'x@example.com'], env);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain('No such merchant');
    // A new link for someone who is a user (here still invited: the invitation sent again); none for a stranger.
    const relinked = await runCli(['user', 'link', 'CLI.cashier@example.com'], env);
    expect(relinked.exitCode).toBe(0);
    expect(relinked.json.user).toMatchObject({ email: 'cli.cashier@example.com', role: 'cashier' });
    const stranger = await runCli(['user', 'link', 'nobody@example.com'], env);
    expect(stranger.exitCode).toBe(1);
    expect(stranger.stderr).toContain('No such console user');

    let db: Database | undefined;
    let service: TestApp | undefined;
    try {
      db = await openDatabase({ kind: 'pglite', dataDir: env.DATA_DIR! }, { purpose: 'service' });
      const opened = db;
      // The CLI wrote its times on the system clock; the test app's clock starts before them.
      service = await startTestApp({ kind: 'pglite', database: { kind: 'pglite', db: opened, openAnother: () => Promise.reject(new Error('one process')), drop: () => opened.close() } });
      service.clock.set(new Date().toISOString());
      const browser = new ConsoleBrowser(service);
      expect((await browser.get(`/console/invitations/${tokenOf(owner.json.invitation_url)}`)).status).toBe(410); // replaced by the later link
      expect((await browser.accept(tokenOf(taken.json.invitation_url), 'owner from the cli')).status).toBe(303);
      expect((await browser.get('/console')).text).toContain('Kiosco CLI');
      const till = new ConsoleBrowser(service);
      expect((await till.get(`/console/invitations/${tokenOf(cashier.json.invitation_url)}`)).status).toBe(410); // replaced by `user link`
      expect((await till.accept(tokenOf(relinked.json.invitation_url), 'cashier from the cli')).status).toBe(303);
      expect((await till.get('/console/users')).status).toBe(403);
    } finally {
      await service?.close();
    }
  });
});
