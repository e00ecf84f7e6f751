// The kit every hosted page is made with (the pay page and its receipt, the onboarding flow): every
// piece of data goes through escapeHtml, the page shell carries the one stylesheet, the page's language
// (`<html lang>` and the language switch) and its script under a per-response CSP nonce, and sendPage
// answers with the security headers.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from './html.ts';
import { chooseLang, LANG_NAMES, LANGS, Locale } from './i18n/locale.ts';

/**
 * The language of the page a request asks for (`?lang=`, then Accept-Language), writing times in `zone`.
 * The page's language switch points at `switchPath` — by default the request's own path, right for a page
 * read by GET or a form that posts to its page's own URL; a page answering a post elsewhere names its
 * page, and a page that must not be read twice passes null (no switch). The switch is written under the
 * path of PUBLIC_BASE_URL (the route's `pagePathPrefix`, see hostedPage), where the payer's browser finds it.
 */
export function pageLocale(request: FastifyRequest, zone: string, switchPath: string | null = requestPath(request)): Locale {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const { lang, explicit } = chooseLang(query.lang, request.headers['accept-language']);
  const prefix = request.routeOptions.config?.pagePathPrefix ?? '';
  return new Locale(lang, explicit, zone, switchPath === null ? null : `${prefix}${switchPath}`, prefix);
}

/**
 * The path of the request target, and nothing else of it. The target is what the client sent: an
 * absolute-form target (`GET http://evil.example/pay/… HTTP/1.1`, which servers must accept, RFC 9112
 * §3.2.2) or a path starting with `//` would otherwise put a host of the client's choosing into the page's
 * links. Leading slashes are collapsed so the path can never read as a protocol-relative URL.
 */
function requestPath(request: FastifyRequest): string | null {
  try {
    return `/${new URL(request.url, 'http://request-target.invalid').pathname.replace(/^\/+/, '')}`;
  } catch {
    return null; // a target no URL parser reads: no switch rather than a guess
  }
}

/** The path of PUBLIC_BASE_URL without its trailing slash: '' for `https://pay.example.com`, '/checkout' for `…/checkout/`. */
export function basePathOf(publicBaseUrl: string): string {
  return new URL(publicBaseUrl).pathname.replace(/\/+$/, '');
}

export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

export interface PageOptions {
  /**
   * Origins a form of the page may post to besides this service (a cancel that redirects to a partner).
   * Each must be a checked origin: it goes into the Content-Security-Policy as is.
   */
  formActionOrigins?: readonly string[];
  /**
   * The page links a web app manifest of this service (the console): `manifest-src 'self'`, else `default-src 'none'`
   * blocks it, and `img-src 'self'` for the manifest's icons — Chromium fetches them under the page's img-src, and
   * with `data:` alone it blocked them and logged a CSP error on every console page (Lighthouse's best practices).
   */
  manifest?: boolean;
}

/** Security headers of every hosted page: nothing loads from elsewhere, no framing, no referrer (the URL holds a bearer token). */
export function pageHeaders(nonce: string, options: PageOptions = {}): Record<string, string> {
  const formAction = ["form-action 'self'", ...(options.formActionOrigins ?? [])].join(' ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': [
      "default-src 'none'", options.manifest ? "img-src data: 'self'" : 'img-src data:', `style-src 'nonce-${nonce}'`, `script-src 'nonce-${nonce}'`,
      "connect-src 'self'", ...(options.manifest ? ["manifest-src 'self'"] : []), formAction, "base-uri 'none'", "frame-ancestors 'none'",
    ].join('; '),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
    // The language follows Accept-Language unless ?lang= chose it: a shared cache must key on it.
    vary: 'Accept-Language',
  };
}

