// Dispatcher worker: claims due deliveries (SKIP LOCKED, with a lease), POSTs each event signed per
// Standard Webhooks with a fresh timestamp, and records every attempt. Sends run concurrently, up to
// `maxInFlight`, and do not hold up the next claim: one slow receiver (up to WEBHOOK_TIMEOUT) must not
// delay a payment's webhook to everyone else. Results are written in coalesced batches (one transaction
// for all results that finished meanwhile), so the database work per delivery stays a fraction of a
// statement (figures in BENCHMARKS.md). A worker that dies mid-send leaves its lease to expire; the delivery is then
// claimed again and retried. Completion is guarded by the lease holder, so a late worker changes nothing.
// Sending slots are shared per owner, so one merchant's slow endpoints cannot hold up another's webhooks.
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import { isDatabaseUnavailable, SqlState, type Database } from '../db/database.ts';
import * as events from '../events/service.ts';
import { randomBase62 } from '../ids.ts';
import type { Clock } from '../time.ts';
import type { Job } from '../kernel/job.ts';
import type { SecretBox } from '../kernel/secret-box.ts';
import type { WebhookMetrics } from './metrics.ts';
import { DELIVERIES_CHANNEL, signingSecrets } from './service.ts';
import { signedHeaders, type SignedHeaders } from './signing.ts';
import { DESTINATION_UNREACHABLE, guardedLookup, refuseAtDelivery, SsrfRefusedError, type DestinationPolicy } from './ssrf.ts';
import * as store from './store.ts';
import type { ClaimedDelivery, DeliveryResult, EndpointRow } from './store.ts';
import { toEventPayload } from '../events/views.ts';

/** Extra lease time beyond the send timeout, for writing the result; past it the delivery is anyone's. */
const LEASE_MARGIN_MS = 60_000;
/** Pause before writing delivery results again while the database is unreachable. */
const RESULT_RETRY_MS = 1_000;
const CLAIM_BATCH = 100;
const MAX_IN_FLIGHT = 256;
/**
 * Sends in flight for one owner (merchant or partner, all its endpoints together) in this worker; its further
 * deliveries wait until one finishes. A quarter of MAX_IN_FLIGHT: an owner whose receivers all hang until
 * the timeout leaves three quarters of the slots to everyone else, and an owner with one fast endpoint sends
 * as many at once as an endpoint could before this limit was per owner (the throughput bench's case).
 */
const MAX_IN_FLIGHT_PER_OWNER = 64;
const MAX_ERROR_LENGTH = 500;

export interface DispatcherOptions {
  db: Database;
  clock: Clock;
  /** Where deliveries may go (ssrf.ts): https only in live mode, guarded addresses in live or when denied. */
  destinations: DestinationPolicy;
  /** Opens the sealed signing secrets (ENCRYPTION_KEYS). */
  secrets: SecretBox;
  timeoutMs: number;
  retryScheduleMs: number[];
  metrics?: WebhookMetrics;
  onError?: (error: unknown, context: string) => void;
  workerId?: string;
  batchSize?: number;
  maxInFlight?: number;
  maxInFlightPerOwner?: number;
}

interface PendingCompletion {
  result: DeliveryResult;
  done: () => void;
}

export class Dispatcher {
  readonly workerId: string;
  private readonly batchSize: number;
  private readonly maxInFlight: number;
  private readonly maxInFlightPerOwner: number;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly inFlightByOwner = new Map<string, number>();
  /** Owners a claim gave all the slots they had left: their further due deliveries wait for a send to finish. */
  private readonly heldBack = new Set<string>();
  private pendingCompletions: PendingCompletion[] = [];
  private writing: Promise<void> | null = null;
  private wakeRun: Promise<void> | null = null;
  private wakeAgain = false;
  private stopped = false;
  // Keep-alive connections: a fresh TCP (and TLS) handshake per webhook would dominate latency. As many
  // sockets as sends in flight, so no request waits in the agent's queue while its timeout runs, and as
  // many kept idle, so the sockets of one wave of sends are reused by the next instead of reopened.
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly lookup: typeof import('node:dns').lookup;

