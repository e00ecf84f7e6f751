// Test harness of the webhooks module: a real local receiver (node:http on 127.0.0.1:0), the dispatcher job
// driven by hand (runOnce), and events produced through the fixture route POST /test/movements (each event's
// deliveries are written with it, by the database: migration 012).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../src/db/database.ts';
import { Dispatcher, type DispatcherOptions } from '../../src/webhooks/dispatcher.ts';
import { destinationPolicyOf } from '../../src/webhooks/ssrf.ts';
import type { TestApp } from '../helpers/app.ts';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export type ReceiverAnswer = number | 'hang';

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** Decides each answer (status code, or 'hang' to never answer); 200 by default. */
  answer: (request: ReceivedWebhook) => ReceiverAnswer;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => 200,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook: ReceivedWebhook = {
        path: request.url ?? '/',
        headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      receiver.received.push(webhook);
      const answer = receiver.answer(webhook);
      if (answer === 'hang') {
        hanging.add(response);
        return;
      }
      response.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

export interface WebhookJobs {
  dispatcher: Dispatcher;
  /** Sends every due delivery and waits for the results to be written. */
  deliverAll(): Promise<void>;
  stop(): Promise<void>;
}

export function webhookJobs(t: TestApp, overrides: Partial<DispatcherOptions> & { db?: Database } = {}): WebhookJobs {
  const db = overrides.db ?? t.db;
  const dispatcher = new Dispatcher({
    db,
    clock: t.clock,
    destinations: destinationPolicyOf(t.config),
    secrets: t.context.secrets,
    timeoutMs: t.config.webhookTimeoutMs,
    retryScheduleMs: t.config.webhookRetryScheduleMs,
    ...overrides,
  });
  return {
    dispatcher,
    async deliverAll() {
      while (await dispatcher.runOnce());
      await dispatcher.settled();
    },
    stop: () => dispatcher.stop(),
  };
}

/** Commits a payment-like movement through the fixture route; it emits `simple_qr.payment_received`. */
export async function commitPayment(t: TestApp, merchant: { businessCode: number; apiKey: string }, amount = 10): Promise<number> {
  const response = await t.request('POST', '/test/movements', {
    apiKey: merchant.apiKey,
    headers: { 'idempotency-key': randomUUID() },
    body: { business_code: merchant.businessCode, amount },
  });
  if (response.status !== 201) throw new Error(`POST /test/movements answered ${response.status}: ${response.text}`);
  return response.body.movement_id;
}

export async function createEndpoint(t: TestApp, apiKey: string, body: Record<string, unknown>) {
  const response = await t.request('POST', '/api/v2/webhook-endpoints', { apiKey, body });
  if (response.status !== 201) throw new Error(`creating an endpoint answered ${response.status}: ${response.text}`);
  return response.body as { id: string; secret: string; url: string; events: string[]; status: string };
}

/**
 * Verifies a received webhook with the public standardwebhooks library, as a receiver would at the
 * moment of the attempt (the library checks the timestamp against Date.now; test clocks run ahead).
 */
export function verifyWebhook(secret: string, webhook: ReceivedWebhook): unknown {
  const realNow = Date.now;
  Date.now = () => Number(webhook.headers['webhook-timestamp']) * 1000;
  try {
    return new Webhook(secret).verify(webhook.body, webhook.headers);
  } finally {
    Date.now = realNow;
  }
}
