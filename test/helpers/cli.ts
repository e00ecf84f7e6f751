// Runs the operator CLI as a user does: `node bin/mps.js …args` in a child process, with only the given
// environment (plus PATH and HOME), killed if it outlives its time.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** How long a CLI test waits for one command. */
export const CLI_TIMEOUT_MS = 60_000;

export interface CliResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (the CLI prints JSON on success). */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/mps.js'), ...args], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS - 5_000);
    child.on('error', reject);
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ exitCode, stdout, stderr, json });
    });
  });
}
