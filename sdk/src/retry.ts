// The fetch every call goes through: it retries what is safe to send again, and nothing else.
//
// Safe to send again: a read (GET), or a request carrying an Idempotency-Key — the service answers a
// repeated key with the first answer (`Idempotent-Replayed: true`) instead of doing the work twice, so
// a transfer whose answer was lost on the way is not made a second time.
// Retried, when safe: a network failure (the connection dropped, refused or timed out), 409
// IDEMPOTENCY_KEY_IN_USE (the first attempt is still running), 503 (the database was unreachable).
// Retried always: 429, which the service answers before doing any work.
// The wait is the answer's Retry-After when it gives one, else an exponential backoff with full jitter.

export interface RetryOptions {
  /** Retries after the first attempt (default 2: three attempts in all). */
  maxRetries: number;
  /** Longest wait between attempts, also for a Retry-After; a longer Retry-After is not waited for (default 20 s). */
  maxDelayMs: number;
  /** First backoff; doubled at each retry (default 500 ms). */
  initialDelayMs: number;
  /** Longest wait for each attempt's answer; a long poll's `wait` is added to it (default 60 s). */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 2, maxDelayMs: 20_000, initialDelayMs: 500, timeoutMs: 60_000 };

type Fetch = (request: Request) => Promise<Response>;

export function retryingFetch(fetchImpl: Fetch, options: RetryOptions): Fetch {
  return async (request) => {
    const replayable = request.method === 'GET' || request.method === 'HEAD' || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt += 1) {
      // The time limit is on the answer's headers; a long body (the CSV export) streams as long as it takes.
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException('No answer within the time limit', 'TimeoutError')), options.timeoutMs + longPollMs(request));
      const sent = new Request(request.clone(), { signal: AbortSignal.any([request.signal, timeout.signal]) });
      let response: Response;
      try {
        response = await fetchImpl(sent);
      } catch (error) {
        // The caller's own abort is final; a timeout or a network failure is retried when safe.
        if (request.signal.aborted || !replayable || attempt >= options.maxRetries) throw error;
        await sleep(backoff(attempt, options), request.signal);
        continue;
      } finally {
        clearTimeout(timer);
      }
      const delay = attempt < options.maxRetries ? await retryDelay(response, replayable, attempt, options) : null;
      if (delay === null) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

/** How long to wait before sending again after `response`, or null when it is the answer to keep. */
async function retryDelay(response: Response, replayable: boolean, attempt: number, options: RetryOptions): Promise<number | null> {
  const retried = response.status === 429
    || (replayable && response.status === 503)
    || (replayable && response.status === 409 && (await codeOf(response)) === 'IDEMPOTENCY_KEY_IN_USE');
  if (!retried) return null;
  const asked = retryAfterMs(response.headers.get('retry-after'));
  if (asked === null) return backoff(attempt, options);
  return asked <= options.maxDelayMs ? asked : null;
}

async function codeOf(response: Response): Promise<unknown> {
  try {
    return ((await response.clone().json()) as { code?: unknown }).code;
  } catch {
    return undefined;
  }
}

/** An IMF-fixdate (RFC 9110 §5.6.7), the HTTP-date senders must use: `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** Retry-After in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  const value = header?.trim() ?? '';
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (IMF_FIXDATE.test(value)) return Math.max(0, Date.parse(value) - now);
  return null;
}

function backoff(attempt: number, options: RetryOptions): number {
  return Math.random() * Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** attempt);
}

/** A long poll (`?wait=N`) is held up to N seconds by design: that is not a timeout. */
function longPollMs(request: Request): number {
  const wait = Number(new URL(request.url).searchParams.get('wait'));
  return Number.isFinite(wait) && wait > 0 ? wait * 1000 : 0;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
