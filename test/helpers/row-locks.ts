// For tests that make a service transaction wait on a row lock held by the test (then end it, or let it go).
import type pg from 'pg';

/** The pid of the service's backend that waits for a row lock, once there is one (asked through `observer`). */
export async function backendWaitingForLock(observer: pg.Client): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { rows } = await observer.query<{ pid: number }>(
      `select pid from pg_stat_activity
        where datname = current_database() and application_name = 'merchant-payments' and wait_event_type = 'Lock'`,
    );
    if (rows[0]) return rows[0].pid;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no service backend waited for a row lock');
}
