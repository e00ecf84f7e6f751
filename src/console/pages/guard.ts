// The one guard of every console route (docs/console.md): who may open it, and the CSRF check of every form.
// Each route declares its `consoleAccess`; a route that declares none is for owners only, so a page added
// without thinking is closed rather than open. Nothing else decides access: the pages never test a role.
//
//  - `public`: the web app manifest and its icons. Browsers fetch a manifest without cookies, so these
//    answer anyone, read no session and set no cookie; they hold nothing of any business.
//  - `anyone`: the sign-in and invitation pages. Their forms carry the CSRF field of the sign-in cookie.
//  - `cashier`: any signed-in user (owners do everything cashiers do).
//  - `owner`: owners only; a cashier gets the 403 page.
// A request to a signed-in route without a live session is sent to the sign-in page (303). A POST whose CSRF
// field is missing or wrong gets the 403 page and changes nothing: the guard answers before the handler runs.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../time.ts';
import type { Database } from '../../db/database.ts';
import type { MerchantDisplayCache } from '../../merchants/display-cache.ts';
import * as users from '../../users/service.ts';
import { csrfFieldOf, isValidCsrfField } from '../../users/tokens.ts';
import type { ConsoleCookies } from './cookies.ts';

export type ConsoleAccess = 'public' | 'anyone' | 'cashier' | 'owner';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may open a console route (console/pages/guard.ts); left out: owners only. */
    consoleAccess?: ConsoleAccess;
  }
  interface FastifyRequest {
    /** What the console guard found: the session (null on `anyone` routes) and the CSRF field for the page's forms. */
    console: ConsoleRequest | null;
  }
}

export interface ConsoleRequest {
  session: users.ConsoleSession | null;
  /** The hidden field every form of the page carries. */
  csrf: string;
}

export type ConsoleRefusal = 'forbidden' | 'csrf';

export interface GuardDeps {
  db: Database;
  merchantDisplays: MerchantDisplayCache;
  clock: Clock;
  cookies: ConsoleCookies;
  /** Sends the sign-in page's address (a redirect), in the request's language. */
  toSignIn(request: FastifyRequest, reply: FastifyReply): FastifyReply;
  /** Sends the 403 page of a refusal. */
  refuse(request: FastifyRequest, reply: FastifyReply, why: ConsoleRefusal): FastifyReply;
}

const RANK: Record<users.UserRole, number> = { cashier: 1, owner: 2 };

/** Whether a signed-in `role` may open a route of `access`: the guard's one rule, which the nav shows too. */
export function mayOpen(role: users.UserRole, access: ConsoleAccess): boolean {
  return access === 'public' || access === 'anyone' || RANK[role] >= RANK[access];
}

/** The preHandler of the console's scope: after the body is read, before any handler. */
export function consoleGuard(deps: GuardDeps) {
  const { clock, cookies } = deps;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const access = request.routeOptions.config.consoleAccess ?? 'owner';
    if (access === 'public') {
      // Read-only and static (manifest.ts): no session, no cookie. A form on a public route would skip the
      // CSRF check, so any other method is refused rather than trusted.
      return request.method === 'GET' || request.method === 'HEAD' ? undefined : deps.refuse(request, reply, 'csrf');
    }
    const posted = request.method === 'POST';
    const submitted = ((request.body ?? {}) as Record<string, unknown>).csrf_token;

    if (access === 'anyone') {
      const secret = cookies.signInSecretOf(request.headers.cookie);
      if (posted) {
        if (!isValidCsrfField(secret, submitted)) return deps.refuse(request, reply, 'csrf');
        request.console = { session: null, csrf: csrfFieldOf(secret!) };
        return;
      }
      request.console = { session: null, csrf: csrfFieldOf(secret ?? cookies.newSignInSecret(reply)) };
      return;
    }

    const token = cookies.sessionTokenOf(request.headers.cookie);
    const session = token === null ? null : await users.sessionOf(deps, token, clock.now());
    if (!session) {
      if (token !== null) cookies.clearSession(reply); // ended or expired: the browser forgets it
      return deps.toSignIn(request, reply);
    }
    if (!mayOpen(session.role, access)) return deps.refuse(request, reply, 'forbidden');
    if (posted && !isValidCsrfField(token, submitted)) return deps.refuse(request, reply, 'csrf');
    request.console = { session, csrf: csrfFieldOf(token!) };
  };
}

/** The signed-in session of a `cashier` or `owner` route's request (the guard has let it through). */
export function sessionOf(request: FastifyRequest): users.ConsoleSession {
  const session = request.console?.session;
  if (!session) throw new Error('console route reached without a session: its consoleAccess is `anyone`');
  return session;
}

/** The CSRF field for the forms of the page the request answers. */
export function csrfOf(request: FastifyRequest): string {
  if (!request.console) throw new Error('console route reached without the console guard');
  return request.console.csrf;
}
