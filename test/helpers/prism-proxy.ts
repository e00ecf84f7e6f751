// Stoplight Prism in proxy mode in front of a test app: an independent contract checker, written by
// others, that validates every request and every answer against the app's own /openapi.json and reports
// what breaks it in an `sl-violations` header. `npm run contract` (scripts/contract.ts) runs the HTTP
// suite's traffic through it; helpers/contract-check.ts is the in-process checker every run uses.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PrismProxy {
  /** Base URL of the proxy; requests sent here reach the app through Prism. */
  url: string;
  close(): Promise<void>;
}

/** One finding in Prism's `sl-violations` header. */
export interface PrismViolation {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

const prismBin = path.join(path.dirname(createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts `prism proxy` for `document` in front of `upstream`; resolves once it listens. */
export async function startPrismProxy(document: object, upstream: string): Promise<PrismProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-prism-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [prismBin, 'proxy', file, upstream, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Prism's analytics dependency stays quiet; nothing leaves the machine.
    env: { ...process.env, SCARF_ANALYTICS: 'false', NO_COLOR: '1' },
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`prism did not start within 30 s:\n${output.slice(-2000)}`)), 30_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`prism exited with ${code} before listening:\n${output.slice(-2000)}`));
    });
  });
  // Its log is only for the failure above; keep draining the pipes so it never blocks on a full one.
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The violations Prism found in one exchange (none when the header is absent). */
export function prismViolations(headers: Headers): PrismViolation[] {
  const header = headers.get('sl-violations');
  return header ? (JSON.parse(header) as PrismViolation[]) : [];
}
