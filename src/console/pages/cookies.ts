// The console's two cookies, both HttpOnly, SameSite=Strict (no request another site starts carries them,
// not even a link), Secure when PUBLIC_BASE_URL is https, and sent to /console only:
//  - the session cookie: the session's token (users/tokens.ts), set at sign-in, deleted at sign-out;
//  - the sign-in cookie: a random secret that the CSRF field of the forms used before a session exists
//    (sign-in, accepting an invitation) is derived from.
import type { FastifyReply } from 'fastify';
import { randomBase62 } from '../../ids.ts';
import { readCookie, scopedCookie } from '../../kernel/cookies.ts';
import { basePathOf } from '../../kernel/page-kit.ts';
import { isTokenShaped } from '../../users/tokens.ts';

const SESSION_COOKIE = 'mps_console';
const SIGN_IN_COOKIE = 'mps_console_signin';
const SIGN_IN_COOKIE_MAX_AGE_SECONDS = 24 * 3600;
const SECRET_PATTERN = /^[0-9A-Za-z]{32}$/;

export interface ConsoleCookies {
  /** The session token of the request's cookie, when well formed. */
  sessionTokenOf(cookieHeader: string | undefined): string | null;
  /** The sign-in secret of the request's cookie, when well formed. */
  signInSecretOf(cookieHeader: string | undefined): string | null;
  setSession(reply: FastifyReply, token: string, maxAgeSeconds: number): void;
  clearSession(reply: FastifyReply): void;
  /** Sets a new sign-in secret and returns it. */
  newSignInSecret(reply: FastifyReply): string;
}

/** The console's cookies under PUBLIC_BASE_URL: its path, and Secure exactly when it is https. */
export function consoleCookies(publicBaseUrl: string): ConsoleCookies {
  const path = `${basePathOf(publicBaseUrl)}/console`;
  const secure = publicBaseUrl.startsWith('https:');
  const cookie = (name: string, value: string, maxAgeSeconds: number) => scopedCookie(name, value, { path, maxAgeSeconds, secure, sameSite: 'Strict' });
  return {
    sessionTokenOf(header) {
      const value = readCookie(header, SESSION_COOKIE);
      return isTokenShaped(value) ? value : null;
    },
    signInSecretOf(header) {
      const value = readCookie(header, SIGN_IN_COOKIE);
      return value !== null && SECRET_PATTERN.test(value) ? value : null;
    },
    setSession(reply, token, maxAgeSeconds) {
      reply.header('set-cookie', cookie(SESSION_COOKIE, token, maxAgeSeconds));
    },
    clearSession(reply) {
      reply.header('set-cookie', cookie(SESSION_COOKIE, '', 0));
    },
    newSignInSecret(reply) {
      const secret = randomBase62(32);
      reply.header('set-cookie', cookie(SIGN_IN_COOKIE, secret, SIGN_IN_COOKIE_MAX_AGE_SECONDS));
      return secret;
    },
  };
}
