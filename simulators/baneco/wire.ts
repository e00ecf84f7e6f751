// How the bank writes its records on the wire: the PaymentQR of statusQR, paidQR and the payment
// callback; the account history's lines; the batch-item callback. Field names are the bank's, exactly.
import { laPaz } from './clock.ts';
import type { BatchItem, BatchRecord, HistoryEntry, PaymentRecord } from './state.ts';
import { toAmount } from './validate.ts';

/** A PaymentQR: the date carries a zero time (as in the bank's examples), the time comes apart. */
export function paymentQr(payment: PaymentRecord): Record<string, unknown> {
  const local = laPaz(payment.paidAt);
  return {
    qrId: payment.qrId,
    transactionId: payment.transactionId,
    paymentDate: `${local.date}T00:00:00`,
    paymentTime: local.time,
    currency: payment.currency,
    amount: toAmount(payment.amountCents),
    senderBankCode: payment.senderBankCode,
    senderName: payment.senderName,
    senderDocumentId: '0',
    senderAccount: payment.senderAccount,
    description: payment.description,
    branchCode: payment.branchCode,
  };
}

export function historyLine(entry: HistoryEntry): Record<string, unknown> {
  const local = laPaz(entry.at);
  return {
    transactionId: entry.transactionId,
    date: local.date,
    time: local.time,
    documentNumber: entry.documentNumber,
    transactionType: entry.transactionType,
    amount: toAmount(entry.amountCents),
    description: entry.description,
    clienteNote: entry.clienteNote,
  };
}

/**
 * The notifyStatus body of a decided item. A rejected item carries transactionIdDebit 0 and an empty
 * transactionIdCredit: nothing was debited or credited (the specification types both but says nothing
 * of a rejection; the simulator's choice).
 */
export function itemStatus(batch: BatchRecord, item: BatchItem, status: 'ACEP' | 'RECH' = item.status as 'ACEP' | 'RECH', reason = item.descriptionStatus): Record<string, unknown> {
  const accepted = status === 'ACEP';
  return {
    bankBatchId: batch.bankBatchId,
    batchId: batch.batchId,
    batchDetailId: item.batchDetailId,
    status,
    ...(reason ? { descriptionStatus: reason } : {}),
    transactionIdDebit: accepted ? (item.transactionIdDebit ?? 0) : 0,
    transactionIdCredit: accepted ? (item.transactionIdCredit ?? '') : '',
  };
}

/** What the `contradictNext` knob sends later: the other status than the one the bank decided. */
export function contradiction(batch: BatchRecord, item: BatchItem): Record<string, unknown> {
  if (item.status === 'ACEP') return itemStatus(batch, item, 'RECH', 'Rechazo posterior (contradicción simulada)');
  return { ...itemStatus(batch, { ...item, transactionIdDebit: 999_999_999, transactionIdCredit: '999999999' }, 'ACEP', undefined) };
}
