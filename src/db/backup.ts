// `mps backup` and `mps restore` of the embedded database (docs/backups.md). Both take DATA_DIR's lock file
// first, so neither runs while the service (or another mps) has the database open: a backup is the files of
// a database nobody writes, a restore fills a folder nobody reads.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { acquireDataDirLock, LOCK_FILE_NAME } from './lock-file.ts';
import { openPglite } from './pglite.ts';

/** A backup or restore refused or failed before anything was written (one line for the operator). */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/** Where a restore unpacks and checks the backup before moving it into DATA_DIR (same folder, same disk). */
const STAGING_NAME = '.mps-restoring';

export interface BackupOutcome {
  file: string;
  bytes: number;
  data_dir: string;
}

/**
 * Writes a gzip tarball of the embedded database in `dataDir` to `file` (which must not exist yet): under the
 * lock file, after a CHECKPOINT, through PGlite's own dumpDataDir. The file appears only once complete (written
 * beside it, flushed, then renamed), so a backup cut short leaves no file that looks like a backup.
 */
export async function backupDataDir(dataDir: string, file: string): Promise<BackupOutcome> {
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) throw new BackupError(`there is no embedded database in ${dataDir} to back up`);
  if (fs.existsSync(file)) throw new BackupError(`${file} already exists: back up to a new file`);
  if (!fs.existsSync(path.dirname(path.resolve(file)))) throw new BackupError(`the folder of ${file} does not exist`);
  const release = acquireDataDirLock(dataDir, 'backup');
  const partial = `${file}.partial-${process.pid}`;
  try {
    const db = await openPglite({ dataDir });
    let tarball: Blob;
    try {
      // Everything committed is written to the data files: the restored copy starts without replaying WAL.
      await db.query('checkpoint');
      tarball = await db.dumpDataDir('gzip');
    } finally {
      await db.close();
    }
    const bytes = Buffer.from(await tarball.arrayBuffer());
    try {
      const handle = fs.openSync(partial, 'wx', 0o600);
      try {
        fs.writeSync(handle, bytes);
        fs.fsyncSync(handle);
      } finally {
        fs.closeSync(handle);
      }
      fs.renameSync(partial, file);
    } catch (error) {
      throw new BackupError(`cannot write ${file}: ${firstLine(error)}`);
    }
    return { file: path.resolve(file), bytes: bytes.length, data_dir: dataDir };
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    release();
  }
}

export interface RestoreOutcome {
  data_dir: string;
  from: string;
  /** The migrations the restored database has: the service applies any newer ones when it starts. */
  migrations: number;
}

/**
 * Restores a backup of `backupDataDir` into `dataDir`, which must be new or empty (a lock file left by a dead
 * process aside). The tarball is read and checked before DATA_DIR is touched, unpacked into a folder inside
 * it, opened as a database and its schema_migrations read; only then are its files moved into place. On any
 * failure the folder is left as it was found (a DATA_DIR the restore created is removed again).
 */
export async function restoreDataDir(file: string, dataDir: string): Promise<RestoreOutcome> {
  const tar = readBackup(file);
  const existed = fs.existsSync(dataDir);
  if (existed && !fs.statSync(dataDir).isDirectory()) throw new BackupError(`${dataDir} is not a folder`);
  const release = acquireDataDirLock(dataDir, 'restore'); // refuses while another process has it open
  const staging = path.join(dataDir, STAGING_NAME);
  let placed = false;
  try {
    const present = fs.readdirSync(dataDir).filter((name) => name !== LOCK_FILE_NAME);
    if (present.length > 0) {
      throw new BackupError(`${dataDir} is not empty (${present.length} entries, such as ${present[0]}): restore into a new or empty DATA_DIR`);
    }
    let migrations: number;
    try {
      const db = await openPglite({ dataDir: staging, loadDataDir: new Blob([new Uint8Array(tar)]) });
      try {
        const { rows } = await db.query<{ count: number }>('select count(*)::int as count from schema_migrations');
        migrations = rows[0]!.count;
      } finally {
        await db.close();
      }
    } catch (error) {
      throw new BackupError(`${file} did not open as a database of this service (${firstLine(error)}); nothing was restored`);
    }
    // The backup holds the lock file of the process that took it: this DATA_DIR's is ours.
    fs.rmSync(path.join(staging, LOCK_FILE_NAME), { force: true });
    for (const name of fs.readdirSync(staging)) fs.renameSync(path.join(staging, name), path.join(dataDir, name));
    fs.rmdirSync(staging);
    placed = true;
    return { data_dir: dataDir, from: path.resolve(file), migrations };
  } finally {
    if (!placed) fs.rmSync(staging, { recursive: true, force: true });
    release();
    if (!placed && !existed) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The tar archive of a backup file (gunzipped), or a BackupError saying why the file is not one. */
function readBackup(file: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (error) {
    throw new BackupError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? firstLine(error)}`);
  }
  let tar = bytes;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      tar = gunzipSync(bytes);
    } catch (error) {
      throw new BackupError(`${file} is not a backup made by mps backup: its gzip data is damaged (${firstLine(error)}); nothing was restored`);
    }
  }
  // A POSIX tar archive's first header says "ustar" at byte 257; PGlite would otherwise fail on it far less clearly.
  if (tar.length < 1024 || tar.subarray(257, 262).toString('latin1') !== 'ustar') {
    throw new BackupError(`${file} is not a backup made by mps backup (not a tar archive of a data directory); nothing was restored`);
  }
  return tar;
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]!;
}
