// The hosted pages' language links against a hostile request target, over raw TCP (fetch always sends
// origin-form): `GET http://evil.example/pay/… HTTP/1.1` is an absolute-form request line (RFC 9112 §3.2.2),
// which Node and Fastify accept and route by its path. Every hosted page — pay page, receipt, onboarding
// flow, their not-found pages and the error pages — must link under PUBLIC_BASE_URL's path and the
// request's path only, never under the host or scheme the request line named.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { newIntent, tokenOf as intentTokenOf } from '../onboarding/helpers.ts';
import { createQr, pay, type Merchant } from '../qr/qr-helpers.ts';

const HOSTILE = 'http://evil.example';

/** Sends one request as raw bytes and reads the whole answer (Connection: close). */
function rawRequest(port: number, requestLine: string, headers: Record<string, string> = {}, body = ''): Promise<{ status: number; raw: string }> {
  return new Promise((resolve, reject) => {
    const head = Object.entries({ host: `127.0.0.1:${port}`, accept: 'text/html', connection: 'close', ...headers,
      ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    // write, not end: a half-closed socket lets Node end the connection before a slower answer is written
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${requestLine}\r\n${head}\r\n${body}`));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0), raw });
    });
  });
}

/** Every root path the answer sends the browser to: links, form actions, images, a redirect, a cookie's scope. */
const rootPaths = (raw: string) => [
  ...[...raw.matchAll(/\b(?:href|action|src)="(\/[^"]*)"/g)].map((match) => match[1]!),
  ...[...raw.matchAll(/^(?:location: (\/\S*)|set-cookie: .*?; Path=(\/[^;\r]*))/gim)].map((match) => (match[1] ?? match[2])!),
];

/** The hrefs of the page's language switch. */
const languageLinks = (raw: string) => [...raw.matchAll(/<a href="([^"]*)" hreflang="/g)].map((match) => match[1]);

describe.each(databaseKinds())('hosted pages answering an absolute-form request target on %s', (kind) => {
  let t: TestApp;
  let port: number;
  let merchant: Merchant;
  beforeAll(async () => {
    // A base URL with a path: the links go under it, as qr_url and the onboarding url do.
    t = await startTestApp({ kind, env: { PUBLIC_BASE_URL: 'https://pay.example.com/checkout' } });
    port = Number(new URL(t.baseUrl).port);
    merchant = await t.createMerchant();
  });
  afterAll(() => t.close());

  const payTokenOf = (qr: { qr_url: string }) => qr.qr_url.split('/pay/')[1]!;

  it('the pay page, its receipt and its not-found page link under PUBLIC_BASE_URL\'s path only', async () => {
    const qr = await createQr(t, merchant, { amount: 12 });
    const token = payTokenOf(qr);
    const page = await rawRequest(port, `GET ${HOSTILE}/pay/${token} HTTP/1.1`);
    expect(page.status).toBe(200);
    expect(page.raw).not.toContain('evil.example');
    expect(languageLinks(page.raw)).toEqual([`/checkout/pay/${token}?lang=en`]);

    expect((await pay(t, merchant, qr.id)).status).toBe(201);
    const receipt = await rawRequest(port, `GET ${HOSTILE}/pay/${token}/receipt?lang=en HTTP/1.1`);
    expect(receipt.status).toBe(200);
    expect(receipt.raw).not.toContain('evil.example');
    expect(languageLinks(receipt.raw)).toEqual([`/checkout/pay/${token}/receipt?lang=es`]);

    const unknown = await rawRequest(port, `GET ${HOSTILE}/pay/AAAAAAAAAAAAAAAAAAAAAA HTTP/1.1`);
    expect(unknown.status).toBe(404);
    expect(unknown.raw).not.toContain('evil.example');
    expect(languageLinks(unknown.raw)).toEqual(['/checkout/pay/AAAAAAAAAAAAAAAAAAAAAA?lang=en']);
  });

  it('the onboarding flow and its not-found page link under PUBLIC_BASE_URL\'s path only', async () => {
    const partner = await t.createPartner();
    const token = intentTokenOf(await newIntent(t, partner));
    const form = await rawRequest(port, `GET ${HOSTILE}/onboarding/${token} HTTP/1.1`);
    expect(form.status).toBe(200);
    expect(form.raw).not.toContain('evil.example');
    expect(languageLinks(form.raw)).toEqual([`/checkout/onboarding/${token}?lang=en`]);

    const unknown = await rawRequest(port, `GET ${HOSTILE}/onboarding/${'A'.repeat(32)} HTTP/1.1`);
    expect(unknown.status).toBe(404);
    expect(unknown.raw).not.toContain('evil.example');
  });

  it('an error page of a hosted page (a refused body, 415) links under PUBLIC_BASE_URL\'s path only', async () => {
    const token = payTokenOf(await createQr(t, merchant, { amount: 3 }));
    const refused = await rawRequest(port, `POST ${HOSTILE}/pay/${token} HTTP/1.1`, { 'content-type': 'application/json' }, '{}');
    expect(refused.status).toBe(415);
    expect(refused.raw).toContain('<html lang="es-BO">');
    expect(refused.raw).not.toContain('evil.example');
    expect(languageLinks(refused.raw)).toEqual([`/checkout/pay/${token}?lang=en`]);
  });

  it('every link, form, image, redirect and cookie of the pay page, its receipt and the onboarding flow is under PUBLIC_BASE_URL\'s path', async () => {
    const multiUse = await createQr(t, merchant, { amount: 5, is_multi_use: true });
    const payToken = payTokenOf(multiUse);
    const answers = [await rawRequest(port, `GET /pay/${payToken}?lang=en HTTP/1.1`)];
    // The sandbox form's payment: a redirect back to the page and the receipt cookie of this browser.
    const paid = await rawRequest(port, `POST /pay/${payToken}?lang=en HTTP/1.1`, { 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ source_bank: 'Banco Unión', account_number: '10000123454321', account_titular: 'Ana Pérez' }).toString());
    expect(paid.status).toBe(303);
    answers.push(paid);
    const cookie = /set-cookie: ([^;]+);/i.exec(paid.raw)![1]!;
    answers.push(await rawRequest(port, `GET /pay/${payToken}/receipt?lang=en HTTP/1.1`, { cookie }));
    const single = await createQr(t, merchant, { amount: 7 });
    answers.push(await rawRequest(port, `GET /pay/${payTokenOf(single)} HTTP/1.1`)); // the "Guardar QR" link
    const intentToken = intentTokenOf(await newIntent(t, await t.createPartner()));
    answers.push(await rawRequest(port, `GET /onboarding/${intentToken}?lang=en HTTP/1.1`)); // its flow cookie, form and links
    const paths = answers.flatMap((answer) => rootPaths(answer.raw));
    expect(paths.length).toBeGreaterThanOrEqual(10);
    expect(paths.filter((path) => !path.startsWith('/checkout/'))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining([`/checkout/pay/${payToken}`, `/checkout/pay/${payToken}?lang=en`,
      `/checkout/pay/${payTokenOf(single)}/qr.png?download=1`, `/checkout/onboarding/${intentToken}`]));
  });

  it('the API\'s not-found answer names the path only, not the request line\'s host', async () => {
    const unknown = await rawRequest(port, `GET ${HOSTILE}/api/v2/nothing-here HTTP/1.1`, { accept: 'application/json' });
    expect(unknown.status).toBe(404);
    expect(unknown.raw).toContain('No route GET /api/v2/nothing-here.');
    expect(unknown.raw).not.toContain('evil.example');
  });
});
