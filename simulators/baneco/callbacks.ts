// The bank's calls to the merchant: `api/qrsimple/notifyPaymentQR` when a QR is paid and
// `api/notifyStatus` when a batch item is decided, both POSTed under the merchant's callback base.
//
// The specification defines no signature, retries, timeouts or source addresses for them. The
// simulator's choices: no signature (as specified); a callback that gets no answer, a connection error or
// an HTTP 5xx is tried again up to `callbacks.retries` times with doubling back-off; any other answer ends
// it (an answer other than `{responseCode: 0}` is recorded but not retried). The knobs can drop, repeat,
// delay, reorder and contradict callbacks, so a merchant can prove it treats them as hints.
import http from 'node:http';
import https from 'node:https';
import type { Knobs } from './knobs.ts';

export type CallbackKind = 'notifyPaymentQR' | 'notifyStatus';

const PATHS: Record<CallbackKind, string> = {
  notifyPaymentQR: 'api/qrsimple/notifyPaymentQR',
  notifyStatus: 'api/notifyStatus',
};

/** One try of one callback, as `GET /_control/callbacks` lists it. */
export interface CallbackAttempt {
  /** Same for every try (and the duplicate) of one callback. */
  callbackId: string;
  kind: CallbackKind;
  url: string | null;
  body: unknown;
  /** 1 for the first try. */
  attempt: number;
  /** 2 for the second copy sent by the `duplicate` knob. */
  copy: number;
  /** A callback sent by the `contradictNext` knob, opposite to what the bank decided. */
  contradiction: boolean;
  at: string;
  outcome: 'answered' | 'dropped' | 'timeout' | 'error' | 'skipped';
  httpStatus?: number;
  /** The merchant's answer: parsed JSON, or the text when it is not JSON. */
  answer?: unknown;
  /** Whether the answer was `{responseCode: 0}`. */
  acknowledged: boolean;
  error?: string;
  durationMs?: number;
  /** Whether another try is scheduled after this one. */
  willRetry: boolean;
}

interface Outgoing {
  callbackId: string;
  kind: CallbackKind;
  body: unknown;
  copy: number;
  contradiction: boolean;
}

const MAX_RECORDED = 1000;
const MAX_ANSWER_BYTES = 64 * 1024;

export class CallbackDispatcher {
  readonly attempts: CallbackAttempt[] = [];
  private nextId = 1;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly requests = new Set<http.ClientRequest>();
  /** Callbacks held by the out-of-order knob until the window closes. */
  private held: Outgoing[] = [];
  private heldTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Bumped by clear(): a try started before it records nothing and schedules nothing when it ends. */
  private generation = 0;

