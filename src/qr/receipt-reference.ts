// The payment reference a hosted receipt shows (docs/qr.md#receipts): what the payer quotes to the
// merchant and the merchant finds through the API. Never the payment's sequential id, which would tell
// anyone holding a receipt how many payments the service has taken and is no use to a payer.
//  - A bank's payment: the bank's transaction id (`rail_reference`), which the payer's bank app shows too.
//  - No bank id (the sandbox), single-use QR: the QR's id, a random UUID; the QR has this one payment.
//  - No bank id, multi-use QR: the QR's id and, after it, the payment's `paid_at` exactly as the API
//    writes it (UTC, milliseconds); the merchant finds it among GET /api/v2/simple-qrs/{id}/payments.
// All of it comes from fields the payment view already has (qr_id, paid_at, rail_reference): no column.
import type { PaymentRow, QrRow } from './store.ts';

export function receiptReference(qr: Pick<QrRow, 'id' | 'is_multi_use'>, payment: Pick<PaymentRow, 'rail_reference' | 'paid_at'>): string {
  if (payment.rail_reference !== null) return payment.rail_reference;
  return qr.is_multi_use ? `${qr.id} / ${payment.paid_at.toISOString()}` : qr.id;
}
