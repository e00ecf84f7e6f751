// Lists: `await list(query)` is one page (`{ data, meta }`), `for await (const item of list(query))`
// walks every page from the one asked for.
//
// Lists are numbered pages, newest first, so an item created during a walk pushes the others one place
// down. The walk never yields an item twice: the movements list is pinned with `before_id` after its
// first page (the service then counts nothing newer), and every other list skips an id already seen on
// the page before — enough while fewer than a page of new items arrive between two pages.
import type { PageMeta } from './types.ts';

/** The service's largest page (`per_page` 1–100). */
const WALK_PAGE_SIZE = 100;

export interface Page<Item> {
  data: Item[];
  meta: PageMeta;
}

interface ListQuery {
  page?: number;
  per_page?: number;
}

export type FetchPage<Item, Query extends ListQuery> = (query: Query) => Promise<Page<Item>>;

export interface ListOptions<Item, Query extends ListQuery> {
  /** The query for the pages after the first, pinned to what the first one showed (movements' `before_id`). */
  pin?: (query: Query, first: Page<Item>) => Query;
}

export class List<Item extends { id: string | number }, Query extends ListQuery> implements PromiseLike<Page<Item>>, AsyncIterable<Item> {
  private first: Promise<Page<Item>> | null = null;

  constructor(
    private readonly fetchPage: FetchPage<Item, Query>,
    private readonly query: Query,
    private readonly options: ListOptions<Item, Query> = {},
  ) {}

  then<Result1 = Page<Item>, Result2 = never>(
    onFulfilled?: ((page: Page<Item>) => Result1 | PromiseLike<Result1>) | null,
    onRejected?: ((reason: unknown) => Result2 | PromiseLike<Result2>) | null,
  ): Promise<Result1 | Result2> {
    this.first ??= this.fetchPage(this.query);
    return this.first.then(onFulfilled, onRejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Item> {
    // A walk reads the largest pages the service gives, unless the caller chose a size.
    const start = { ...this.query, per_page: this.query.per_page ?? WALK_PAGE_SIZE };
    let page = await this.fetchPage(start);
    const query = this.options.pin ? this.options.pin(start, page) : start;
    // Pinned to what this page showed, the list begins with this page: the next one is its page 2.
    let pageNumber = query === start ? (this.query.page ?? 1) : 1;
    let previous = new Set<string | number>();
    for (;;) {
      for (const item of page.data) if (!previous.has(item.id)) yield item;
      if (page.data.length === 0 || page.meta.current_page >= page.meta.last_page) return;
      previous = new Set(page.data.map((item) => item.id));
      pageNumber += 1;
      page = await this.fetchPage({ ...query, page: pageNumber });
    }
  }
}
