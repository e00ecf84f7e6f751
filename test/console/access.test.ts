// Who may reach each console route, for every route the app has — the pages added later included, since
// the list is read from the app itself (Fastify's route tree), not written here. Signed out, every route but
// the sign-in, invitation and web-app ones sends the browser to the sign-in page; a cashier reaches the
// terminal, today's QRs, the home and sign-out only, and every other route — GET or a form with a valid CSRF
// field — answers the 403 page and changes no row. On PGlite, and on PostgreSQL when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { ConsoleBrowser, newCashier, newOwner } from './helpers.ts';

/** Routes for anyone: signing in, accepting an invitation, and the web app's manifest and icons. */
const ANYONE = new Set(['/console/sign-in', '/console/invitations/:token', '/console/manifest.webmanifest', '/console/icons/icon-192.png', '/console/icons/icon-512.png']);
/** Routes for every signed-in user, cashiers included (contract §13: the POS terminal and today's QRs only). */
const CASHIER = new Set(['/console', '/console/sign-out', '/console/terminal', '/console/terminal/today', '/console/terminal/qrs/:id',
  '/console/terminal/qrs/:id/status', '/console/terminal/qrs/:id/cancel']);

interface ConsoleRoute { path: string; methods: string[] }

/** The console's routes, read from Fastify's printed route tree (one line a route: its path piece and methods). */
function consoleRoutes(tree: string): ConsoleRoute[] {
  const routes: ConsoleRoute[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ├└─]*)(\/\S*) \(([A-Z, ]+)\)$/.exec(line.trimEnd());
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const path = stack.join('');
    if (path === '/console' || path.startsWith('/console/')) routes.push({ path, methods: match[3]!.split(', ').filter((m) => m !== 'HEAD') });
  }
  return routes;
}

describe.each(databaseKinds())('who reaches each console route on %s', (kind) => {
  let t: TestApp;
  let routes: ConsoleRoute[];
  let cashier: ConsoleBrowser;
  beforeAll(async () => {
    t = await startTestApp({ kind });
    routes = consoleRoutes(t.app.printRoutes({ commonPrefix: false }));
    const merchant = await t.createMerchant({ name: 'Kiosco Acceso' });
    const owner = await newOwner(t, merchant.businessCode, 'access.owner@example.com');
    cashier = (await newCashier(owner, t, 'access.cashier@example.com')).browser;
  });
  afterAll(() => t?.close());

  /** A request path of a route: every parameter given a value that names nothing. */
  const pathOf = (route: string) => route.replace(/:[a-zA-Z_]+/g, '1');
  /** Rows of every table, to see that a refusal wrote nothing. */
  const rowCounts = async () => {
    const { rows: tables } = await t.db.query<{ name: string }>("select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1");
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = (await t.db.query<{ n: number }>(`select count(*)::int as n from "${name}"`)).rows[0]!.n;
    return counts;
  };

  it('reads the route list from the app (the test would prove nothing on an empty one)', () => {
    const paths = routes.map((route) => route.path);
    for (const known of ['/console', '/console/sign-in', '/console/users', '/console/users/:id/disable', '/console/terminal/qrs/:id/cancel']) expect(paths).toContain(known);
    for (const known of ANYONE) expect(paths).toContain(known);
    for (const known of CASHIER) expect(paths).toContain(known);
  });

  it('signed out, every route but the sign-in, invitation and web-app ones goes to the sign-in page', async () => {
    const stranger = new ConsoleBrowser(t);
    const before = await rowCounts();
    for (const route of routes.filter((r) => !ANYONE.has(r.path))) {
      for (const method of route.methods) {
        const answer = method === 'GET' ? await stranger.get(pathOf(route.path)) : await stranger.postRaw(pathOf(route.path), { csrf_token: 'x' });
        expect([answer.status, answer.location], `${method} ${route.path}`).toEqual([303, '/console/sign-in']);
      }
    }
    expect(await rowCounts()).toEqual(before);
  });

  it('a cashier gets the 403 page on every route that is not a cashier\'s, with a valid CSRF field too, and nothing is written', async () => {
    await cashier.get('/console'); // its CSRF field
    const before = await rowCounts();
    const ownerRoutes = routes.filter((r) => !ANYONE.has(r.path) && !CASHIER.has(r.path));
    expect(ownerRoutes.length).toBeGreaterThan(0);
    for (const route of ownerRoutes) {
      for (const method of route.methods) {
        const answer = method === 'GET' ? await cashier.get(pathOf(route.path)) : await cashier.post(pathOf(route.path), {});
        expect(answer.status, `${method} ${route.path}`).toBe(403);
        expect(answer.text, `${method} ${route.path}`).toContain('data-reason="forbidden"');
      }
    }
    expect(await rowCounts()).toEqual(before);
  });
});
