// What every console route is made with: the route options (hosted page, who may open it), pages sent in the
// visitor's language under the hosted pages' headers, and redirects that keep a chosen language.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../kernel/errors.ts';
import type { Locale } from '../../kernel/i18n/locale.ts';
import { hostedPage, pageLocale, sendPage } from '../../kernel/page-kit.ts';
import type { ConsoleCookies } from './cookies.ts';
import type { ConsoleAccess } from './guard.ts';

export interface ConsoleKit {
  context: AppContext;
  cookies: ConsoleCookies;
  /** A route's config: a hosted page (errors answered as pages) that `access` may open. */
  route(access: ConsoleAccess): { hostedPage: true; pagePathPrefix: string; consoleAccess: ConsoleAccess };
  /** The request's locale; its language switch points at `switchPath` (null: no switch). */
  localeOf(request: FastifyRequest, switchPath?: string | null): Locale;
  /** Answers `status` with the page `render` makes. */
  send(request: FastifyRequest, reply: FastifyReply, status: number, render: (locale: Locale, nonce: string) => string, switchPath?: string | null): FastifyReply;
  /** 303 to `path` (post/redirect/get), keeping a language chosen with ?lang=. */
  redirect(request: FastifyRequest, reply: FastifyReply, path: string): FastifyReply;
}

export function consoleKit(context: AppContext, cookies: ConsoleCookies): ConsoleKit {
  const { config } = context;
  const page = hostedPage(config.publicBaseUrl);
  const localeOf = (request: FastifyRequest, switchPath?: string | null) =>
    switchPath === undefined ? pageLocale(request, config.serviceTimeZone) : pageLocale(request, config.serviceTimeZone, switchPath);
  return {
    context,
    cookies,
    route: (access) => ({ ...page, consoleAccess: access }),
    localeOf,
    send(request, reply, status, render, switchPath) {
      const locale = localeOf(request, switchPath);
      // Console pages link the web app manifest (layout.ts): the CSP lets the browser read it.
      return sendPage(reply, status, locale, (nonce) => render(locale, nonce), { manifest: true });
    },
    redirect(request, reply, path) {
      return reply.code(303).header('location', pageLocale(request, config.serviceTimeZone).href(path)).send();
    },
  };
}

/**
 * What `read` finds, or null when it throws NOT_FOUND — an unknown id or another merchant's record, which a
 * console page answers with its own not-found page (never 403: another business's records do not exist here).
 */
export async function foundOrNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ApiError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}
