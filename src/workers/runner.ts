// Hosts the background loops (dispatcher, sweepers, sandbox rails). Each job runs until it reports no more
// work, then sleeps until its interval passes or a NOTIFY on its channel wakes it: the notification is
// only a wake-up, the interval is the safety net (docs/architecture.md, rule 9). Jobs claim work with SKIP LOCKED,
// so any number of processes may run the same jobs.
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Job } from '../kernel/job.ts';
import { describeError } from '../kernel/logging.ts';


/** Pause after a failed run, so a database outage does not become a hot loop. */
const FAILURE_BACKOFF_MS = 1_000;

export class WorkerRunner {
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private readonly wakers = new Set<() => void>();
  private readonly unlisteners: Array<() => Promise<void>> = [];

  constructor(
    private readonly db: Database,
    private readonly log: FastifyBaseLogger,
    private readonly jobs: Job[],
  ) {}

  async start(): Promise<void> {
    for (const job of this.jobs) {
      // A wake-up that arrives while the job is running is remembered, so the next sleep is skipped.
      const state = { woken: false, wake: () => {} };
      const wakeUp = () => {
        state.woken = true;
        state.wake();
      };
      for (const channel of job.wakeChannels ?? []) this.unlisteners.push(await this.db.listen(channel, wakeUp, wakeUp));
      this.loops.push(this.loop(job, state));
    }
  }

  private async loop(job: Job, state: { woken: boolean; wake: () => void }): Promise<void> {
    while (!this.stopped) {
      state.woken = false;
      let moreWork = false;
      let failed = false;
      try {
        moreWork = await job.runOnce();
      } catch (error) {
        failed = true;
        this.log.error({ error: describeError(error), job: job.name }, `worker job ${job.name} failed`);
      }
      if (this.stopped) break;
      if ((moreWork || state.woken) && !failed) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.wakers.delete(done);
          state.wake = () => {};
          resolve();
        };
        const timer = setTimeout(done, failed ? FAILURE_BACKOFF_MS : job.intervalMs);
        this.wakers.add(done);
        if (!failed) state.wake = done;
      });
    }
  }

  /** Stops every loop after its current batch and waits for them. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of [...this.wakers]) wake();
    await Promise.all(this.loops);
    for (const job of this.jobs) {
      await job.stop?.().catch((error) => this.log.error({ error: describeError(error), job: job.name }, `stopping ${job.name} failed`));
    }
    for (const unlisten of this.unlisteners) await unlisten().catch(() => {});
  }
}
