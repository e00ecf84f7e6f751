// Long-running commands of the docs (`npm run bank`, `… npm start`) run as a reader runs them: bash, in
// the repository, with only the reader's PATH and HOME (vitest sets MODE=test, which the service refuses)
// and what the test adds in plain sight. Each runs in its own process group, so stopping it stops npm and
// what npm started, and everything it writes is kept: the logs are part of what a test checks.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface DocProcess {
  child: ChildProcess;
  /** Everything written so far, stdout and stderr interleaved as it came. */
  output(): string;
  /** Resolves with the first match of `pattern` in the output; rejects if the process ends or `ms` pass first. */
  waitFor(pattern: RegExp, ms: number): Promise<RegExpExecArray>;
  /** SIGTERM to the group, SIGKILL after 20 s; resolves with the exit code once it has exited. */
  stop(): Promise<number | null>;
}

export function startCommand(command: string, env: Record<string, string>): DocProcess {
  const child = spawn('bash', ['-c', command], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group is gone already
    }
  };
  return {
    child,
    output: () => output,
    async waitFor(pattern, ms) {
      const deadline = Date.now() + ms;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
          throw new Error(`\`${command.slice(0, 80)}\` never printed ${pattern}; it wrote:\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export { freePort } from '../helpers/baneco.ts';

/** Runs `command` in bash to its end, as `startCommand` would (40 s at most: then its group is killed). */
export function runToEnd(command: string, env: Record<string, string> = {}): Promise<RunResult> {
  return runProgram('bash', ['-c', command], { cwd: ROOT, env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env } });
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end, asynchronously (a service answering it may live in this process), in its own
 * process group, so the 40 s timeout kills what it started too (curl, npx), not the program alone.
 */
export function runProgram(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 40_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
