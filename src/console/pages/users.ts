// The owner's users page (docs/console.md#users): list the business's users, invite a cashier (the link
// is shown once, in the answer), give a cashier a new password link (docs/console.md#password-links),
// disable a cashier. Every statement is scoped by the session's merchant.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../kernel/errors.ts';
import type { App } from '../../kernel/routes.ts';
import { PositiveId } from '../../kernel/schemas.ts';
import * as users from '../../users/service.ts';
import { readInvite, type FormErrors } from './forms.ts';
import { csrfOf, sessionOf } from './guard.ts';
import type { ConsoleKit } from './kit.ts';
import { consoleNotice } from './layout.ts';
import { renderInvitedPage, renderUsersPage } from './users-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
const UserIdParams = Type.Object({ id: PositiveId() });

export function userRoutes(app: App, kit: ConsoleKit): void {
  const { config, db, clock } = kit.context;

  const usersPage = async (request: FastifyRequest, reply: FastifyReply, status: number,
    invite: { email: string; errors: FormErrors<'email'>; alert?: string } = { email: '', errors: {} }) => {
    const session = sessionOf(request);
    const list = await users.listUsers(db, session.businessCode);
    return kit.send(request, reply, status, (locale, nonce) => renderUsersPage({ locale, nonce, session, csrf: csrfOf(request), users: list, invite }), '/console/users');
  };

  const userNotFound = (request: FastifyRequest, reply: FastifyReply) =>
    kit.send(request, reply, 404, (locale, nonce) => consoleNotice(locale, nonce, 'console.not_found.title', 'console.not_found.text', { href: '/console/users', label: 'console.users.invited.back' }), null);

  app.get('/console/users', { schema: { ...hidden, summary: 'Console: the business\'s users (HTML)' }, config: kit.route('owner') }, (request, reply) => usersPage(request, reply, 200));

  app.post('/console/users', { schema: { ...hidden, summary: 'Console: invite a cashier' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const locale = kit.localeOf(request);
    const form = readInvite(request.body, locale);
    if ('errors' in form) return usersPage(request, reply, 422, { email: form.email, errors: form.errors });
    const now = clock.now();
    let invitation: users.Invitation;
    try {
      invitation = await users.inviteUser(db, { businessCode: session.businessCode, email: form.email, role: 'cashier', invitedBy: session.userId }, now);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'USER_EXISTS') throw error;
      return usersPage(request, reply, 409, { email: form.email, errors: {}, alert: locale.t('console.error.user_exists') });
    }
    // Shown once: no language switch (reading the page again would need the link again).
    return kit.send(request, reply, 201, (locale, nonce) => renderInvitedPage({
      locale, nonce, session, csrf: csrfOf(request), email: invitation.user.email, link: users.invitationUrlOf(config, invitation.token), expiresAt: invitation.expiresAt, now, kind: 'invitation',
    }), null);
  });

  app.post('/console/users/:id/link', { schema: { ...hidden, params: UserIdParams, summary: 'Console: a new password link for a cashier' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const now = clock.now();
    const link = await users.issuePasswordLink(db, { businessCode: session.businessCode, userId: request.params.id, role: 'cashier', issuedBy: session.userId }, now);
    if (!link) return userNotFound(request, reply);
    const kind = link.user.status === 'disabled' ? 'comeback' : link.user.status === 'active' ? 'new_password' : 'invitation';
    return kit.send(request, reply, 201, (locale, nonce) => renderInvitedPage({
      locale, nonce, session, csrf: csrfOf(request), email: link.user.email, link: users.invitationUrlOf(config, link.token), expiresAt: link.expiresAt, now, kind,
    }), null);
  });

  app.post('/console/users/:id/disable', { schema: { ...hidden, params: UserIdParams, summary: 'Console: disable a cashier' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    if (!(await users.disableCashier(db, session.businessCode, request.params.id, clock.now()))) return userNotFound(request, reply);
    return kit.redirect(request, reply, '/console/users');
  });
}
