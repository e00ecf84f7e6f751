// Where a load's CPU time went, from Linux's per-process accounting (/proc/<pid>/stat): the service
// process, every PostgreSQL process on the machine, and this benchmark process (the load generator). It
// tells a throughput bound by one of them (its share near a full core, or the machine near both) from one
// bound by waiting (the machine idle). Elsewhere than Linux it reports nothing.
import fs from 'node:fs';
import os from 'node:os';

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux architecture Node supports

export interface CpuSplit {
  /** Cores used on average over the measured time, per part; `idle` is what the machine had left. */
  service: number;
  postgres: number;
  loadGenerator: number;
  idle: number;
  /** Other processes of the benchmark asked for by name (a bank simulator, a second service). */
  others?: Record<string, number>;
}

interface Sample { at: number; service: number; postgres: Map<number, number>; self: number; idle: number; others: Record<string, number> }

/**
 * Starts measuring; the returned function stops and answers the split (null off Linux). No service: its
 * share is 0. `others` names further processes to account for, by pid.
 */
export function measureCpu(servicePid: number | undefined, others: Record<string, number | undefined> = {}): () => CpuSplit | null {
  const start = sample(servicePid, others);
  return () => {
    const end = sample(servicePid, others);
    if (!start || !end) return null;
    const seconds = (end.at - start.at) / 1000;
    const cores = (ticks: number) => Math.round((ticks / TICKS_PER_SECOND / seconds) * 100) / 100;
    return {
      service: cores(end.service - start.service),
      // Processes alive at the end: what they used since the start, or since they started in between (a
      // pool opens connections as the load arrives). A backend that ended in between is missed, so a
      // load of short-lived connections is under-counted.
      postgres: cores([...end.postgres].reduce((sum, [pid, ticks]) => sum + ticks - (start.postgres.get(pid) ?? 0), 0)),
      // process.cpuUsage() is in microseconds.
      loadGenerator: cores(((end.self - start.self) / 1e6) * TICKS_PER_SECOND),
      idle: cores(end.idle - start.idle),
      ...(Object.keys(others).length === 0 ? {} : {
        others: Object.fromEntries(Object.keys(others).map((name) => [name, cores(end.others[name]! - start.others[name]!)])),
      }),
    };
  };
}

export function describeCpu(split: CpuSplit | null): string {
  if (!split) return 'CPU split not measured (no /proc)';
  const others = Object.entries(split.others ?? {}).map(([name, cores]) => `, ${name} ${cores}`).join('');
  return `CPU in cores of ${os.cpus().length}: service ${split.service}, PostgreSQL ${split.postgres}${others}, load generator ${split.loadGenerator}, idle ${split.idle}`;
}

function sample(servicePid: number | undefined, others: Record<string, number | undefined>): Sample | null {
  if (!fs.existsSync('/proc/stat')) return null;
  const usage = process.cpuUsage();
  return {
    at: Date.now(),
    service: servicePid === undefined ? 0 : ticksOf(servicePid),
    postgres: new Map(fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && commOf(entry) === 'postgres').map((pid) => [Number(pid), ticksOf(Number(pid))])),
    self: usage.user + usage.system,
    // The first line of /proc/stat: cpu user nice system idle iowait ...; idle is the fourth number.
    idle: Number(fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/)[4]),
    others: Object.fromEntries(Object.entries(others).map(([name, pid]) => [name, pid === undefined ? 0 : ticksOf(pid)])),
  };
}

function commOf(pid: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return ''; // the process ended between the listing and the read
  }
}

/** utime + stime of a process, in ticks (fields 14 and 15 of /proc/<pid>/stat, after the parenthesised name). */
function ticksOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}
