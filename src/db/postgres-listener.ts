// The one connection of a process that LISTENs for every subscription (PostgreSQL only). A notification
// only wakes someone up (docs/architecture.md, rule 9); this connection may be down for a while, and every
// subscriber is told to poll once it is back, since notifications may have been missed meanwhile.
import pg from 'pg';

type Subscription = { channel: string; handler: (payload: string) => void; onReconnect?: () => void };

/** A connection attempt or a LISTEN that takes longer fails: a database that accepts but never answers must not hang us. */
const CONNECTION_TIMEOUT_MS = 5_000;
/**
 * Longest `subscribe` waits for the connection. Subscribers start while the service starts (Fastify's
 * onReady), which must finish even when the database is unreachable; the connection keeps being tried in
 * the background, and subscribers are told to poll once it is up.
 */
const SUBSCRIBE_WAIT_MS = 2_000;

/**
 * When the connection drops it reconnects with exponential back-off plus jitter, LISTENs again, and tells
 * subscribers to poll.
 */
export class Listener {
  private client: pg.Client | null = null;
  /** Channels LISTENed on the current connection. */
  private listened = new Set<string>();
  private connecting: Promise<void> | null = null;
  private subscriptions = new Set<Subscription>();
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly onBackgroundError: (error: unknown, context: string) => void,
  ) {}

  async subscribe(channel: string, handler: (payload: string) => void, onReconnect?: () => void) {
    const subscription: Subscription = { channel, handler, onReconnect };
    this.subscriptions.add(subscription);
    const listening = this.listenOn().catch((error) => {
      // The database may be down right now: keep the subscription and keep trying in the background,
      // so the service still starts and answers 503 until the database is back.
      this.onBackgroundError(error, 'listening connection');
      this.scheduleReconnect();
    });
    let timer: NodeJS.Timeout | undefined;
    let waitedInVain = false;
    await Promise.race([listening, new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        waitedInVain = true;
        resolve();
      }, SUBSCRIBE_WAIT_MS);
    })]);
    clearTimeout(timer);
    // Listening began after the subscriber went on: what it may have missed meanwhile, it polls for.
    if (waitedInVain) void listening.then(() => { if (this.client) onReconnect?.(); });
    return async () => {
      this.subscriptions.delete(subscription);
      const client = this.client;
      if (client && this.listenersOf(channel) === 0 && this.listened.delete(channel)) {
        await client.query(`unlisten ${quoteIdentifier(channel)}`).catch(() => {});
      }
    };
  }

  /** Connects if needed, then LISTENs on every subscribed channel not listened yet. */
  private async listenOn(): Promise<void> {
    if (!this.client) return this.ensureConnected(); // a new connection LISTENs on everything
    await this.listenToNewChannels(this.client);
  }

  private async listenToNewChannels(client: pg.Client): Promise<void> {
    for (;;) {
      const missing = [...new Set([...this.subscriptions].map((s) => s.channel))].find((channel) => !this.listened.has(channel));
      if (missing === undefined) return;
      this.listened.add(missing);
      await client.query(`listen ${quoteIdentifier(missing)}`);
    }
  }

  private listenersOf(channel: string): number {
    let count = 0;
    for (const s of this.subscriptions) if (s.channel === channel) count++;
    return count;
  }

  private ensureConnected(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'merchant-payments-listener',
      connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
      query_timeout: CONNECTION_TIMEOUT_MS,
      // An idle listening connection whose peer vanished (no RST) is found by TCP keep-alive, not by a query.
      keepAlive: true,
    });
    client.on('notification', (message) => {
      for (const s of this.subscriptions) if (s.channel === message.channel) s.handler(message.payload ?? '');
    });
    client.on('error', (error) => {
      this.onBackgroundError(error, 'listening connection');
      this.dropAndReconnect(client);
    });
    client.on('end', () => this.dropAndReconnect(client));
    try {
      await client.connect();
      this.listened = new Set();
      this.client = client;
      await this.listenToNewChannels(client);
    } catch (error) {
      if (this.client === client) this.client = null;
      await client.end().catch(() => {}); // a connection that could not LISTEN is not kept, nor leaked
      throw error;
    }
    this.failures = 0;
  }

  private dropAndReconnect(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const backoff = Math.min(30_000, 250 * 2 ** this.failures);
    const delay = backoff / 2 + Math.random() * (backoff / 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.ensureConnected().then(
        () => {
          for (const s of this.subscriptions) s.onReconnect?.();
        },
        (error) => {
          this.failures++;
          this.onBackgroundError(error, 'listening connection reconnect');
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
