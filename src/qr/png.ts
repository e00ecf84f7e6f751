// QR images as PNG data URIs: rendered on the request's thread, or by a pool of worker threads so that
// rendering (~1.1 ms of CPU per image) runs beside the event loop instead of inside it. The renderer
// itself is png-core.cjs (plain CommonJS, so worker threads need no TypeScript loader).
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const core = require('./png-core.cjs') as { renderQrPng(payload: string): Buffer; renderQrDataUri(payload: string): string };

export const renderQrPng: (payload: string) => Buffer = core.renderQrPng;
export const renderQrDataUri: (payload: string) => string = core.renderQrDataUri;

const PNG_DATA_URI_PREFIX = 'data:image/png;base64,';

/** The PNG bytes of a QR's `qr_image` (ours or a bank's, both PNG data URIs), as the pay page shows them. */
export function pngOfDataUri(dataUri: string): Buffer {
  if (!dataUri.startsWith(PNG_DATA_URI_PREFIX)) throw new Error('a QR image that is not a PNG data URI');
  return Buffer.from(dataUri.slice(PNG_DATA_URI_PREFIX.length), 'base64');
}

interface PendingJob {
  resolve(uri: string): void;
  reject(error: Error): void;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, PendingJob>;
}

/**
 * A fixed pool of render threads. Each job goes to the thread with the fewest jobs in flight; a thread
 * that dies fails its jobs and is replaced. `size` 0 renders inline.
 */
export class RenderPool {
  private readonly workers: PoolWorker[] = [];
  private nextId = 1;
  private closed = false;

  constructor(readonly size: number = Math.max(1, availableParallelism() - 1)) {
    for (let i = 0; i < size; i++) this.workers.push(this.spawn());
  }

  render(payload: string): Promise<string> {
    if (this.workers.length === 0 || this.closed) return Promise.resolve(renderQrDataUri(payload));
    let target = this.workers[0]!;
    for (const candidate of this.workers) if (candidate.pending.size < target.pending.size) target = candidate;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      target.pending.set(id, { resolve, reject });
      target.worker.postMessage({ id, payload });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((entry) => entry.worker.terminate()));
  }

  private spawn(): PoolWorker {
    const worker = new Worker(new URL('./render-worker.cjs', import.meta.url));
    const entry: PoolWorker = { worker, pending: new Map() };
    worker.unref(); // never keeps the process alive on its own
    worker.on('message', (message: { id: number; uri?: string; error?: string }) => {
      const job = entry.pending.get(message.id);
      if (!job) return;
      entry.pending.delete(message.id);
      if (message.uri !== undefined) job.resolve(message.uri);
      else job.reject(new Error(`QR render failed: ${message.error}`));
    });
    const fail = (error: Error) => {
      for (const job of entry.pending.values()) job.reject(error);
      entry.pending.clear();
      const index = this.workers.indexOf(entry);
      if (!this.closed && index >= 0) this.workers[index] = this.spawn();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => { if (!this.closed) fail(new Error(`QR render thread exited with code ${code}`)); });
    return entry;
  }
}
