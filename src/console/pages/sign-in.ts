// Signing in and out (docs/console.md#sign-in). A wrong email or password, an unknown or disabled account
// all answer the same words; the tenth wrong password in a row locks the account for 15 minutes
// (users/service.ts), and the page says for how long.
import type { App } from '../../kernel/routes.ts';
import * as users from '../../users/service.ts';
import { readSignIn } from './forms.ts';
import { csrfOf, sessionOf } from './guard.ts';
import type { ConsoleKit } from './kit.ts';
import { renderSignInPage } from './sign-in-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };

export function signInRoutes(app: App, kit: ConsoleKit): void {
  const { db, clock } = kit.context;

  app.get('/console/sign-in', { schema: { ...hidden, summary: 'Console: the sign-in form (HTML)' }, config: kit.route('anyone') }, async (request, reply) =>
    kit.send(request, reply, 200, (locale, nonce) => renderSignInPage({ locale, nonce, csrf: csrfOf(request), email: '', errors: {} })));

  app.post('/console/sign-in', { schema: { ...hidden, summary: 'Console: sign in' }, config: kit.route('anyone') }, async (request, reply) => {
    const locale = kit.localeOf(request);
    const form = readSignIn(request.body, locale);
    const again = (status: number, alert?: string) => kit.send(request, reply, status, (locale, nonce) => renderSignInPage({
      locale, nonce, csrf: csrfOf(request), email: form.email, errors: 'errors' in form ? form.errors : {}, alert,
    }));
    if ('errors' in form) return again(422);
    const now = clock.now();
    const outcome = await users.signIn(db, form.email, form.password, request.headers['user-agent'] ?? '', now);
    if ('token' in outcome) {
      kit.cookies.setSession(reply, outcome.token, (outcome.expiresAt.getTime() - now.getTime()) / 1000);
      return kit.redirect(request, reply, '/console');
    }
    if (outcome.kind === 'locked') {
      const seconds = Math.ceil((outcome.until.getTime() - now.getTime()) / 1000);
      reply.header('retry-after', String(seconds));
      return again(429, locale.plural('console.sign_in.locked', Math.ceil(seconds / 60)));
    }
    return again(401, locale.t('console.sign_in.refused'));
  });

  app.post('/console/sign-out', { schema: { ...hidden, summary: 'Console: sign out' }, config: kit.route('cashier') }, async (request, reply) => {
    const session = sessionOf(request);
    await users.endSession(db, session.businessCode, session.sessionId, clock.now());
    kit.cookies.clearSession(reply);
    return kit.redirect(request, reply, '/console/sign-in');
  });
}
