// The owner's sessions page (docs/console.md#sessions): the business's open sessions, and ending one. Ending
// this browser's own session signs it out.
import { Type } from '@sinclair/typebox';
import type { App } from '../../kernel/routes.ts';
import { PositiveId } from '../../kernel/schemas.ts';
import * as users from '../../users/service.ts';
import { csrfOf, sessionOf } from './guard.ts';
import type { ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { renderSessionsPage } from './sessions-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const SessionIdParams = Type.Object({ id: PositiveId() });

export function sessionRoutes(app: App, kit: ConsoleKit): void {
  const { db, clock } = kit.context;

  app.get('/console/sessions', { schema: { ...hidden, summary: 'Console: the business\'s open sessions (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const sessions = await users.listSessions(db, session.businessCode, clock.now());
    return kit.send(request, reply, 200, (locale, nonce) => renderSessionsPage({ locale, nonce, session, csrf: csrfOf(request), sessions }));
  });

  app.post('/console/sessions/:id/end', { schema: { ...hidden, params: SessionIdParams, summary: 'Console: end a session' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    if (!(await users.endSession(db, session.businessCode, request.params.id, clock.now()))) {
      return kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.not_found.title', 'console.not_found.text', { href: '/console/sessions', label: 'console.back_home' }), null);
    }
    if (request.params.id === session.sessionId) {
      kit.cookies.clearSession(reply);
      return kit.redirect(request, reply, '/console/sign-in');
    }
    return kit.redirect(request, reply, '/console/sessions');
  });
}
