// Money out and back: transfers (ACH pay-out), refunds, the balance with its movements and statement, banks.
import { List } from './pages.ts';
import { idempotencyKey, unwrap, type Api, type CallOptions, type CreateOptions } from './transport.ts';
import type { Query, RefundCreate, TransferCreate } from './types.ts';

export function transfers(api: Api) {
  return {
    /** Debits the balance at once; retried with the same Idempotency-Key, it is made once. */
    create: (body: TransferCreate, options: CreateOptions = {}) =>
      unwrap(api.POST('/api/v2/transfers', {
        body, params: { header: { 'Idempotency-Key': idempotencyKey(options.idempotencyKey) } }, signal: options.signal,
      })),
    get: (id: number, options: CallOptions = {}) =>
      unwrap(api.GET('/api/v2/transfers/{id}', { params: { path: { id } }, signal: options.signal })),
    list: (query: Query<'/api/v2/transfers'> = {}) =>
      new List((q: typeof query) => unwrap(api.GET('/api/v2/transfers', { params: { query: q } })), query),
    cancel: (id: number, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/transfers/{id}/cancel', { params: { path: { id } }, signal: options.signal })),
  };
}

export function refunds(api: Api) {
  return {
    /** Gives a payer money back (partly or in full); retried with the same Idempotency-Key, it is made once. */
    create: (body: RefundCreate, options: CreateOptions = {}) =>
      unwrap(api.POST('/api/v2/refunds', {
        body, params: { header: { 'Idempotency-Key': idempotencyKey(options.idempotencyKey) } }, signal: options.signal,
      })),
    get: (id: string, options: CallOptions = {}) =>
      unwrap(api.GET('/api/v2/refunds/{id}', { params: { path: { id } }, signal: options.signal })),
    list: (query: Query<'/api/v2/refunds'> = {}) =>
      new List((q: typeof query) => unwrap(api.GET('/api/v2/refunds', { params: { query: q } })), query),
  };
}

export function balance(api: Api) {
  return {
    get: (options: CallOptions = {}) => unwrap(api.GET('/api/v2/balance', { signal: options.signal })),
    /** Newest first. Walked with `for await`, the walk is pinned to the movements that existed when it began. */
    movements: (query: Query<'/api/v2/balance/movements'> = {}) =>
      new List((q: typeof query) => unwrap(api.GET('/api/v2/balance/movements', { params: { query: q } })), query, {
        pin: (q, first) => (q.before_id !== undefined || first.data.length === 0 ? q : { ...q, before_id: Math.max(...first.data.map((m) => m.id)) + 1 }),
      }),
    /** Opening and closing balance per day, in the service's time zone; `from` / `to` are `YYYY-MM-DD`. */
    statement: (query: Query<'/api/v2/balance/statement'>, options: CallOptions = {}) =>
      unwrap(api.GET('/api/v2/balance/statement', { params: { query }, signal: options.signal })),
    /** The journal postings of a date range as CSV, streamed as the service writes it. */
    entriesCsv: async (query: Query<'/api/v2/balance/entries.csv'>, options: CallOptions = {}): Promise<ReadableStream<Uint8Array>> => {
      const stream = await unwrap(api.GET('/api/v2/balance/entries.csv', { params: { query }, parseAs: 'stream', signal: options.signal }));
      if (!stream) throw new Error('the statement CSV came without a body');
      return stream;
    },
  };
}

export function banks(api: Api) {
  return {
    /** The banks a transfer may go to (`bank_code`). Not paginated. */
    list: async (options: CallOptions = {}) => (await unwrap(api.GET('/api/v2/banks', { signal: options.signal }))).data,
  };
}
