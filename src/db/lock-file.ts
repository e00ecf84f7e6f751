// One process at a time on an embedded database folder: PGlite files opened twice would be corrupted.
import fs from 'node:fs';
import path from 'node:path';

export const LOCK_FILE_NAME = 'mps.lock';

export class DataDirInUseError extends Error {
  constructor(readonly dataDir: string, readonly pid: number) {
    super(
      `The embedded database in ${dataDir} is in use by process ${pid} (is the service running?). ` +
        'Stop that process first, or use PostgreSQL (DATABASE_URL) to share one database between processes.',
    );
    this.name = 'DataDirInUseError';
  }
}

/** Takes the lock file of `dataDir` for this process; a lock left by a dead process is taken over. Returns the release function. */
export function acquireDataDirLock(dataDir: string, purpose: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, LOCK_FILE_NAME);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      // 'wx' creates the file only if it does not exist: atomic against a second process.
      fs.writeFileSync(lockPath, JSON.stringify({ pid: process.pid, purpose, since: new Date().toISOString() }), { flag: 'wx' });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          const holder = readHolder(lockPath);
          if (holder === process.pid) fs.unlinkSync(lockPath);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(lockPath);
      if (holder !== null && holder !== process.pid && isAlive(holder)) throw new DataDirInUseError(dataDir, holder);
      fs.rmSync(lockPath, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not take the lock file ${lockPath}`);
}

function readHolder(lockPath: string): number | null {
  try {
    const { pid } = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as { pid?: unknown };
    return typeof pid === 'number' ? pid : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
