// The console's home (docs/console.md#home), for every signed-in user; an owner's with the day at a glance.
import type { App } from '../../kernel/routes.ts';
import { dayAtAGlance } from '../glance.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { renderHomePage } from './home-view.ts';
import type { ConsoleKit } from './kit.ts';

export function homeRoutes(app: App, kit: ConsoleKit): void {
  app.get('/console', { schema: { tags: ['hosted pages'], hide: true, summary: 'Console: home (HTML)' }, config: kit.route('cashier') }, async (request, reply) => {
    const session = sessionOf(request);
    // A cashier sees no money of the business (contract §13: the terminal and today's QRs only).
    const glance = session.role === 'owner' ? await dayAtAGlance(kit.context, session.businessCode) : null;
    return kit.send(request, reply, 200, (locale, nonce) => renderHomePage({ locale, nonce, session, csrf: csrfOf(request), glance }));
  });
}
