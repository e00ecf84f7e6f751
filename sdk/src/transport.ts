// The typed HTTP client every resource calls: openapi-fetch over the generated paths, with the API key,
// the retrying fetch (retry.ts), and one rule for answers — the body of a success, an ApiError otherwise.
import createFetchClient, { type Client } from 'openapi-fetch';
import { apiErrorOf } from './errors.ts';
import type { paths } from './generated/openapi.ts';
import { DEFAULT_RETRY, retryingFetch, type RetryOptions } from './retry.ts';

export type Api = Client<paths>;

export interface TransportOptions {
  /** Where the service runs, e.g. `http://127.0.0.1:3000` (without `/api/v2`). */
  baseUrl: string;
  /** A merchant key (`mk_…`), a terminal key (`tk_…`) or a partner master key (`pk_master_…`). */
  apiKey: string;
  /** Retries and timeouts (retry.ts); `{ maxRetries: 0 }` turns retries off. */
  retry?: Partial<RetryOptions>;
  /** The fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

export function createTransport(options: TransportOptions): Api {
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  return createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'X-API-KEY': options.apiKey, 'User-Agent': 'merchant-payments-sdk/0.1.0' },
    fetch: retryingFetch(fetchImpl, retryOptions(options.retry)),
  });
}

/** The defaults, with what the caller set; a key given as `undefined` keeps its default. */
function retryOptions(given: Partial<RetryOptions> = {}): RetryOptions {
  const set = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...DEFAULT_RETRY, ...set };
}

interface Answer<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/** The answer's body when it is a success; else the ApiError it carries. */
export async function unwrap<Data>(pending: Promise<Answer<Data>>): Promise<Data> {
  const { data, error, response } = await pending;
  if (response.ok) return data as Data;
  throw apiErrorOf(response, error);
}

/** A fresh Idempotency-Key (UUID v4), unless the caller brings its own (to retry across restarts). */
export function idempotencyKey(given?: string): string {
  return given ?? crypto.randomUUID();
}

/** Options of the calls that move money or create something: the key that makes retrying them safe. */
export interface CreateOptions {
  /** Keep it with your order to retry after your own process restarts; one is made for each call otherwise. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface CallOptions {
  signal?: AbortSignal;
}