  constructor(
    private readonly base: string | null,
    private readonly knobs: Knobs,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Timers and requests not finished yet: 0 once every callback has had its last try. */
  pending(): number {
    return this.timers.size + this.requests.size + this.held.length;
  }

  /** The bank tells the merchant about a payment (a PaymentQR). */
  notifyPayment(payment: unknown): void {
    this.emit('notifyPaymentQR', { payment }, false);
  }

  /**
   * The bank tells the client about a batch item. `opposite` is what a contradicting callback would
   * say; the `contradictNext` knob sends it some time after the real one.
   */
  notifyStatus(body: Record<string, unknown>, opposite: Record<string, unknown>): void {
    this.emit('notifyStatus', body, false);
    const knobs = this.knobs.callbacks;
    if (knobs.contradictNext > 0) {
      knobs.contradictNext -= 1;
      this.after(knobs.contradictAfterMs, () => this.emit('notifyStatus', opposite, true));
    }
  }

  private emit(kind: CallbackKind, body: unknown, contradiction: boolean): void {
    if (this.stopped) return;
    const callbackId = `cb-${this.nextId++}`;
    const knobs = this.knobs.callbacks;
    if (this.base === null) {
      this.record({ callbackId, kind, body, copy: 1, contradiction }, 1, { outcome: 'skipped', error: 'no callback base configured' });
      return;
    }
    if (knobs.dropNext > 0) {
      knobs.dropNext -= 1;
      this.record({ callbackId, kind, body, copy: 1, contradiction }, 1, { outcome: 'dropped' });
      return;
    }
    const copies = knobs.duplicate ? 2 : 1;
    for (let copy = 1; copy <= copies; copy++) {
      const outgoing: Outgoing = { callbackId, kind, body, copy, contradiction };
      if (knobs.outOfOrder) this.hold(outgoing);
      else this.schedule(outgoing);
    }
  }

  /** Out of order: gather what comes within the window, then send it last-first. */
  private hold(outgoing: Outgoing): void {
    this.held.push(outgoing);
    if (this.heldTimer) return;
    this.heldTimer = setTimeout(() => {
      this.heldTimer = undefined;
      const batch = this.held.reverse();
      this.held = [];
      // One after the other (each once its first try ended), so they also arrive in this order.
      const sendNext = () => {
        const next = batch.shift();
        if (next) this.schedule(next, sendNext);
      };
      sendNext();
    }, this.knobs.callbacks.outOfOrderWindowMs);
  }

  /** Sends after the `delayMs` knob; `firstTryEnded` runs once the first try has its outcome. */
  private schedule(outgoing: Outgoing, firstTryEnded?: () => void): void {
    const delay = this.knobs.callbacks.delayMs;
    if (delay > 0) this.after(delay, () => this.attempt(outgoing, 1, firstTryEnded));
    else this.attempt(outgoing, 1, firstTryEnded);
  }

  private attempt(outgoing: Outgoing, attempt: number, tryEnded?: () => void): void {
    if (this.stopped) return;
    const url = new URL(PATHS[outgoing.kind], this.base!);
    const started = Date.now();
    const payload = JSON.stringify(outgoing.body);
    const client = url.protocol === 'https:' ? https : http;
    const generation = this.generation;
    let settled = false;
    const finish = (result: Partial<CallbackAttempt> & { outcome: CallbackAttempt['outcome'] }) => {
      if (settled) return;
      settled = true;
      this.requests.delete(request);
      if (generation !== this.generation) return;
      const status = result.httpStatus;
      const worthRetrying = result.outcome === 'timeout' || result.outcome === 'error' || (status !== undefined && status >= 500);
      const knobs = this.knobs.callbacks;
      const willRetry = worthRetrying && attempt <= knobs.retries && !this.stopped;
      this.record(outgoing, attempt, { ...result, durationMs: Date.now() - started, willRetry });
      tryEnded?.();
      if (willRetry) this.after(knobs.retryBaseMs * 2 ** (attempt - 1), () => this.attempt(outgoing, attempt + 1));
    };
    // agent: false: one connection per try, closed after it, so stop() leaves no pooled socket behind.
    const request = client.request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload), 'user-agent': 'baneco-simulator' },
    });
    this.requests.add(request);
    const timer = setTimeout(() => {
      finish({ outcome: 'timeout', error: `no answer within ${this.knobs.callbacks.timeoutMs} ms` });
      request.destroy();
    }, this.knobs.callbacks.timeoutMs);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
      });
      response.on('error', () => undefined);
      response.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let answer: unknown = text;
        try {
          answer = JSON.parse(text);
        } catch {
          // Kept as text: the attempt list shows what the merchant really answered.
        }
        const acknowledged = typeof answer === 'object' && answer !== null && (answer as { responseCode?: unknown }).responseCode === 0;
        finish({ outcome: 'answered', httpStatus: response.statusCode ?? 0, answer, acknowledged });
      });
    });
    request.on('error', (error) => {
      clearTimeout(timer);
      finish({ outcome: 'error', error: error.message });
    });
    request.end(payload);
  }

  private record(outgoing: Outgoing, attempt: number, result: Partial<CallbackAttempt> & { outcome: CallbackAttempt['outcome'] }): void {
    this.attempts.push({
      callbackId: outgoing.callbackId,
      kind: outgoing.kind,
      url: this.base === null ? null : new URL(PATHS[outgoing.kind], this.base).toString(),
      body: outgoing.body,
      attempt,
      copy: outgoing.copy,
      contradiction: outgoing.contradiction,
      at: new Date().toISOString(),
      acknowledged: false,
      willRetry: false,
      ...result,
    });
    const last = this.attempts[this.attempts.length - 1]!;
    const summary = last.outcome === 'answered' ? `HTTP ${last.httpStatus}${last.acknowledged ? ' (responseCode 0)' : ''}` : `${last.outcome}${last.error ? ` (${last.error})` : ''}`;
    this.log(`callback ${last.callbackId} ${last.kind}${last.copy > 1 ? ' copy 2' : ''}${last.contradiction ? ' contradiction' : ''} try ${attempt}: ${summary}${last.willRetry ? ', will retry' : ''}`);
    if (this.attempts.length > MAX_RECORDED) this.attempts.splice(0, this.attempts.length - MAX_RECORDED);
  }

  private after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }

  /** Cancels every pending callback (reset), keeping the dispatcher usable. */
  clear(): void {
    this.generation += 1;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.heldTimer = undefined;
    this.held = [];
    const inFlight = [...this.requests];
    this.requests.clear();
    for (const request of inFlight) request.destroy();
    this.attempts.length = 0;
  }

  stop(): void {
    this.stopped = true;
    this.clear();
  }
}
