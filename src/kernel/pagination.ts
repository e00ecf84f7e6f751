// Page-number pagination shared by every list (docs/api-reference.md#pagination): `page` 1–1,000,000, `per_page` 1–100 (default 15),
// `{ data, meta }` with `last_page = max(1, ceil(total / per_page))`; a page past the end is `data: []`.
//
// One shape at each layer (docs/architecture.md#conventions): the route reads a PageRequest from the
// query, the service takes it and returns a Page of rows, the store takes the SQL window (pageWindow);
// the route answers pageBody(request, page, view).
import { Type, type TSchema } from '@sinclair/typebox';
import { PaginationMetaSchema } from './schemas.ts';

export const DEFAULT_PER_PAGE = 15;
export const MAX_PER_PAGE = 100;
/** Highest page number: any page up to it past the end is `data: []`; beyond it 422 (the offset stays an int). */
export const MAX_PAGE = 1_000_000;

/** Querystring properties of every paginated list; spread into the route's own querystring schema. */
export const PaginationQueryProperties = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: `Page number, 1–${MAX_PAGE}` })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE, description: `Items per page, 1–${MAX_PER_PAGE}` })),
};

/** The `{ data, meta }` envelope of a list of `item`. */
export function PageSchema<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: PaginationMetaSchema });
}

export interface PageRequest {
  page: number;
  perPage: number;
}

/** The page asked for, with the defaults applied. */
export function pageRequest(query: { page?: number; per_page?: number }): PageRequest {
  return { page: query.page ?? 1, perPage: query.per_page ?? DEFAULT_PER_PAGE };
}

/** One page of rows as a service returns it, with the number of rows of the whole list. */
export interface Page<Row> {
  items: Row[];
  total: number;
}

/** The SQL window of a page: LIMIT and OFFSET. */
export function pageWindow({ page, perPage }: PageRequest): { limit: number; offset: number } {
  return { limit: perPage, offset: (page - 1) * perPage };
}

export function pageMeta(total: number, { page, perPage }: PageRequest) {
  return { current_page: page, last_page: Math.max(1, Math.ceil(total / perPage)), per_page: perPage, total };
}

/** The `{ data, meta }` answer of a list: each row of `page` through `view`. */
export function pageBody<Row, View>(request: PageRequest, page: Page<Row>, view: (row: Row) => View): { data: View[]; meta: ReturnType<typeof pageMeta> } {
  return { data: page.items.map(view), meta: pageMeta(page.total, request) };
}
