// A self-service kiosk (a vending machine with a screen): it always shows a QR for its one product with
// a 5-minute countdown; on PAID it dispenses, at zero it cancels the QR, says so, and starts a new
// transaction. This backend holds the API key; the screen is page.html.
//
//   MPS_API_KEY=mk_test_… npx tsx examples/kiosk/server.ts     (README.md beside this file)
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, isApiError, QrNotPaidError, type SimpleQr } from '@merchant-payments/sdk';

export interface KioskOptions {
  baseUrl: string;
  apiKey: string;
  businessCode: number;
  port: number;
}

const PAGE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');
const PRICE = 8; // Bs, a bottle of water
/** How long the screen's long poll is held before it asks again. */
const WAIT_MS = 20_000;

export async function startKiosk(options: KioskOptions) {
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });

  const server = http.createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      console.error(error);
      if (!response.headersSent) send(response, 500, { error: 'internal error' });
    });
  });

  async function route(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const { pathname } = new URL(request.url ?? '/', 'http://kiosk');
    if (request.method === 'GET' && pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    }
    if (request.method === 'POST' && pathname === '/transactions') {
      const qr = await client.simpleQrs.create({ business_code: options.businessCode, amount: PRICE, description: 'Kiosk: water 500 ml', qr_expiration: '+5m' });
      // The time to pay, measured on the service's clock alone (its created_at to its expires_at): the
      // screen counts it down on its own clock, so neither the kiosk's nor this backend's clock must be right.
      const payWithinMs = Date.parse(qr.expires_at!) - Date.parse(qr.created_at);
      return send(response, 201, { id: qr.id, amount: qr.amount, qr_image: qr.qr_image, expires_at: qr.expires_at, pay_within_ms: payWithinMs });
    }
    const action = /^\/transactions\/([0-9a-f-]{36})\/(wait|cancel)$/.exec(pathname);
    if (action && request.method === 'GET' && action[2] === 'wait') return send(response, 200, { status: await waitBriefly(action[1]!) });
    if (action && request.method === 'POST' && action[2] === 'cancel') return send(response, 200, { status: await cancel(action[1]!) });
    send(response, 404, { error: 'not found' });
  }

  /** PAID, CANCELED, or ACTIVE when nothing happened for WAIT_MS (the screen asks again). */
  async function waitBriefly(id: string): Promise<SimpleQr['status']> {
    try {
      return (await client.simpleQrs.waitUntilPaid(id, { timeout: WAIT_MS })).status;
    } catch (error) {
      if (error instanceof QrNotPaidError) return error.qr.status;
      if (error instanceof Error && error.name === 'TimeoutError') return 'ACTIVE';
      throw error;
    }
  }

  /** At zero the kiosk cancels the QR; a payment that landed first wins, and the product is dispensed. */
  async function cancel(id: string): Promise<SimpleQr['status']> {
    try {
      return (await client.simpleQrs.cancel(id)).status;
    } catch (error) {
      if (isApiError(error, 'QR_NOT_CANCELABLE')) return (await client.simpleQrs.get(id)).status;
      throw error;
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const apiKey = process.env.MPS_API_KEY;
  if (!apiKey) {
    console.error('Set MPS_API_KEY to the key `npm start` printed (a terminal key tk_… or a merchant key mk_…).');
    process.exit(2);
  }
  const kiosk = await startKiosk({
    baseUrl: process.env.MPS_BASE_URL ?? 'http://127.0.0.1:3000',
    apiKey,
    businessCode: Number(process.env.MPS_BUSINESS_CODE ?? 1001),
    port: Number(process.env.PORT ?? 4001),
  });
  console.log(`Kiosk example: open ${kiosk.url}`);
  const stop = () => void kiosk.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
