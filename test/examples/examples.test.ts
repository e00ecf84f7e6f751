// The three integration patterns of examples/ against the service as `npm start` runs it (its workers
// deliver the webhooks), on the embedded database with the sandbox keys it makes on its first start:
// the POS as a child process on a pipe, the checkout and the kiosk in headless Chromium.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type MerchantPaymentsClient } from '@merchant-payments/sdk';
import { startCheckout } from '../../examples/checkout/server.ts';
import { startKiosk } from '../../examples/kiosk/server.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/kernel/logging.ts';
import type { SandboxCredentials } from '../../src/merchants/sandbox-setup.ts';
import { startService, type RunningService } from '../../src/startup.ts';
import { describeInChromium, launchChromium } from '../helpers/browser.ts';
import { trackOpen } from '../helpers/open-resources.ts';

let service: RunningService;
let closed: () => void;
let baseUrl: string;
let sandbox: SandboxCredentials;
let client: MerchantPaymentsClient;
/** What a POS or a kiosk is configured with: a terminal key (QRs and their payments only). */
let terminalKey: string;
const ADMIN_TOKEN = 'examples-admin-token-0123456789abcdef0';

beforeAll(async () => {
  const config = loadConfig({ DATABASE_URL: 'memory://', PORT: '0', ADMIN_TOKEN, LOG_LEVEL: 'silent', RATE_LIMIT: 'off', PUBLIC_RATE_LIMIT: 'off', SANDBOX_SETTLEMENT: 'off' });
  service = await startService(config, { log: createLogger('silent') });
  closed = trackOpen('the service of the examples');
  const address = service.app!.server.address();
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  sandbox = (await service.ready)!;
  client = createClient({ baseUrl, apiKey: sandbox.apiKey });
  const minted = await fetch(`${baseUrl}/admin/v1/merchants/${sandbox.businessCode}/api-keys`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'terminal' }),
  });
  terminalKey = ((await minted.json()) as { api_key: string }).api_key;
  expect(terminalKey).toMatch(/^tk_test_/);
});
afterAll(async () => {
  await service?.close();
  closed?.();
});

/** Resolves with the output so far once it matches `pattern`. */
function untilOutput(child: ChildProcessWithoutNullStreams, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in the output within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (!pattern.test(output)) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      resolve(output);
    };
    child.stdout.on('data', onData);
  });
}

describe('examples/first-payment.ts (docs/getting-started.md)', () => {
  it('creates a QR, has it paid in the sandbox and reads the balance', async () => {
    expect(sandbox.businessCode).toBe(1001); // what the program (and a first `npm start`) uses
    const program = spawn(process.execPath, ['--import', 'tsx', 'examples/first-payment.ts'], {
      env: { ...process.env, MPS_BASE_URL: baseUrl, MPS_API_KEY: sandbox.apiKey },
    });
    const exited = new Promise<number | null>((resolve) => program.on('exit', resolve));
    try {
      const output = await untilOutput(program, /Available: Bs [\d.]+\n/);
      expect(output).toMatch(/QR [0-9a-f-]{36} is ACTIVE; the payer opens http:\/\/\S+\/pay\/\w+/);
      expect(output).toMatch(/Paid: Bs 25\.5 at \d{4}-/);
      expect(await exited).toBe(0);
    } finally {
      program.kill();
    }
  });
});