  constructor(private readonly options: DispatcherOptions) {
    this.workerId = options.workerId ?? `${os.hostname()}:${process.pid}:${randomBase62(8)}`;
    this.batchSize = options.batchSize ?? CLAIM_BATCH;
    this.maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    this.maxInFlightPerOwner = options.maxInFlightPerOwner ?? MAX_IN_FLIGHT_PER_OWNER;
    const agentOptions = { keepAlive: true, maxSockets: this.maxInFlight, maxFreeSockets: this.maxInFlight };
    this.httpAgent = new http.Agent(agentOptions);
    this.httpsAgent = new https.Agent(agentOptions);
    this.lookup = guardedLookup(options.destinations) as unknown as typeof import('node:dns').lookup;
  }

  /** Claims one batch and starts sending it; true when more work may be waiting. */
  async runOnce(): Promise<boolean> {
    if (this.stopped) return false;
    const capacity = this.maxInFlight - this.inFlight.size;
    if (capacity <= 0) {
      await Promise.race(this.inFlight);
      return true;
    }
    const { db, clock, timeoutMs, metrics } = this.options;
    const limit = Math.min(capacity, this.batchSize);
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + timeoutMs + LEASE_MARGIN_MS);
    // One statement, atomic on its own: no explicit transaction, so a claim costs one round trip.
    const slots = { inFlight: new Map(this.inFlightByOwner), perOwner: this.maxInFlightPerOwner };
    const claimedByOwner = new Map<string, number>();
    const claimed = await store.claimDueDeliveries(db, this.workerId, now, leaseUntil, limit, slots);
    if (claimed.length === 0) return false;
    // Slots are taken at once, before the reads below, so a claim running meanwhile (a wake-up beside the
    // runner's loop) counts them. Each is freed as soon as its exchange ends, not when the result is
    // written, so the next claim overlaps with the batched write.
    const releases = claimed.map((delivery) => {
      claimedByOwner.set(delivery.owner, (claimedByOwner.get(delivery.owner) ?? 0) + 1);
      return this.takeOwnerSlot(delivery.owner);
    });
    for (const delivery of claimed) metrics?.dispatchLag.observe(Math.max(0, now.getTime() - delivery.next_attempt_at.getTime()) / 1000);
    let eventsById: Map<string, events.EventRow>;
    let endpointsById: Map<string, EndpointRow>;
    try {
      [eventsById, endpointsById] = await Promise.all([
        events.getEventsByIds(db, [...new Set(claimed.map((d) => d.event_id))]),
        store.findEndpointsByIds(db, [...new Set(claimed.map((d) => d.endpoint_id))]),
      ]);
    } catch (error) {
      for (const release of releases) release(); // the leases run out and the deliveries are claimed again
      throw error;
    }
    for (const [index, delivery] of claimed.entries()) {
      const release = releases[index]!;
      const work = this.deliver(delivery, eventsById.get(delivery.event_id), endpointsById.get(delivery.endpoint_id), release)
        .catch((error) => this.options.onError?.(error, 'webhook delivery'))
        .finally(() => {
          release();
          this.inFlight.delete(work);
        });
      this.inFlight.add(work);
    }
    // An owner that got every slot it had left may have more due: the claim left those, and what was due
    // behind them, for later. Claim again now (others' deliveries; its own if sends finished meanwhile), and
    // wake when its sends finish (takeOwnerSlot).
    let ownerLimited = false;
    for (const [owner, count] of claimedByOwner) {
      if ((slots.inFlight.get(owner) ?? 0) + count < this.maxInFlightPerOwner) continue;
      this.heldBack.add(owner);
      ownerLimited = true;
    }
    return claimed.length === limit || ownerLimited;
  }

  /** Counts a send for the owner; the returned function (idempotent) gives the slot back. */
  private takeOwnerSlot(owner: string): () => void {
    this.inFlightByOwner.set(owner, (this.inFlightByOwner.get(owner) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlightByOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.inFlightByOwner.set(owner, left);
      else this.inFlightByOwner.delete(owner);
      // A held-back owner's waiting deliveries can be claimed now, not at the next poll: once an eighth of its
      // slots are free, so a busy owner's claims take several deliveries at a time rather than one per send.
      if (left <= this.maxInFlightPerOwner - Math.max(1, Math.floor(this.maxInFlightPerOwner / 8)) && this.heldBack.delete(owner) && !this.stopped) {
        this.wake();
      }
    };
  }

  /**
   * Claims now, outside the runner's loop (an owner whose send finished is under its limit again).
   * Wake-ups during a claim are folded into one more claim.
   */
  wake(): void {
    if (this.wakeRun) {
      this.wakeAgain = true;
      return;
    }
    this.wakeRun = (async () => {
      do {
        this.wakeAgain = false;
        while (await this.runOnce());
      } while (this.wakeAgain);
    })()
      .catch((error) => this.options.onError?.(error, 'webhook dispatcher wake-up'))
      .finally(() => {
        this.wakeRun = null;
      });
  }

  /** Resolves when every send started so far has been answered and its result written. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0 || this.wakeRun) {
      await this.wakeRun;
      await Promise.all([...this.inFlight]);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.settled();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  job(): Job {
    return {
      name: 'webhook-dispatcher',
      // The poll finds retries that became due; new deliveries arrive by notification: written with their
      // events (a committed emit notifies EVENTS_CHANNEL when an endpoint takes one of its events) or
      // scheduled again by a redelivery.
      intervalMs: 1_000,
      wakeChannels: [events.EVENTS_CHANNEL, DELIVERIES_CHANNEL],
      runOnce: () => this.runOnce(),
      stop: () => this.stop(),
    };
  }

  private async deliver(
    delivery: ClaimedDelivery, event: events.EventRow | undefined, endpoint: EndpointRow | undefined, exchangeEnded: () => void,
  ): Promise<void> {
    const { clock, metrics } = this.options;
    const sentAt = clock.now();
    const base = { deliveryId: delivery.id, eventId: delivery.event_id, endpointId: delivery.endpoint_id, attempt: delivery.attempts_total, sentAt };
    if (!event || !endpoint || endpoint.status !== 'enabled' || endpoint.deleted_at) {
      // Disabled or deleted after the event was written: nothing is sent.
      metrics?.attempts.inc({ outcome: 'endpoint_disabled' });
      exchangeEnded();
      return this.complete({ ...base, outcome: 'abandoned', statusCode: null, durationMs: 0, error: 'endpoint disabled', attempted: false });
    }
    const body = JSON.stringify(toEventPayload(event));
    const headers = signedHeaders(signingSecrets(endpoint, sentAt, this.options.secrets), event.id, sentAt, body);
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let refused = false;
    try {
      statusCode = await this.post(endpoint.url, body, headers);
    } catch (caught) {
      refused = caught instanceof SsrfRefusedError || (caught as { cause?: unknown }).cause instanceof SsrfRefusedError;
      error = refused ? DESTINATION_UNREACHABLE : describeSendError(caught, this.options.destinations.guardAddresses);
    }
    const durationMs = Math.round(performance.now() - started);
    exchangeEnded();
    const succeeded = statusCode !== null && statusCode >= 200 && statusCode < 300;
    metrics?.attemptDuration.observe({ outcome: succeeded ? 'succeeded' : 'failed' }, durationMs / 1000);
    return this.complete({
      ...base,
      // 410 Gone: the receiver asks us to stop (docs/api-reference.md#retries); the endpoint is disabled when the result is written.
      outcome: succeeded ? 'succeeded' : statusCode === 410 ? 'abandoned' : 'failed',
      statusCode,
      durationMs,
      error,
      attempted: true,
      refused,
    });
  }

  /** POSTs the body and resolves with the status code; no redirect is followed; the whole exchange is bounded by the timeout. */
  private post(urlText: string, body: string, headers: SignedHeaders): Promise<number> {
    const { destinations, timeoutMs } = this.options;
    return new Promise<number>((resolve, reject) => {
      let url: URL;
      try {
        url = new URL(urlText);
        refuseAtDelivery(url, destinations);
      } catch (error) {
        reject(error);
        return;
      }
      const secure = url.protocol === 'https:';
      const request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'merchant-payments-webhooks/1.0',
        },
        // Resolve, refuse what the policy refuses (link-local and metadata in every mode), connect to the checked address (ssrf.ts).
        lookup: this.lookup,
      });
      const timer = setTimeout(() => {
        const error = new DeliveryTimeoutError(timeoutMs);
        request.destroy(error);
        reject(error); // settles even if the response had started and no further event comes
      }, timeoutMs);
      request.on('response', (response) => {
        response.resume(); // the body is not read, only drained so the connection can be reused
        response.on('end', () => {
          clearTimeout(timer);
          resolve(response.statusCode ?? 0);
        });
        response.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
      request.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.end(body);
    });
  }

  /** Queues a result; results are written together, one transaction per batch. */
  private complete(result: DeliveryResult): Promise<void> {
    return new Promise<void>((resolve) => {
      this.pendingCompletions.push({ result, done: resolve });
      this.writing ??= this.writeQueuedResults().finally(() => {
        this.writing = null;
      });
    });
  }

  private async writeQueuedResults(): Promise<void> {
    let batch: PendingCompletion[] = [];
    let failingSinceMs: number | null = null;
    while (this.pendingCompletions.length > 0 || batch.length > 0) {
      batch = [...batch, ...this.pendingCompletions];
      this.pendingCompletions = [];
      try {
        await this.writeResults(batch.map((item) => item.result));
      } catch (error) {
        this.options.onError?.(error, 'writing webhook delivery results');
        // While the database is away, keep the results and write them when it is back: the receivers
        // already have these webhooks, and a lease left to run out would send each again up to a minute
        // later. Past the lease (or when stopping) the write is moot — the guarded completion would find the
        // delivery taken by another worker — and the lease's expiry retries it: at least once, never lost.
        failingSinceMs ??= performance.now();
        const withinLease = performance.now() - failingSinceMs < LEASE_MARGIN_MS - RESULT_RETRY_MS;
        // A deadlock victim's transaction wrote nothing, so writing the batch again is safe.
        const retriable = isDatabaseUnavailable(error) || (error as { code?: unknown }).code === SqlState.DEADLOCK_DETECTED;
        if (retriable && withinLease && !this.stopped) {
          await new Promise((resolve) => setTimeout(resolve, RESULT_RETRY_MS));
          continue;
        }
      }
      for (const item of batch) item.done();
      batch = [];
      failingSinceMs = null;
    }
  }

  private async writeResults(results: DeliveryResult[]): Promise<void> {
    const { db, clock, retryScheduleMs, metrics } = this.options;
    const now = clock.now();
    const completed = await db.transaction(async (tx) => {
      await store.recordAttempts(tx, results);
      const rows = await store.completeDeliveries(tx, this.workerId, results, retryScheduleMs, now);
      const held = new Set(rows.map((row) => row.id));
      const gone = results.filter((r) => r.statusCode === 410 && held.has(r.deliveryId)).map((r) => r.endpointId);
      for (const endpointId of new Set(gone)) await store.disableEndpoint(tx, endpointId, now);
      if (gone.length > 0) await store.failPendingDeliveriesOfEndpoints(tx, [...new Set(gone)], 'endpoint answered 410 Gone and was disabled', now);
      return rows;
    });
    if (metrics) {
      const statusById = new Map(completed.map((row) => [row.id, row.status]));
      for (const result of results) {
        if (!result.attempted) continue;
        const status = statusById.get(result.deliveryId);
        const outcome = result.refused ? 'refused' : status === undefined ? 'stale' : status === 'pending' ? 'retry_scheduled' : status;
        metrics.attempts.inc({ outcome });
      }
    }
  }
}

/** The send took longer than WEBHOOK_TIMEOUT; recorded as it is (a timeout says nothing of what a name resolved to). */
class DeliveryTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = 'DeliveryTimeoutError';
  }
}

/** TLS failures happen only once connected to a checked address, and tell the owner about its own certificate. */
const TLS_ERROR_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_)/;

/**
 * What an attempt records for a send that got no HTTP answer. When addresses are guarded, a name that does not
 * resolve and a connection that fails read like a refused destination (DESTINATION_UNREACHABLE): otherwise
 * the difference between "no such host" and "refused" maps which internal names exist. Timeouts and TLS
 * errors keep their words; a default sandbox, which may reach any private address anyway, keeps every detail.
 */
function describeSendError(error: unknown, guarded: boolean): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof DeliveryTimeoutError) return error.message;
  if (guarded && !(typeof code === 'string' && TLS_ERROR_CODE.test(code))) return DESTINATION_UNREACHABLE;
  if (error instanceof Error) {
    const text = typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
    return text.slice(0, MAX_ERROR_LENGTH);
  }
  return 'delivery failed';
}
