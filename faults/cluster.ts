// The suite's own throwaway PostgreSQL cluster: initdb into a temp dir, a free port, a unix socket in that dir, trust auth; removed at the end.
// It never connects to the developer's server on 5432. initdb and postgres refuse to run as root, so when
// the suite runs as root they run as the `postgres` OS user (runuser), in a directory owned by that user.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePortFrom } from './ports.ts';

const run = promisify(execFile);

/** The PostgreSQL binaries: FAULTS_PG_BIN, else the newest /usr/lib/postgresql/<n>/bin holding initdb. */
export function postgresBinDir(): string {
  const configured = process.env.FAULTS_PG_BIN;
  if (configured) return configured;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (fs.existsSync(path.join(bin, 'initdb'))) return bin;
  }
  throw new Error('PostgreSQL binaries not found: install postgresql (initdb, pg_ctl, postgres) or set FAULTS_PG_BIN');
}

interface OsUser { uid: number; gid: number }

function postgresOsUser(): OsUser | null {
  if (process.getuid?.() !== 0) return null; // not root: run the binaries as ourselves
  const line = fs.readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root but there is no `postgres` OS user to run initdb/postgres as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export class Cluster {
  running = false;

  private constructor(
    readonly dir: string,
    private chosenPort: number,
    private readonly bin: string,
    private readonly osUser: OsUser | null,
  ) {}

  get dataDir(): string { return path.join(this.dir, 'data'); }
  /** Fixed once the cluster first started: a restart comes back on the same port, the one its clients know. */
  get port(): number { return this.chosenPort; }
  get logFile(): string { return path.join(this.dir, 'server.log'); }

  /** Creates the cluster under `parent` (a fresh temp dir) and starts it. */
  static async create(parent: string): Promise<Cluster> {
    const cluster = await Cluster.prepare(parent, 'pg');
    await cluster.exec('initdb', ['-D', cluster.dataDir, '--auth=trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync'], 120_000);
    await cluster.firstStart();
    return cluster;
  }

  /**
   * A streaming replica of `primary` under `parent`: pg_basebackup of the running primary with -R (the
   * standby signal and primary_conninfo), started on a port of its own as a hot standby that answers reads.
   * initdb's default pg_hba already trusts replication connections from 127.0.0.1.
   */
  static async standbyOf(primary: Cluster, parent: string): Promise<Cluster> {
    const standby = await Cluster.prepare(parent, 'pg-standby', primary.port + 1);
    await standby.exec('pg_basebackup', [
      '-D', standby.dataDir, '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres',
      '-R', '-X', 'stream', '-c', 'fast', '--no-sync',
    ], 120_000);
    await standby.firstStart();
    return standby;
  }

  private static async prepare(parent: string, name: string, fromPort?: number): Promise<Cluster> {
    const bin = postgresBinDir();
    const osUser = postgresOsUser();
    const dir = path.join(parent, name);
    fs.mkdirSync(dir, { mode: 0o700 });
    if (osUser) {
      // postgres must reach its directory: the parent stays traversable, the cluster dir is its own.
      fs.chmodSync(parent, 0o711);
      fs.chownSync(dir, osUser.uid, osUser.gid);
    }
    const port = await freePortFrom(fromPort ?? Number(process.env.FAULTS_PG_PORT ?? 55432));
    return new Cluster(dir, port, bin, osUser);
  }

  /** Standby only: stops applying the WAL it receives (a replica lagging as far as the test wants). */
  async pauseReplay(): Promise<void> {
    await this.adminQuery('select pg_wal_replay_pause()');
  }

  /** Standby only: applies what it received meanwhile, and everything after. */
  async resumeReplay(): Promise<void> {
    await this.adminQuery('select pg_wal_replay_resume()');
  }

  private exec(tool: string, args: string[], timeoutMs: number) {
    const binary = path.join(this.bin, tool);
    const [file, argv] = this.osUser ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
    return run(file, argv, { timeout: timeoutMs, cwd: this.dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' } });
  }

  /**
   * Starts postgres and waits until it accepts connections. fsync is off (a process kill, unlike a power
   * cut, keeps what reached the OS), but synchronous_commit stays on: an immediate stop must not lose a
   * commit the service has acknowledged, or the suite would report the harness's own data loss.
   */
  async start(): Promise<void> {
    const options = [`-p ${this.port}`, `-k ${this.dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c max_connections=200'].join(' ');
    await this.exec('pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-o', options, '-w', '-t', '60', 'start'], 90_000);
    this.running = true;
  }

  /**
   * The first start, on the port `prepare` found free, or on the next free one if something else took it
   * meanwhile (another suite's cluster starting at the same moment): the port is only checked, not held,
   * until the server binds it.
   */
  private async firstStart(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const logStart = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
      try {
        await this.start();
        return;
      } catch (error) {
        const log = fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8').slice(logStart) : '';
        if (attempt >= 5 || !/could not bind|Address already in use/.test(log)) throw error;
        this.chosenPort = await freePortFrom(this.chosenPort + 1);
      }
    }
  }

  /** `immediate` is a crash for the clients: every connection is cut, nothing is shut down cleanly. */
  async stop(mode: 'immediate' | 'fast' = 'immediate'): Promise<void> {
    await this.exec('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop'], 90_000);
    this.running = false;
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** A fresh scratch database for one scenario (dropped first if a previous run left it). */
  async createDatabase(name: string): Promise<string> {
    await this.adminQuery(`drop database if exists ${name} with (force)`);
    await this.adminQuery(`create database ${name}`);
    return this.url(name);
  }

  async adminQuery(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  /** Stops the server (if it runs) and removes its files; errors are reported, not thrown. */
  async destroy(): Promise<string[]> {
    const problems: string[] = [];
    if (fs.existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      await this.stop('immediate').catch((error: Error) => problems.push(`pg_ctl stop: ${error.message.split('\n')[0]}`));
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
    return problems;
  }
}