describe('examples/pos', () => {
  it('draws a QR for the typed amount, waits, and prints the receipt when the payer pays', async () => {
    const pos = spawn(process.execPath, ['--import', 'tsx', 'examples/pos/pos.ts'], {
      env: { ...process.env, MPS_BASE_URL: baseUrl, MPS_API_KEY: terminalKey, MPS_BUSINESS_CODE: String(sandbox.businessCode) },
    });
    const exited = new Promise<number | null>((resolve) => pos.on('exit', resolve));
    try {
      await untilOutput(pos, /Amount in Bs/);
      pos.stdin.write('12,50\n');
      const shown = await untilOutput(pos, /QR ([0-9a-f-]{36}): Bs 12\.50, waiting/);
      expect(shown).toMatch(/[▀▄█]/); // the QR drawn with block characters
      expect(shown).not.toContain('\u001b['); // and no colour codes: its output is a pipe here, not a terminal
      const qrId = /QR ([0-9a-f-]{36})/.exec(shown)![1]!;
      await client.sandbox.payQr(qrId, { account_number: '10000123454321', account_titular: 'Ana Pérez' });
      const receipt = await untilOutput(pos, /PAID ✓/);
      expect(receipt).toContain('Amount:     Bs 12.50');
      expect(receipt).toMatch(/Payer: +Ana Pérez \*+4321/);
      pos.stdin.end(); // the end of the shift
      expect(await exited).toBe(0);
    } finally {
      pos.kill();
    }
  });
});

describeInChromium('examples/checkout and examples/kiosk in the browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  it('checkout: the page shows the order\'s QR and turns to paid once the signed webhook reaches the shop', async () => {
    const shop = await startCheckout({ baseUrl, apiKey: sandbox.apiKey, businessCode: sandbox.businessCode, port: 0 });
    const page = await browser.newPage();
    try {
      await page.goto(shop.url);
      await page.getByRole('button', { name: 'Pay with QR' }).click();
      await page.getByAltText('Payment QR code for Bs 35.00').waitFor();
      const payLink = await page.getByRole('link', { name: 'Open the payment page' }).getAttribute('href');
      expect(payLink).toMatch(/\/pay\//);
      // The payer pays: the service delivers simple_qr.payment_received to the shop, which marks the order.
      const qrs = await client.simpleQrs.list({ status: 'ACTIVE', per_page: 1 });
      const qr = qrs.data[0]!;
      expect(qr.external_reference).toMatch(/^ord_/);
      await client.sandbox.payQr(qr.id);
      await page.getByText(/Paid — thank you! Order ord_/).waitFor({ timeout: 20_000 });
      // The shop verified the signature: a forged delivery is refused.
      const forged = await fetch(`${shop.url}/webhooks`, { method: 'POST', body: '{"type":"simple_qr.payment_received"}', headers: { 'webhook-id': 'evt_x', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' } });
      expect(forged.status).toBe(400);
    } finally {
      await page.close();
      await shop.close();
    }
  });

  it('kiosk: dispenses on PAID; at zero cancels the QR, says so, and starts a new transaction', async () => {
    const kiosk = await startKiosk({ baseUrl, apiKey: terminalKey, businessCode: sandbox.businessCode, port: 0 });
    const context = await browser.newContext();
    await context.clock.install(); // the page's clock: real time flows, and the test may jump it ahead
    const page = await context.newPage();
    const created: string[] = [];
    page.on('response', async (response) => {
      if (response.url().endsWith('/transactions') && response.status() === 201) created.push((await response.json()).id);
    });
    try {
      await page.goto(kiosk.url);
      await page.getByAltText('Payment QR code for Bs 8.00').waitFor();
      await expect.poll(() => created.length).toBe(1);
      expect(await page.getByRole('timer').textContent()).toMatch(/^[45]:\d\d$/);
      await client.sandbox.payQr(created[0]!);
      await page.getByText('Paid. Dispensing your water').waitFor({ timeout: 15_000 });

      // The next transaction comes by itself; then nobody pays for five minutes.
      await expect.poll(() => created.length, { timeout: 15_000 }).toBe(2);
      await page.getByAltText('Payment QR code for Bs 8.00').waitFor();
      await context.clock.fastForward('05:01');
      await page.getByText('Time is up: this transaction was canceled').waitFor({ timeout: 15_000 });
      expect(await client.simpleQrs.get(created[1]!)).toMatchObject({ status: 'CANCELED', cancel_reason: 'merchant' });
      await expect.poll(() => created.length, { timeout: 15_000 }).toBe(3);
      expect(new Set(created).size).toBe(3);
    } finally {
      await context.close();
      await kiosk.close();
    }
  });
});
