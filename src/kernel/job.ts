// What a background job is (capabilities define their jobs; src/workers runs them): a batch of work run
// again at once while it reports more, else after its interval or when its channel is notified.

export interface Job {
  name: string;
  /** Longest sleep between two runs when nothing wakes the job. */
  intervalMs: number;
  /** Channels whose notifications wake the job at once. */
  wakeChannels?: readonly string[];
  /** Does one batch of work; resolves true when more work is waiting (run again at once). */
  runOnce(): Promise<boolean>;
  /** Finishes work the job started in the background (e.g. webhook sends in flight) when the runner stops. */
  stop?(): Promise<void>;
}
