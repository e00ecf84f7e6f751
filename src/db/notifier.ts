// Coalescing NOTIFY sender shared by both adapters. A notification only wakes a listener up (pollers are
// the safety net), so while one batch is being sent, further requests for the same channel and payload
// collapse into the next batch: a burst of 1,000 payments costs a handful of NOTIFY statements, each in
// its own tiny transaction outside the money transactions.

export type NotificationBatchSender = (notifications: Array<{ channel: string; payload: string }>) => Promise<void>;

export class CoalescingNotifier {
  private pending = new Map<string, { channel: string; payload: string }>();
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly send: NotificationBatchSender,
    private readonly onError: (error: unknown) => void,
  ) {}

  notify(channel: string, payload = ''): void {
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
          this.onError(error);
        }
      }
    } finally {
      this.inFlight = null;
    }
  }
}
