// The merchant console's hosted pages (docs/console.md; contract §13): sign-in, invitations, home, users,
// sessions, the POS terminal, the owner's QRs, payments, refunds, movements, transfers, keys, webhooks and
// events, and the web app manifest, in their own scope — it alone reads the console's form posts and runs the console guard
// (pages/guard.ts) before every handler. The people, their sessions and what may be done with them are the
// users capability's (src/users/); these routes only read forms, call it and render.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CapabilityRoutes } from '../context.ts';
import { acceptFormPostsOnly } from '../kernel/forms.ts';
import type { App } from '../kernel/routes.ts';
import { consoleCookies } from './pages/cookies.ts';
import { consoleGuard, type ConsoleRefusal } from './pages/guard.ts';
import { eventRoutes } from './pages/events.ts';
import { homeRoutes } from './pages/home.ts';
import { invitationRoutes } from './pages/invitations.ts';
import { keyRoutes } from './pages/keys.ts';
import { consoleKit } from './pages/kit.ts';
import { consoleNotice } from './pages/layout.ts';
import { manifestRoutes } from './pages/manifest.ts';
import { paymentRoutes } from './pages/payments.ts';
import { qrRoutes } from './pages/qrs.ts';
import { movementRoutes } from './pages/movements.ts';
import { sessionRoutes } from './pages/sessions.ts';
import { signInRoutes } from './pages/sign-in.ts';
import { terminalRoutes } from './pages/terminal.ts';
import { transferRoutes } from './pages/transfers.ts';
import { userRoutes } from './pages/users.ts';
import { webhookRoutes } from './pages/webhooks.ts';

export const consoleRoutes: CapabilityRoutes = async (app, context) => {
  const cookies = consoleCookies(context.config.publicBaseUrl);
  const kit = consoleKit(context, cookies);
  acceptFormPostsOnly(app);
  app.decorateRequest('console', null);

  const refuse = (request: FastifyRequest, reply: FastifyReply, why: ConsoleRefusal) =>
    kit.send(request, reply, 403, (locale, nonce) => why === 'forbidden'
      ? consoleNotice(locale, nonce, 'console.forbidden.title', 'console.forbidden.text', { href: '/console', label: 'console.back_home' }, 'forbidden')
      : consoleNotice(locale, nonce, 'console.csrf.title', 'console.csrf.text', { href: '/console', label: 'console.back_home' }, 'csrf'), null);
  app.addHook('preHandler', consoleGuard({
    db: context.db, merchantDisplays: context.merchantDisplays, clock: context.clock, cookies, refuse,
    toSignIn: (request, reply) => kit.redirect(request, reply, '/console/sign-in'),
  }));

  const scope = app as unknown as App;
  signInRoutes(scope, kit);
  invitationRoutes(scope, kit);
  homeRoutes(scope, kit);
  userRoutes(scope, kit);
  sessionRoutes(scope, kit);
  terminalRoutes(scope, kit);
  qrRoutes(scope, kit);
  paymentRoutes(scope, kit);
  keyRoutes(scope, kit);
  webhookRoutes(scope, kit);
  eventRoutes(scope, kit);
  movementRoutes(scope, kit);
  transferRoutes(scope, kit);
  manifestRoutes(scope, kit);
};
