// A point-of-sale terminal in the console: the cashier types an amount, the terminal draws a QR for it,
// waits for the payment on the long poll and prints the receipt. Ctrl+C while waiting cancels the QR.
//
//   MPS_API_KEY=mk_test_… npx tsx examples/pos/pos.ts        (README.md beside this file)
import readline from 'node:readline/promises';
import QRCode from 'qrcode';
import { createClient, isApiError, QrNotPaidError, type SimpleQr } from '@merchant-payments/sdk';

const baseUrl = process.env.MPS_BASE_URL ?? 'http://127.0.0.1:3000';
const apiKey = process.env.MPS_API_KEY;
const businessCode = Number(process.env.MPS_BUSINESS_CODE ?? 1001);
if (!apiKey) {
  console.error('Set MPS_API_KEY to the key `npm start` printed (a terminal key tk_… or a merchant key mk_…).');
  process.exit(2);
}

const client = createClient({ baseUrl, apiKey });
const cashier = readline.createInterface({ input: process.stdin, output: process.stdout });
// Ctrl+C while a QR is shown cancels that sale, so nobody pays a sale the cashier gave up; at the prompt
// it quits. The end of the input (Ctrl+D) ends the shift the same way: a sale on screen is canceled first.
let selling: AbortController | null = null;
let shiftOver = false;
cashier.on('SIGINT', () => (selling ? selling.abort(new Error('canceled at the counter')) : cashier.close()));
cashier.on('close', () => {
  shiftOver = true;
  if (selling) selling.abort(new Error('the shift ended'));
  else process.exit(0);
});

for (;;) {
  const typed = (await cashier.question('\nAmount in Bs (empty to quit): ')).trim();
  if (typed === '') break;
  const amount = Number(typed.replace(',', '.'));
  if (!Number.isFinite(amount) || amount < 0.1 || amount > 100_000) {
    console.log('An amount from 0.10 to 100000.00, please.');
    continue;
  }
  try {
    await sell(amount);
  } catch (error) {
    // The terminal stays up for the next sale; the cashier sees why this one failed.
    console.log(`The sale failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (shiftOver) break;
}
process.exit(0);

async function sell(amount: number): Promise<void> {
  const qr = await client.simpleQrs.create({ business_code: businessCode, amount, description: 'Sale at the counter', qr_expiration: '+5m' });
  // A bank's QR whose image could not be decoded has no payload to draw: the hosted page shows its image.
  if (qr.qr_payload === null) console.log(`Scan the QR at ${qr.qr_url}`);
  // On a terminal, ANSI colours give the symbol its dark-on-light contrast; into a pipe or a file, escape
  // codes would be noise, so the same blocks are written as plain characters.
  else console.log(await QRCode.toString(qr.qr_payload, process.stdout.isTTY ? { type: 'terminal', small: true } : { type: 'utf8' }));
  console.log(`QR ${qr.id}: Bs ${amount.toFixed(2)}, waiting for the payment (Ctrl+C cancels)…`);

  const giveUp = new AbortController();
  selling = giveUp;
  try {
    const paid = await client.simpleQrs.waitUntilPaid(qr.id, { signal: giveUp.signal });
    await printReceipt(paid);
  } catch (error) {
    if (error instanceof QrNotPaidError) console.log(`Not paid: the QR is ${error.qr.status} (${error.qr.cancel_reason}).`);
    else if (giveUp.signal.aborted) await cancel(qr);
    else throw error;
  } finally {
    selling = null;
  }
}

/** Cancels the sale's QR, trying again while the network fails: a QR left payable is money taken for nothing. */
async function cancel(qr: SimpleQr): Promise<void> {
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    try {
      await client.simpleQrs.cancel(qr.id);
      console.log('Sale canceled; the QR no longer accepts payment.');
      return;
    } catch (error) {
      if (isApiError(error, 'QR_NOT_CANCELABLE')) {
        // Paid in the last instant (the payment stands, and so does the sale), or canceled already.
        const now = await client.simpleQrs.get(qr.id);
        if (now.status === 'PAID') await printReceipt(now);
        else console.log(`Sale canceled; the QR is ${now.status}.`);
        return;
      }
      // Sending a cancel again is harmless: a second one answers QR_NOT_CANCELABLE.
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
  console.log(`Could not cancel QR ${qr.id}: it may still be paid until it expires. Check it before the next sale.`);
}

async function printReceipt(qr: SimpleQr): Promise<void> {
  const payment = (await client.simpleQrs.payments(qr.id)).data[0];
  console.log([
    '------------- RECEIPT -------------',
    `Amount:     Bs ${(payment?.amount ?? qr.amount_collected).toFixed(2)}`,
    `Paid at:    ${new Date(qr.paid_at ?? payment?.paid_at ?? Date.now()).toLocaleString('es-BO', { timeZone: 'America/La_Paz' })}`,
    `Payer:      ${payment?.payer.account_titular ?? ''} ${payment?.payer.account_number ?? ''}`.trimEnd(),
    `Reference:  payment ${payment?.id ?? '?'} of QR ${qr.id}`,
    '------------ PAID ✓ -------------',
  ].join('\n'));
}
