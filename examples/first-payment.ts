// Your first paid QR with the SDK, in the sandbox (docs/getting-started.md shows this file).
//   MPS_API_KEY=mk_test_… npx tsx examples/first-payment.ts
import { createClient } from '@merchant-payments/sdk';

const client = createClient({
  baseUrl: process.env.MPS_BASE_URL ?? 'http://127.0.0.1:3000',
  apiKey: process.env.MPS_API_KEY ?? '', // the merchant key `npm start` printed
});

// 1. A single-use QR for Bs 25.50 that expires in 10 minutes.
const qr = await client.simpleQrs.create({ business_code: 1001, amount: 25.5, description: 'My first order', qr_expiration: '+10m' });
console.log(`QR ${qr.id} is ${qr.status}; the payer opens ${qr.qr_url}`);

// 2. In the sandbox, play the payer's bank (in live mode the payer scans the QR with their bank's app).
setTimeout(() => void client.sandbox.payQr(qr.id), 1000);

// 3. Wait for the payment: a long poll, answered the moment the QR is paid.
const paid = await client.simpleQrs.waitUntilPaid(qr.id, { timeout: 60_000 });
console.log(`Paid: Bs ${paid.amount_collected} at ${paid.paid_at}`);

// 4. The money is in the balance.
const balance = await client.balance.get();
console.log(`Available: Bs ${balance.available}`);
