// A merchant's online shop, reduced to its payment: a checkout page, an order per visit, a single-use QR
// per order, and the signed webhook that marks the order paid. The page asks this backend — never the
// payments service — whether its order is paid, every 4–5 seconds. The API key stays on the server.
//
//   MPS_API_KEY=mk_test_… npx tsx examples/checkout/server.ts     (README.md beside this file)
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, verifyWebhook, type WebhookEvent } from '@merchant-payments/sdk';

export interface CheckoutOptions {
  /** The payments service, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  apiKey: string;
  businessCode: number;
  /** Port of the shop (0: any free one). */
  port: number;
  /** Where the payments service reaches the shop's webhook (default: http://127.0.0.1:<port>). */
  publicUrl?: string;
}

interface Order {
  id: string;
  amount: number;
  /** Kept with the order: creating its QR again after a crash answers the same QR, never a second one. */
  idempotencyKey: string;
  qrId: string | null;
  /** The QR's expires_at (ms); the order expires a minute later, time for a webhook still on its way. */
  expiresAt: number;
  status: 'awaiting_payment' | 'paid';
}

const PAGE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');
const PRICE = 35; // Bs, one box of salteñas

export async function startCheckout(options: CheckoutOptions) {
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  const orders = new Map<string, Order>(); // a database in a real shop
  const handledEvents = new Set<string>(); // deliveries are at least once: dedupe on the event id
  let webhookSecret = '';

  const server = http.createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      console.error(error);
      if (!response.headersSent) send(response, 500, { error: 'internal error' });
    });
  });

  async function route(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const { pathname } = new URL(request.url ?? '/', 'http://shop');
    if (request.method === 'GET' && pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    }
    if (request.method === 'POST' && pathname === '/orders') {
      const order: Order = { id: `ord_${randomUUID().slice(0, 8)}`, amount: PRICE, idempotencyKey: randomUUID(), qrId: null, expiresAt: 0, status: 'awaiting_payment' };
      const qr = await client.simpleQrs.create(
        { business_code: options.businessCode, amount: order.amount, description: `Order ${order.id}`, external_reference: order.id, qr_expiration: '+15m' },
        { idempotencyKey: order.idempotencyKey },
      );
      order.qrId = qr.id;
      order.expiresAt = Date.parse(qr.expires_at!);
      orders.set(order.id, order); // only once its QR exists: a failed creation leaves no order behind
      send(response, 201, { id: order.id, amount: order.amount, status: order.status, qr_id: qr.id, qr_image: qr.qr_image, qr_url: qr.qr_url });
      return;
    }
    const orderPath = /^\/orders\/(ord_[0-9a-f]{8})$/.exec(pathname);
    if (request.method === 'GET' && orderPath) {
      const order = orders.get(orderPath[1]!);
      if (!order) return send(response, 404, { error: 'no such order' });
      const expired = order.status !== 'paid' && Date.now() > order.expiresAt + 60_000;
      return send(response, 200, { id: order.id, amount: order.amount, status: expired ? 'expired' : order.status });
    }
    if (request.method === 'POST' && pathname === '/webhooks') {
      const body = await readBody(request);
      let event: WebhookEvent;
      try {
        event = verifyWebhook(webhookSecret, body, request.headers);
      } catch {
        return send(response, 400, { error: 'bad signature' }); // not from the payments service
      }
      if (!handledEvents.has(event.id)) {
        handledEvents.add(event.id);
        markPaid(event);
      }
      return send(response, 200, { received: true });
    }
    send(response, 404, { error: 'not found' });
  }

  /** A payment of an order's QR pays the order; the event names the order as its external_reference. */
  function markPaid(event: WebhookEvent): void {
    if (event.type !== 'simple_qr.payment_received') return;
    const { qr, payment } = event.data as { qr: { id: string; external_reference: string | null }; payment: { amount: number } };
    const order = qr.external_reference ? orders.get(qr.external_reference) : undefined;
    if (order && order.qrId === qr.id && payment.amount === order.amount) order.status = 'paid';
  }

  await new Promise<void>((resolve) => server.listen(options.port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A shop registers its endpoint once and stores the secret; this demo registers one per run.
  const endpoint = await client.webhookEndpoints.create({
    url: `${options.publicUrl ?? url}/webhooks`, events: ['simple_qr.payment_received'], description: 'checkout example',
  });
  webhookSecret = endpoint.secret;

  return {
    url,
    async close() {
      await client.webhookEndpoints.delete(endpoint.id).catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

/** The raw body: the signature is over the exact bytes, so it is verified before any JSON parsing. */
async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const apiKey = process.env.MPS_API_KEY;
  if (!apiKey) {
    console.error('Set MPS_API_KEY to the merchant key `npm start` printed (mk_test_…).');
    process.exit(2);
  }
  const shop = await startCheckout({
    baseUrl: process.env.MPS_BASE_URL ?? 'http://127.0.0.1:3000',
    apiKey,
    businessCode: Number(process.env.MPS_BUSINESS_CODE ?? 1001),
    port: Number(process.env.PORT ?? 4000),
    publicUrl: process.env.PUBLIC_URL,
  });
  console.log(`Checkout example: open ${shop.url}`);
  const stop = () => void shop.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
