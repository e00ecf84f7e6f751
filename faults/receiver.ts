// The merchants' webhook receiver, run by the suite: verifies Standard Webhooks signatures, dedupes on webhook-id, and can fail on purpose (500, refused, slow).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * ok: 200 at once (the only answer that counts as delivered); error500: 500; closed: the port refuses
 * connections; slow: 200 only after `slowMs` (past the service's WEBHOOK_TIMEOUT, so a failed attempt).
 */
export type ReceiverMode = 'ok' | 'error500' | 'closed' | 'slow';

export interface Delivered { type: string; firstAtMs: number; count: number }

export class Receiver {
  /** webhook-id → first accepted (200) delivery: at-least-once delivery is deduplicated here. */
  readonly delivered = new Map<string, Delivered>();
  /** Every request received, by the mode the receiver was in. */
  readonly requestsByMode: Record<ReceiverMode, number> = { ok: 0, error500: 0, closed: 0, slow: 0 };
  readonly badSignatures: string[] = [];
  duplicates = 0;
  mode: ReceiverMode = 'ok';
  slowMs = 3_000;

  private readonly verifiers = new Map<string, Webhook>();
  private server: http.Server | null = null;
  private port = 0;

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await receiver.listen();
    return receiver;
  }

  /** The endpoint URL of one merchant: its path names the secret to verify with. */
  urlFor(businessCode: number): string {
    return `http://127.0.0.1:${this.port}/hooks/${businessCode}`;
  }

  addSecret(businessCode: number, secret: string): void {
    this.verifiers.set(String(businessCode), new Webhook(secret));
  }

  async setMode(mode: ReceiverMode): Promise<void> {
    if (mode === 'closed' && this.server) await this.closeServer();
    if (mode !== 'closed' && !this.server) await this.listen();
    this.mode = mode;
  }

  async close(): Promise<void> {
    await this.closeServer();
  }

  /** The ids of `expected` not yet delivered. */
  missing(expected: Iterable<string>): string[] {
    return [...expected].filter((id) => !this.delivered.has(id));
  }

  private async listen(): Promise<void> {
    const server = http.createServer((request, response) => this.handle(request, response));
    // Same port every time: reopening after `closed` must look like the receiver coming back.
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private closeServer(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections(); // keep-alive sockets too: the next attempt must meet a refused port
    });
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const mode = this.mode;
      this.requestsByMode[mode]++;
      if (mode === 'error500') {
        response.writeHead(500).end('receiver failing on purpose');
        return;
      }
      if (mode === 'slow') {
        setTimeout(() => {
          if (!response.destroyed) response.writeHead(200).end();
        }, this.slowMs).unref();
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      const id = header(request, 'webhook-id');
      const owner = /^\/hooks\/(\d+)$/.exec(request.url ?? '')?.[1] ?? '';
      const verifier = this.verifiers.get(owner);
      try {
        if (!verifier) throw new Error(`no secret for ${request.url}`);
        const event = verifier.verify(raw, {
          'webhook-id': id,
          'webhook-timestamp': header(request, 'webhook-timestamp'),
          'webhook-signature': header(request, 'webhook-signature'),
        }) as { id?: string; type?: string };
        if (event.id !== id) throw new Error(`body id ${event.id} differs from webhook-id ${id}`);
        const seen = this.delivered.get(id);
        if (seen) {
          seen.count++;
          this.duplicates++;
        } else {
          this.delivered.set(id, { type: event.type ?? '?', firstAtMs: Date.now(), count: 1 });
        }
        response.writeHead(200).end();
      } catch (error) {
        if (this.badSignatures.length < 50) this.badSignatures.push(`${id || '(no id)'}: ${(error as Error).message}`);
        // 400: the service will retry, but the check on bad signatures fails the scenario anyway.
        response.writeHead(400).end();
      }
    });
  }
}

function header(request: http.IncomingMessage, name: string): string {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value ?? '';
}
