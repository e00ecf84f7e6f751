// The bank simulator as a child process of a benchmark (bench/bank-simulator.ts says why not in-process).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface BenchBankSimulator {
  /** RAIL=baneco and the BANECO_* variables that point a service at it (BANECO_CALLBACK_SECRET excepted: it calls nobody back). */
  env: Record<string, string>;
  pid: number | undefined;
  /** POST /_control/knobs: a partial update, e.g. { delays: { statusQR: 5000 } }; throws when refused. */
  setKnobs(update: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

/** Starts it with `knobs` (the shape POST /_control/knobs takes); resolves once it listens. */
export async function startBankSimulator(knobs: Record<string, unknown> = {}): Promise<BenchBankSimulator> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bank-simulator.ts', JSON.stringify(knobs)], {
    cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = await new Promise<{ env: Record<string, string>; controlUrl: string }>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (data: Buffer) => {
      output += data.toString();
      const line = output.split('\n').find((each) => each.startsWith('{'));
      if (line && output.includes('\n')) resolve(JSON.parse(line) as { env: Record<string, string>; controlUrl: string });
    });
    void exited.then(() => reject(new Error(`bench/bank-simulator.ts exited with ${child.exitCode}:\n${output}`)));
  });
  return {
    env: started.env,
    pid: child.pid,
    async setKnobs(update) {
      const response = await fetch(`${started.controlUrl}knobs`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(update),
      });
      if (!response.ok) throw new Error(`the simulator refused the knobs ${JSON.stringify(update)}: ${await response.text()}`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
