// Simple QRs (pay-in): create, read, list, cancel, a QR's payments, and waiting for the payment.
import { QrNotPaidError } from './errors.ts';
import { List } from './pages.ts';
import { sleep } from './retry.ts';
import { idempotencyKey, unwrap, type Api, type CallOptions, type CreateOptions } from './transport.ts';
import type { Query, SimpleQr, SimpleQrCreate } from './types.ts';

/** Longest hold asked of the service per long poll (it allows 30 s; proxies often cut at 30 s). */
const LONG_POLL_SECONDS = 25;
/** Least time between two polls of one QR. */
const MIN_POLL_INTERVAL_MS = 1000;

export interface WaitOptions {
  signal?: AbortSignal;
  /** Give up after this many milliseconds, rejecting with a `TimeoutError` (none by default). */
  timeout?: number;
}

export function simpleQrs(api: Api) {
  const get = (id: string, options: CallOptions = {}) =>
    unwrap(api.GET('/api/v2/simple-qrs/{id}', { params: { path: { id } }, signal: options.signal }));

  return {
    create: (body: SimpleQrCreate, options: CreateOptions = {}) =>
      unwrap(api.POST('/api/v2/simple-qrs', {
        body, params: { header: { 'Idempotency-Key': idempotencyKey(options.idempotencyKey) } }, signal: options.signal,
      })),
    get,
    list: (query: Query<'/api/v2/simple-qrs'> = {}) =>
      new List((q: typeof query) => unwrap(api.GET('/api/v2/simple-qrs', { params: { query: q } })), query),
    cancel: (id: string, options: CallOptions = {}) =>
      unwrap(api.POST('/api/v2/simple-qrs/{id}/cancel', { params: { path: { id } }, signal: options.signal })),
    payments: (id: string, query: Omit<Query<'/api/v2/simple-qrs/{id}/payments'>, 'id'> = {}) =>
      new List((q: typeof query) => unwrap(api.GET('/api/v2/simple-qrs/{id}/payments', { params: { path: { id }, query: q } })), query),

    /**
     * Resolves with the QR once it is paid: a single-use QR when it is PAID; a multi-use QR at its next
     * payment (or when its last allowed payment makes it PAID). Rejects with QrNotPaidError when it is
     * canceled or expires first, and with the signal's reason (a TimeoutError for `timeout`) when given up.
     * It long-polls with the QR's ETag: one request held up to 25 s at a time, answered at once on a change.
     */
    async waitUntilPaid(id: string, options: WaitOptions = {}): Promise<SimpleQr> {
      const signals = [options.signal, options.timeout === undefined ? undefined : AbortSignal.timeout(options.timeout)];
      const signal = AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
      const giveUpAt = options.timeout === undefined ? Infinity : Date.now() + options.timeout;
      const first = await api.GET('/api/v2/simple-qrs/{id}', { params: { path: { id } }, signal });
      let qr = await unwrap(Promise.resolve(first));
      let etag = first.response.headers.get('etag');
      const paymentsBefore = qr.payments_count;
      for (;;) {
        if (qr.status === 'PAID' || (qr.is_multi_use && qr.payments_count > paymentsBefore)) return qr;
        if (qr.status === 'CANCELED') throw new QrNotPaidError(qr);
        signal.throwIfAborted();
        // Never ask the service to hold longer than the caller will wait: the connection stays reusable.
        const wait = Math.max(1, Math.min(LONG_POLL_SECONDS, Math.ceil((giveUpAt - Date.now()) / 1000)));
        const asked = Date.now();
        const answer = await api.GET('/api/v2/simple-qrs/{id}', {
          params: { path: { id }, query: { wait }, header: etag ? { 'If-None-Match': etag } : {} },
          signal,
        });
        if (answer.response.status === 304) {
          // Unchanged after the hold: ask again. A 304 that was not held (a service shutting down, a
          // cache on the way) is not asked again at once, which would be a busy loop.
          if (Date.now() - asked < MIN_POLL_INTERVAL_MS) await sleep(MIN_POLL_INTERVAL_MS, signal);
          continue;
        }
        qr = await unwrap(Promise.resolve(answer));
        etag = answer.response.headers.get('etag');
      }
    },
  };
}
