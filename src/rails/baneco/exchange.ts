// One HTTP exchange with the bank, and what it came to: an answer we could read, a refusal, an HTTP 401,
// or unknown. Unknown is every case where the bank may have acted without our knowing it — no answer
// within BANECO_TIMEOUT, a broken connection, an HTTP 5xx, an answer we cannot read — and the rail never
// treats it as a failure where money could have moved (contract §14.2, §14.4).
import { parseJsonText, type Reading } from './reading.ts';
import { readEnvelope } from './wire.ts';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** Why a call's outcome is unknown. `no_token`: no token could be had, so the operation itself was never sent. */
export type UnknownReason = 'timeout' | 'connection' | 'server_error' | 'unreadable' | 'no_token';

/** Why a call was refused: the bank's responseCode, an HTTP 4xx, or our credentials. */
export type RefusalReason = 'bank' | 'http' | 'credentials';

export type ExchangeResult<T> =
  | { kind: 'ok'; httpStatus: number; value: T }
  | { kind: 'refused'; httpStatus: number; reason: RefusalReason; responseCode: number | null; message: string }
  | { kind: 'unauthorized'; httpStatus: 401 }
  | { kind: 'unknown'; httpStatus: number | null; reason: UnknownReason; problem: string };

export interface ExchangeRequest<T> {
  method: HttpMethod;
  url: string;
  /** The JSON body, or none (GET). */
  body: unknown;
  bearer: string | null;
  timeoutMs: number;
  /** Reads the answer of a responseCode 0. */
  read: (body: unknown) => Reading<T>;
}

/** The largest answer read; a larger one is cut off and unknown (a day of paidQR is far smaller). */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** Sends one request and classifies what came back. Never throws for anything the network or the bank does. */
export async function exchange<T>(request: ExchangeRequest<T>): Promise<ExchangeResult<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  if (request.bearer !== null) headers.authorization = `Bearer ${request.bearer}`;
  let status: number;
  let text: string | null;
  try {
    // One signal covers connecting, the headers and the body: BANECO_TIMEOUT is the whole call.
    const response = await fetch(request.url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(request.timeoutMs),
      // A redirect would carry the token elsewhere: the bank's gateway answers in place or not at all.
      redirect: 'manual',
    });
    status = response.status;
    text = await readCapped(response, MAX_ANSWER_BYTES);
  } catch (error) {
    return networkFailure(error, request.timeoutMs);
  }

  if (status === 401) return { kind: 'unauthorized', httpStatus: 401 };
  if (status >= 500 && status <= 599) return { kind: 'unknown', httpStatus: status, reason: 'server_error', problem: `HTTP ${status}` };
  if (text === null) return { kind: 'unknown', httpStatus: status, reason: 'unreadable', problem: `answer longer than ${MAX_ANSWER_BYTES} bytes` };
  const json = parseJsonText(text);
  const envelope = json.ok ? readEnvelope(json.value) : json;

  if (status >= 400 && status <= 499) {
    // The contract's refusal: the bank (or its gateway) turned the request away without acting on it.
    return envelope.ok
      ? { kind: 'refused', httpStatus: status, reason: 'http', responseCode: envelope.value.responseCode, message: envelope.value.message || `HTTP ${status}` }
      : { kind: 'refused', httpStatus: status, reason: 'http', responseCode: null, message: `HTTP ${status}` };
  }
  if (status < 200 || status > 299) {
    return { kind: 'unknown', httpStatus: status, reason: 'unreadable', problem: `unexpected HTTP ${status}` };
  }
  if (!envelope.ok) return { kind: 'unknown', httpStatus: status, reason: 'unreadable', problem: envelope.problem };
  if (envelope.value.responseCode !== 0) {
    return { kind: 'refused', httpStatus: status, reason: 'bank', responseCode: envelope.value.responseCode, message: envelope.value.message };
  }
  const value = request.read((json as { ok: true; value: unknown }).value);
  return value.ok
    ? { kind: 'ok', httpStatus: status, value: value.value }
    : { kind: 'unknown', httpStatus: status, reason: 'unreadable', problem: value.problem };
}

/** The body as text, or null when it runs past maxBytes (the rest is not waited for). */
async function readCapped(response: Response, maxBytes: number): Promise<string | null> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A thrown fetch or body read: a timeout or a connection problem, named by its code only (no URL, no message text). */
function networkFailure(error: unknown, timeoutMs: number): ExchangeResult<never> {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return { kind: 'unknown', httpStatus: null, reason: 'timeout', problem: `no answer within ${timeoutMs} ms` };
  }
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  const shown = typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : '';
  return { kind: 'unknown', httpStatus: null, reason: 'connection', problem: `connection failed${shown}` };
}
