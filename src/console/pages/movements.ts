// The owner's movements and statement routes (docs/console.md#movements-statement-and-transfers; contract §12,
// §13): the balance and the movements as GET /api/v2/balance/movements lists them; a month's statement as GET
// /api/v2/balance/statement answers it for the month's days; and the month's CSV, the bytes of GET
// /api/v2/balance/entries.csv for those days. Every read is the session's merchant's.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../kernel/routes.ts';
import type { MovementType } from '../../ledger/service.ts';
import * as money from '../money.ts';
import { csrfOf, sessionOf } from './guard.ts';
import type { ConsoleKit } from './kit.ts';
import { consolePageRequest, ConsolePageQuery } from './lists.ts';
import { MOVEMENT_TYPES, renderMovementsPage, renderStatementPage } from './movements-view.ts';

const hidden = { tags: ['hosted pages'], hide: true };
/** The movements' filter: the API's types, '' for all (the filter form's first option). */
const MovementsQuery = Type.Object({ ...ConsolePageQuery, type: Type.Optional(Type.Union([Type.Literal(''), Type.Literal('all'), ...MOVEMENT_TYPES.map((type) => Type.Literal(type))])) });
/** The statement's month: any text, checked by the handler so a bad month gets the statement page's own answer. */
const StatementQuery = Type.Object({ month: Type.Optional(Type.String({ maxLength: 200 })) });

/** A page's address with its query, for the language switch. */
export function switchPathOf(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, String(value));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

export function movementRoutes(app: App, kit: ConsoleKit): void {
  const context = kit.context;

  app.get('/console/movements', { schema: { ...hidden, querystring: MovementsQuery, summary: 'Console: the balance and its movements (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const session = sessionOf(request);
    const type = request.query.type === undefined || request.query.type === '' || request.query.type === 'all' ? null : request.query.type as MovementType;
    const pageRequest = consolePageRequest(request.query);
    const [balance, movements] = await Promise.all([
      money.balanceOf(context, session.businessCode),
      money.movementsOf(context, session.businessCode, type, pageRequest),
    ]);
    return kit.send(request, reply, 200, (locale, nonce) => renderMovementsPage({
      locale, nonce, session, csrf: csrfOf(request), balance, movements, type: type ?? '', request: pageRequest,
    }), switchPathOf('/console/movements', { type: type ?? '', page: request.query.page }));
  });

  /** The month asked for (the current one when none), its days, or why it cannot be shown. */
  const monthOf = async (request: FastifyRequest, asked: string | undefined) => {
    const session = sessionOf(request);
    const months = await money.statementMonths(context, session.businessCode);
    const month = asked ?? months.current;
    return { session, months, month, checked: money.monthRange(month, months, context) };
  };

  app.get('/console/statement', { schema: { ...hidden, querystring: StatementQuery, summary: 'Console: a month\'s statement (HTML)' }, config: kit.route('owner') }, async (request, reply) => {
    const { session, months, month, checked } = await monthOf(request, request.query.month);
    if ('refusal' in checked) {
      return kit.send(request, reply, 422, (locale, nonce) => renderStatementPage({ locale, nonce, session, csrf: csrfOf(request), months, month, statement: null, refusal: checked.refusal }), '/console/statement');
    }
    const statement = await money.statementFor(context, session.businessCode, checked.range);
    return kit.send(request, reply, 200, (locale, nonce) => renderStatementPage({ locale, nonce, session, csrf: csrfOf(request), months, month, statement }),
      switchPathOf('/console/statement', { month }));
  });

  app.get('/console/statement.csv', { schema: { ...hidden, querystring: StatementQuery, summary: 'Console: a month\'s journal entries as CSV (the API\'s entries.csv)' }, config: kit.route('owner') }, async (request, reply) => {
    const { session, months, month, checked } = await monthOf(request, request.query.month);
    if ('refusal' in checked) {
      return kit.send(request, reply, 422, (locale, nonce) => renderStatementPage({ locale, nonce, session, csrf: csrfOf(request), months, month, statement: null, refusal: checked.refusal }), '/console/statement');
    }
    const name = money.csvFileName(session.merchantName, month);
    return reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="${name}"`)
      .send(money.entriesCsv(context, session.businessCode, checked.range));
  });
}