const STYLES = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad; --ok: #116329; --bad: #a40e26; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f8fa; }
main { max-width: 28rem; margin: 0 auto; padding: 1rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 1.25rem; margin-bottom: 1rem; }
h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 0 0 .75rem; }
.muted { color: var(--muted); margin: 0; }
.amount { font-size: 2rem; font-weight: 700; margin: .75rem 0 .25rem; }
.qr { display: block; width: 100%; max-width: 280px; height: auto; margin: 1rem auto; image-rendering: pixelated; }
.status { font-weight: 600; padding: .5rem .75rem; border-radius: 8px; background: #eef4fb; color: var(--accent); }
.status[data-state="PAID"] { background: #e6f4ea; color: var(--ok); }
.status[data-state="CANCELED"], .status[data-state="NOT_FOUND"] { background: #fbeaec; color: var(--bad); }
dl { margin: 0; }
dt { color: var(--muted); font-size: .9rem; margin-top: .6rem; } dt:first-child { margin-top: 0; }
dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
input { width: 100%; font: inherit; padding: .6rem .7rem; border: 1px solid #8c959f; border-radius: 8px; }
input:focus, button:focus, select:focus, a:focus { outline: 3px solid #0969da; outline-offset: 2px; }
button { margin-top: 1rem; width: 100%; font: inherit; font-weight: 700; padding: .75rem; border: 0; border-radius: 8px; background: var(--accent); color: #fff; cursor: pointer; }
.error { color: var(--bad); font-weight: 600; }
.sandbox { border-style: dashed; }
a { color: var(--accent); }
.lang { text-align: right; margin: 0 0 .5rem; font-size: .95rem; }
.lang a { display: inline-block; padding: .5rem .25rem; }
.countdown { font: 700 1.75rem/1.2 ui-monospace, SFMono-Regular, Menlo, monospace; font-variant-numeric: tabular-nums; margin: .5rem 0 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.button-link { display: block; text-align: center; margin-top: 1rem; padding: .75rem; border-radius: 8px; background: var(--accent);
  color: #fff; font-weight: 700; text-decoration: none; }
[hidden] { display: none !important; }
@media print {
  body { background: #fff; }
  .lang, .no-print { display: none !important; }
}
`;

export interface ShellOptions {
  locale: Locale;
  title: string;
  nonce: string;
  body: string;
  /** Styles of this page only, after the kit's. */
  styles?: string;
  script?: string;
  /** Markup for <head> after the title (the console's manifest link and theme colour); the caller escapes it. */
  head?: string;
}

/** Links to the page in each other language (its switch path, which may carry a query, with `lang=`), each named in its own language. */
function languageSwitch(locale: Locale): string {
  if (locale.switchPath === null) return '';
  const path = locale.switchPath;
  const others = LANGS.filter((lang) => lang !== locale.lang)
    .map((lang) => `<a href="${escapeHtml(`${path}${path.includes('?') ? '&' : '?'}lang=${lang}`)}" hreflang="${lang}" lang="${lang}">${escapeHtml(LANG_NAMES[lang])}</a>`);
  return `<nav class="lang" aria-label="${escapeHtml(locale.t('common.language'))}">${others.join(' ')}</nav>`;
}

export function pageShell(options: ShellOptions): string {
  return `<!doctype html>
<html lang="${options.locale.tag}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(options.title)}</title>
${options.head ? `${options.head}\n` : ''}<style nonce="${options.nonce}">${STYLES}${options.styles ?? ''}</style>
</head>
<body>
<main>
${languageSwitch(options.locale)}
${options.body}
</main>
${options.script ? `<script nonce="${options.nonce}">${options.script}</script>` : ''}
</body>
</html>`;
}

export interface NoticeOptions {
  locale: Locale;
  nonce: string;
  title: string;
  /** The one status line: why there is nothing else to show. */
  text: string;
  state: 'NOT_FOUND' | 'CANCELED';
  /** `data-reason` of the status line, for pages that tell several closed states apart. */
  reason?: string;
  /** Markup after the status line (a hint, a link back). */
  more?: string;
}

/** A page of one card: a heading and one status line (the 404 and 410 pages, a receipt that is not there). */
export function noticePage({ locale, nonce, title, text, state, reason, more }: NoticeOptions): string {
  return pageShell({
    locale,
    nonce,
    title,
    body: `<section class="card" aria-labelledby="notice-heading">
  <h1 id="notice-heading">${escapeHtml(title)}</h1>
  <p class="status" role="status" data-state="${state}"${reason ? ` data-reason="${escapeHtml(reason)}"` : ''}>${escapeHtml(text)}</p>
  ${more ?? ''}
</section>`,
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers a person with HTML (a hosted page): its errors are pages too. */
    hostedPage?: boolean;
    /** The path of PUBLIC_BASE_URL, written before the path of the page's language switch ('' at the root). */
    pagePathPrefix?: string;
  }
}

/**
 * Route config of a hosted page's routes (not of their JSON status endpoints). It carries the path of
 * PUBLIC_BASE_URL so that every page of the route, its error pages included, links under the configured
 * address and never under a host or scheme the request named.
 */
export function hostedPage(publicBaseUrl: string): { hostedPage: true; pagePathPrefix: string } {
  return { hostedPage: true, pagePathPrefix: basePathOf(publicBaseUrl) };
}

export function isHostedPage(request: FastifyRequest): boolean {
  return request.routeOptions.config?.hostedPage === true;
}

/** The error page of a hosted page's failure (a 429, a 503, a refused body): its status, in the visitor's language. */
export function sendErrorPage(request: FastifyRequest, reply: FastifyReply, status: number): FastifyReply {
  const base = status === 429 ? 'error.rate_limited' : status === 503 ? 'error.unavailable' : status >= 500 ? 'error.internal' : 'error.request';
  // No time is written on an error page: the zone does not matter.
  const locale = pageLocale(request, 'UTC');
  return sendPage(reply, status, locale, (nonce) => noticePage({
    locale, nonce, title: locale.t(`${base}.title`), text: locale.t(`${base}.text`), state: 'NOT_FOUND',
  }));
}

/** Answers `status` with the page `render` makes for a fresh nonce, under the hosted pages' headers. */
export function sendPage(reply: FastifyReply, status: number, locale: Locale, render: (nonce: string) => string, options: PageOptions = {}): FastifyReply {
  const nonce = newNonce();
  return reply.code(status).headers(pageHeaders(nonce, options)).header('content-language', locale.tag).send(render(nonce));
}
