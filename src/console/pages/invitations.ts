// The invitation link (docs/console.md#invitation): the invitee sets a password and is signed in. The link
// works once (the database's guarded update, users/store.ts useInvitation) and for 72 hours; a used one
// answers 410, an expired or withdrawn one 410, an unknown one 404 — and the GET never uses it.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../kernel/routes.ts';
import * as users from '../../users/service.ts';
import { isTokenShaped } from '../../users/tokens.ts';
import { readNewPassword } from './forms.ts';
import { csrfOf } from './guard.ts';
import { renderInvitationGonePage, renderInvitationPage, type InvitationGone } from './invitation-view.ts';
import type { ConsoleKit } from './kit.ts';

const TokenParams = Type.Object({ token: Type.String() });
const hidden = { tags: ['hosted pages'], params: TokenParams, hide: true };

export function invitationRoutes(app: App, kit: ConsoleKit): void {
  const { db, clock } = kit.context;

  const gone = (request: FastifyRequest, reply: FastifyReply, why: InvitationGone) =>
    kit.send(request, reply, why === 'not_found' ? 404 : 410, (locale, nonce) => renderInvitationGonePage(locale, nonce, why));

  app.get('/console/invitations/:token', { schema: { ...hidden, summary: 'Console: an invitation\'s password form (HTML)' }, config: kit.route('anyone') }, async (request, reply) => {
    const { token } = request.params;
    const now = clock.now();
    const state = isTokenShaped(token) ? await users.invitationState(db, token, now) : { kind: 'not_found' as const };
    if (state.kind !== 'open') return gone(request, reply, state.kind);
    return kit.send(request, reply, 200, (locale, nonce) => renderInvitationPage({ locale, nonce, csrf: csrfOf(request), token, invitation: state, now, errors: {} }));
  });

  app.post('/console/invitations/:token', { schema: { ...hidden, summary: 'Console: accept an invitation' }, config: kit.route('anyone') }, async (request, reply) => {
    const { token } = request.params;
    if (!isTokenShaped(token)) return gone(request, reply, 'not_found');
    const now = clock.now();
    const form = readNewPassword(request.body, kit.localeOf(request));
    if ('errors' in form) {
      const state = await users.invitationState(db, token, now);
      if (state.kind !== 'open') return gone(request, reply, state.kind);
      return kit.send(request, reply, 422, (locale, nonce) => renderInvitationPage({ locale, nonce, csrf: csrfOf(request), token, invitation: state, now, errors: form.errors }));
    }
    const outcome = await users.acceptInvitation(db, token, form.password, request.headers['user-agent'] ?? '', now);
    if ('kind' in outcome) return gone(request, reply, outcome.kind);
    kit.cookies.setSession(reply, outcome.token, (outcome.expiresAt.getTime() - now.getTime()) / 1000);
    return kit.redirect(request, reply, '/console');
  });
}
