// Banco Económico's pay-out behind the rail-neutral BatchPayOut (src/rails/pay-out.ts): a batch of
// transfers is one batchPayment/upload, and the bank answers each item later with its notifyStatus
// callback (contract §14.4). The bank's shapes (batchDetailId, ACEP/RECH, transactionIdDebit) stop here.
import type { BanecoConfig } from '../../config.ts';
import type { RailAttemptLog } from '../attempts.ts';
import type { RailOutcome } from '../outcome.ts';
import type { BatchPayOut, RailBatchOrder, RailItemReading } from '../pay-out.ts';
import { MAX_BATCH_ITEMS, type BanecoClient } from './client.ts';
import { railOutcomeOf } from './outcome.ts';
import { readStatusNotification } from './wire.ts';

/** Time beyond BANECO_TIMEOUT before an upload still without answer is given up for (its process died). */
const UPLOAD_GRACE_MS = 30_000;

export class BanecoPayOut implements BatchPayOut {
  readonly kind = 'batches';
  readonly maxBatchItems = MAX_BATCH_ITEMS;
  readonly batchIntervalMs: number;
  readonly uploadTimeoutMs: number;

  constructor(
    private readonly client: BanecoClient,
    config: BanecoConfig,
    private readonly attempts: RailAttemptLog,
  ) {
    this.batchIntervalMs = config.batchIntervalMs;
    // An upload may first wait for a token (one timeout) and repeat once after a 401 (two more).
    this.uploadTimeoutMs = 3 * config.timeoutMs + UPLOAD_GRACE_MS;
  }

  async uploadBatch(batch: RailBatchOrder): Promise<RailOutcome<{ bankBatchId: string }>> {
    const result = await this.client.uploadBatch({
      batchId: batch.batchId,
      items: batch.items.map((item) => ({
        batchDetailId: item.idempotencyKey,
        amountCentavos: item.amountCentavos,
        accountNumber: item.accountNumber,
        bankCode: item.bankCode,
        beneficiaryName: item.accountTitular,
        note: item.reference ?? '',
      })),
    });
    return railOutcomeOf(this.attempts, result, (uploaded) => ({ bankBatchId: uploaded.bankBatchId }));
  }

  readItemReport(body: unknown): RailItemReading {
    const reading = readStatusNotification(body);
    if (!reading.ok) return { kind: 'unreadable', problem: reading.problem };
    const status = reading.value;
    return {
      kind: 'item',
      report: {
        batchId: status.batchId,
        bankBatchId: status.bankBatchId,
        itemKey: status.batchDetailId,
        outcome: status.outcome,
        reason: status.reason === null ? null : this.client.cleanText(status.reason) || null,
        debitReference: status.transactionIdDebit,
        creditReference: status.transactionIdCredit,
      },
    };
  }

  toJSON(): string {
    return 'BanecoPayOut';
  }
}
