// Which payment a hosted receipt shows (docs/qr.md#receipts). A single-use QR's receipt is its one
// payment, for whoever holds the pay link. A multi-use QR takes many payers' money, so its receipt shows
// a browser only the payment that browser made: the pay page's form hands it a random receipt key (a
// cookie scoped to the pay link) and the payment keeps the key's SHA-256. Nobody else's payment is
// reachable: the key is unguessable and the database never holds it. A browser that pays the same QR
// again gets a new key: its receipt is that of its latest payment.
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import { randomBase62 } from '../ids.ts';
import * as store from './store.ts';
import type { PaymentRow, QrWithLastPayment } from './store.ts';

const RECEIPT_KEY = /^[0-9A-Za-z]{32}$/;

/** A new receipt key: one per payment, so the cookie names the browser's latest payment of the QR. */
export function newReceiptKey(): string {
  return randomBase62(32);
}

function hashOf(receiptKey: string): string {
  return createHash('sha256').update(receiptKey).digest('hex');
}

/** Binds the payment a browser just made to that browser's receipt key. */
export async function bindReceiptKey(db: Queryable, payment: PaymentRow, receiptKey: string): Promise<void> {
  await store.bindReceiptKey(db, payment.id, hashOf(receiptKey));
}

/** The payment the receipt of `found` shows to a browser holding `receiptKey` (null: none to show). */
export async function receiptPayment(db: Queryable, found: QrWithLastPayment, receiptKey: string | null): Promise<PaymentRow | null> {
  if (!found.qr.is_multi_use) return found.qr.paid_at !== null ? found.lastPayment : null;
  if (receiptKey === null || !RECEIPT_KEY.test(receiptKey)) return null;
  return (await store.findPaymentByReceiptKey(db, found.qr.id, hashOf(receiptKey))) ?? null;
}
