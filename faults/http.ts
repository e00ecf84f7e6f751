// One HTTP exchange with the service, timed, with a hard client-side bound; a lost answer is a value, not an exception.

export interface Exchange {
  method: string;
  /** A route label (`POST /api/v2/transfers`), never the raw id-bearing URL, so figures group by route. */
  route: string;
  sentAt: number;
  endedAt: number;
  ms: number;
  /** null: no answer (refused, reset, or the client bound passed). */
  status: number | null;
  headers: Headers | null;
  body: unknown;
  error: string | null;
}

export interface RequestOptions {
  route?: string;
  apiKey?: string;
  adminToken?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The client's patience; a request past it counts as hanging. */
  timeoutMs?: number;
}

export async function request(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<Exchange> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['X-API-KEY'] = options.apiKey;
  if (options.adminToken) headers.Authorization = `Bearer ${options.adminToken}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const route = options.route ?? `${method} ${path}`;
  const sentAt = Date.now();
  const started = performance.now();
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
    });
    const text = await response.text();
    let body: unknown = text;
    if (text && (response.headers.get('content-type') ?? '').includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const ms = performance.now() - started;
    return { method, route, sentAt, endedAt: Date.now(), ms, status: response.status, headers: response.headers, body, error: null };
  } catch (error) {
    const ms = performance.now() - started;
    return { method, route, sentAt, endedAt: Date.now(), ms, status: null, headers: null, body: null, error: describeFetchError(error) };
  }
}

function describeFetchError(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return 'timeout';
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(error);
}

export function errorCode(exchange: Exchange): string | null {
  const body = exchange.body as { code?: unknown } | null;
  return body && typeof body === 'object' && typeof body.code === 'string' ? body.code : null;
}

export function describe(exchange: Exchange): string {
  const what = exchange.status === null ? `no answer (${exchange.error})` : `${exchange.status}${errorCode(exchange) ? ` ${errorCode(exchange)}` : ''}`;
  return `${exchange.route} → ${what} in ${Math.round(exchange.ms)} ms`;
}
