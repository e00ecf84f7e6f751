// Small HTTP helpers over node:http. The simulator uses no framework so that it controls every byte of
// an answer — including the broken ones the fault knobs ask for (no answer, a closed connection, a body
// that is not JSON).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body taken (a batch of 1000 items is ~300 KB). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

export class BodyTooLarge extends Error {}

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(text);
}

export function sendText(response: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8', headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)), 'cache-control': 'no-store', ...headers });
  response.end(text);
}

/** A path segment decoded, or null when its percent-encoding is broken. */
export function segment(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

export function sleep(ms: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}
