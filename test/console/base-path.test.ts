// The console behind a proxy that serves the service under a path (PUBLIC_BASE_URL https://…/checkout,
// the proxy stripping /checkout before the service sees it): every link, form, redirect, cookie scope and
// the web app manifest's addresses are under /checkout, where the browser finds them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { ConsoleBrowser, inviteByOperator, type PageResponse } from './helpers.ts';

/** Every root path an answer sends the browser to: links, form actions, images, a redirect, a cookie's scope. */
function rootPaths(answer: PageResponse): string[] {
  return [
    ...[...answer.text.matchAll(/\b(?:href|action|src)="(\/[^"]*)"/g)].map((match) => match[1]!),
    ...(answer.location?.startsWith('/') ? [answer.location] : []),
    ...answer.setCookies.flatMap((line) => /; Path=([^;]+)/i.exec(line)?.slice(1) ?? []),
  ];
}

describe.each(databaseKinds())('the console under a PUBLIC_BASE_URL with a path, on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, env: { PUBLIC_BASE_URL: 'https://pay.example.com/checkout' } });
  });
  afterAll(() => t?.close());

  it('links, posts, redirects and scopes its cookies under that path only', async () => {
    const merchant = await t.createMerchant();
    const invitation = await t.request('POST', `/admin/v1/merchants/${merchant.businessCode}/users`, { body: { email: 'duena@example.com' } });
    expect(invitation.body.invitation_url).toMatch(/^https:\/\/pay\.example\.com\/checkout\/console\/invitations\//);
    const token = await inviteByOperator(t, merchant.businessCode, 'cajera@example.com', 'cashier');

    const browser = new ConsoleBrowser(t);
    const answers: PageResponse[] = [await browser.get(`/console/invitations/${token}?lang=en`)];
    answers.push(await browser.post(`/console/invitations/${token}?lang=en`, { password: 'cashier password 1', password_confirmation: 'cashier password 1' }));
    for (const path of ['/console', '/console/terminal', '/console/terminal/today']) answers.push(await browser.get(path));
    const keypad = answers.at(-2)!;
    const key = /name="idempotency_key" value="([^"]+)"/.exec(keypad.text)![1]!;
    const charged = await browser.post('/console/terminal', { amount: '12.50', description: '', idempotency_key: key });
    expect(charged.status).toBe(303);
    answers.push(charged, await browser.get(charged.location!.replace(/^\/checkout/, '')));
    answers.push(await browser.post('/console/sign-out'), await new ConsoleBrowser(t).get('/console/sign-in'));

    const paths = answers.flatMap(rootPaths);
    expect(paths.length).toBeGreaterThanOrEqual(20);
    expect(paths.filter((path) => !path.startsWith('/checkout/'))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining(['/checkout/console/manifest.webmanifest', '/checkout/console/terminal', '/checkout/console']));
  });

  it('names the installed app\'s start, scope and icons under that path', async () => {
    const manifest = await fetch(`${t.baseUrl}/console/manifest.webmanifest`).then((response) => response.json()) as {
      start_url: string; scope: string; icons: Array<{ src: string }>;
    };
    expect(manifest.start_url).toBe('/checkout/console/terminal');
    expect(manifest.scope).toBe('/checkout/console/');
    expect(manifest.icons.map((icon) => icon.src)).toEqual(['/checkout/console/icons/icon-192.png', '/checkout/console/icons/icon-512.png']);
  });
});
