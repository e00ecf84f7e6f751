// The console's home (docs/console.md#home), for every signed-in user.
import type { App } from '../../kernel/routes.ts';
import { csrfOf, sessionOf } from './guard.ts';
import { renderHomePage } from './home-view.ts';
import type { ConsoleKit } from './kit.ts';

export function homeRoutes(app: App, kit: ConsoleKit): void {
  app.get('/console', { schema: { tags: ['hosted pages'], hide: true, summary: 'Console: home (HTML)' }, config: kit.route('cashier') }, async (request, reply) =>
    kit.send(request, reply, 200, (locale, nonce) => renderHomePage(locale, nonce, sessionOf(request), csrfOf(request))));
}
