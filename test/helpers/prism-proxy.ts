// Stoplight Prism in proxy mode in front of a test app: an independent contract checker, written by
// others, that validates every request and every answer against the app's own /openapi.json and reports
// what breaks it in an `sl-violations` header. `npm run contract` (scripts/contract.ts) runs the HTTP
// suites' traffic through it (helpers/app.ts); helpers/contract-check.ts is the in-process checker every
// run uses.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
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
  code?: string | number;
  message: string;
}

const prismBin = path.join(path.dirname(createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');
/** Prism's answer when it could not match a request to an operation: it forwards it unchecked. */
const NO_ROUTE = 'Selected route not found';

/** Prism processes of this test process, killed if it exits without closing them (a killed worker). */
const running = new Set<ReturnType<typeof spawn>>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `prism proxy` for `document` in front of `upstream`; resolves once it listens. */
export async function startPrismProxy(document: object, upstream: string): Promise<PrismProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-prism-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(document));
  // --port 0: Prism takes a free port and prints it. --cors=false: without it Prism adds CORS headers to
  // every answer. One process, whatever NODE_ENV says.
  const child = spawn(process.execPath, [prismBin, 'proxy', file, upstream, '--host', '127.0.0.1', '--port', '0', '--cors=false', '--multiprocess=false'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Prism's analytics dependency stays quiet; nothing leaves the machine.
    env: { ...process.env, SCARF_ANALYTICS: 'false', NO_COLOR: '1' },
  });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    running.delete(child);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  let output = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`prism did not start within 30 s:\n${output.slice(-2000)}`)), 30_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const listening = /Prism is listening on (http:\/\/[\d.]+:\d+)/.exec(output);
        if (listening) {
          clearTimeout(timer);
          resolve(listening[1]!);
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`prism exited with ${code} before listening:\n${output.slice(-2000)}`));
      });
    });
    // Its log was only for the failures above; keep draining the pipes so it never blocks on a full one.
    child.stdout.removeAllListeners('data').resume();
    child.stderr.removeAllListeners('data').resume();
    return { url, close: stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The violations Prism found in one exchange (none when the header is absent). */
export function prismViolations(headers: Headers): PrismViolation[] {
  const header = headers.get('sl-violations');
  if (!header) return [];
  try {
    return JSON.parse(header) as PrismViolation[];
  } catch {
    // Past 8 KB Prism sends a sentence instead ("Too many violations! …"): still a finding.
    return [{ location: ['response'], severity: 'Error', message: header }];
  }
}

/**
 * Whether Prism can relay a request unchanged. It never answers a JSON body that does not parse
 * (stoplightio/prism#2664), a path it cannot decode kills it, and it forwards a JSON body that is not an
 * object or an array (null, 0, "") as no body at all: such requests (the malformed-input tests) go
 * straight to the app, and only the in-process checker sees them. Other media types it relays as sent.
 */
export function prismCanRelay(path: string, contentType: string | undefined, body: string | undefined): boolean {
  try {
    decodeURI(path);
  } catch {
    return false;
  }
  if (body === undefined || !/json/i.test(contentType ?? '')) return true;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

/**
 * What Prism found wrong in one exchange. Every answer must match the document. A request is the test's
 * to choose — many send what the document forbids on purpose, to see it refused — so a request violation
 * counts only when the service accepted the request: then the document is stricter than the service. A
 * request Prism could not match to an operation always counts: it was forwarded unchecked.
 */
export function prismProblems(where: string, status: number, violations: PrismViolation[]): string[] {
  return violations
    .filter((violation) => violation.location[0] === 'response' || status < 400 || violation.message.includes(NO_ROUTE))
    .map((violation) => `${where}: Prism: ${violation.location.join('.')}: ${violation.message}`);
}
