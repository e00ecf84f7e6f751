// Notifications shared by both adapters: a notification only wakes a listener up (docs/architecture.md,
// rule 9; pollers are the safety net), and reaches every listener of every process at least once.
//
// In this process it is handed to the listeners at once: a commit here is seen here before the
// transaction call returns (the QR read cache drops the QR, a job wakes), with no round trip through the
// database. Other processes hear it through PostgreSQL's NOTIFY, and so does this one a moment later: a
// listener may be told twice, which costs it one more re-read and nothing else.
//
// Sends are coalesced: while one batch is being sent, further requests for the same channel and payload
// collapse into the next batch, so a burst of 1,000 payments costs a handful of NOTIFY statements, each
// in its own tiny transaction outside the money transactions.

export type NotificationBatchSender = (notifications: Array<{ channel: string; payload: string }>) => Promise<void>;
export type NotificationHandler = (payload: string) => void;

export class CoalescingNotifier {
  private pending = new Map<string, { channel: string; payload: string }>();
  private inFlight: Promise<void> | null = null;
  private readonly localListeners = new Map<string, Set<NotificationHandler>>();

  constructor(
    private readonly send: NotificationBatchSender,
    private readonly onError: (error: unknown, context: string) => void,
  ) {}

  /** Adds an in-process listener of `channel`; the returned function removes it. */
  listenLocally(channel: string, handler: NotificationHandler): () => void {
    let handlers = this.localListeners.get(channel);
    if (!handlers) this.localListeners.set(channel, (handlers = new Set()));
    handlers.add(handler);
    return () => {
      handlers.delete(handler);
      if (handlers.size === 0 && this.localListeners.get(channel) === handlers) this.localListeners.delete(channel);
    };
  }

  /**
   * Subscribes `handler` in this process and, through `subscribeRemote`, to the database's deliveries;
   * the one function returned removes both. A failed remote subscription leaves nothing behind.
   */
  async listen(
    channel: string,
    handler: NotificationHandler,
    subscribeRemote: () => Promise<() => Promise<void>>,
  ): Promise<() => Promise<void>> {
    const stopLocal = this.listenLocally(channel, handler);
    try {
      const stopRemote = await subscribeRemote();
      return async () => {
        stopLocal();
        await stopRemote();
      };
    } catch (error) {
      stopLocal();
      throw error;
    }
  }

  notify(channel: string, payload = ''): void {
    for (const handler of [...(this.localListeners.get(channel) ?? [])]) {
      // A listener's failure is its own: the change it hears of has committed, and other listeners must hear too.
      try {
        handler(payload);
      } catch (error) {
        this.onError(error, `listener of ${channel}`);
      }
    }
    this.pending.set(`${channel}\u0000${payload}`, { channel, payload });
    if (!this.inFlight) this.inFlight = this.drain();
  }

  /** Resolves once everything asked for before the call has been sent (or has failed and been reported). */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const batch = [...this.pending.values()];
        this.pending.clear();
        try {
          await this.send(batch);
        } catch (error) {
          this.onError(error, 'notify');
        }
      }
    } finally {
      this.inFlight = null;
    }
  }
}
