// Transfers paid out in batches by a bank rail (docs/rails.md, "Pay-out through a bank"; contract §14.4).
// Three steps, never a bank call inside a transaction:
//   1. cut: the PENDING transfers (at most the rail's batch size) become a batch written with its items,
//      and each becomes IN_TRANSIT with its event — one transaction; from here it cannot be cancelled;
//   2. upload, outside any transaction;
//   3. the answer applied in a second transaction: uploaded; refused (its transfers fail with the bank's
//      message, their funds return); or unknown — the bank may hold the batch, so it is never sent again:
//      its transfers stay IN_TRANSIT until the bank's status callbacks or the operator settle them.
// The status callback (one item each) completes or fails a transfer once; a repeat changes nothing, and a
// word contradicting an earlier one is kept for reconciliation and changes nothing either.
import type { Database, Transaction } from '../db/database.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import { idOfRailKey, railKey } from '../rails/keys.ts';
import type { RailName } from '../rails/names.ts';
import type { BatchPayOut, RailItemReport } from '../rails/pay-out.ts';
import * as batchStore from './batch-store.ts';
import type { BatchRow } from './batch-store.ts';
import { moveAllToInTransit, moveToCompleted, moveToFailed, railOrderOf } from './service.ts';
import * as store from './store.ts';
import type { TransferRow } from './store.ts';

/** A batch just written, with the transfers it holds (IN_TRANSIT). */
export interface WrittenBatch {
  batch: BatchRow;
  transfers: TransferRow[];
}

/** Step 1: the next batch of `rail`, written with its transfers IN_TRANSIT; null when nothing is PENDING. */
export async function cutBatch(db: Database, rail: RailName, maxItems: number, now: Date): Promise<WrittenBatch | null> {
  return db.transaction(async (tx) => {
    const pending = await store.claimPendingTransfers(tx, maxItems);
    if (pending.length === 0) return null;
    const batch = await batchStore.insertBatch(tx, { rail, transfers: pending.map((row) => ({ id: row.id, amountCentavos: row.amount_centavos })) }, now);
    return { batch, transfers: await moveAllToInTransit(tx, pending, now) };
  });
}

/** Steps 2 and 3: uploads a written batch, then records the answer. */
export async function uploadBatch(db: Database, payOut: BatchPayOut, written: WrittenBatch, now: () => Date): Promise<BatchRow> {
  const answer = await payOut.uploadBatch({ batchId: railKey('batch', written.batch.id), items: written.transfers.map(railOrderOf) });
  return db.transaction(async (tx) => {
    switch (answer.outcome) {
      case 'ok':
        return (await batchStore.markBatchUploaded(tx, written.batch.id, answer.value.bankBatchId, now())) ?? currentBatch(tx, written.batch.id);
      case 'refused':
        return refuseBatch(tx, written.batch.id, answer.message, now());
      case 'unknown':
        return (await batchStore.markBatchUnknown(tx, written.batch.id, answer.problem, now())) ?? currentBatch(tx, written.batch.id);
    }
  });
}

/**
 * One run of the pay-out: batches whose upload outlived its longest wait marked unknown (the process that
 * sent them stopped), then the next batch cut and uploaded. True when the batch was full (more may wait).
 */
export async function payOutNextBatch(db: Database, rail: RailName, payOut: BatchPayOut, now: () => Date): Promise<boolean> {
  await batchStore.markStaleUploadsUnknown(db, rail, new Date(now().getTime() - payOut.uploadTimeoutMs), now());
  const written = await cutBatch(db, rail, payOut.maxBatchItems, now());
  if (!written) return false;
  await uploadBatch(db, payOut, written, now);
  return written.transfers.length === payOut.maxBatchItems;
}

/** What a status callback came to. `unknown_item`: no item of ours has that key in that batch. */
export type ItemReportResult = 'applied' | 'repeated' | 'conflict' | 'unknown_item';

/** The bank's word on one item: the transfer completes or fails, once (contract §14.4). */
export async function applyItemReport(db: Database, rail: RailName, report: RailItemReport, now: Date): Promise<ItemReportResult> {
  const transferId = canonicalId(idOfRailKey('transfer', report.itemKey));
  if (transferId === null) return 'unknown_item';
  return db.transaction(async (tx) => {
    const item = await batchStore.findItemForUpdate(tx, transferId);
    if (!item || item.rail !== rail || railKey('batch', item.batch_id) !== report.batchId) return 'unknown_item';
    // Our batch and item, but another of the bank's batches: a stale or forged word, not the bank's on this
    // upload. (A batch whose upload's answer never came has no bank id to compare: the report is taken.)
    if (item.bank_batch_id !== null && report.bankBatchId !== null && item.bank_batch_id !== report.bankBatchId) return 'unknown_item';
    // The first word decides even if a later one is the bank's: the callback is unsigned, but the bank has no
    // read of an item to check either against, and the account's history shows reconciliation which was true
    // (docs/rails.md, "The first word decides").
    if (item.outcome !== null) {
      if (item.outcome === report.outcome) return 'repeated';
      await batchStore.recordItemConflict(tx, transferId, report.outcome, now);
      return 'conflict';
    }
    await batchStore.recordItemOutcome(tx, transferId, report, now);
    const [transfer] = await store.findTransfersForUpdate(tx, [transferId]);
    // Settled already (the operator resolved its batch, or its upload was refused): the word is kept on
    // the item, and reconciliation reports it where it disagrees with the transfer.
    if (transfer?.status !== 'IN_TRANSIT') return 'applied';
    if (report.outcome === 'accepted') await moveToCompleted(tx, transfer, report.debitReference, now);
    else await moveToFailed(tx, transfer, { failureCode: 'REJECTED_BY_BANK', failureMessage: report.reason, railReference: report.debitReference }, now);
    return 'applied';
  });
}

/** What the operator's resolution of a batch did. */
export interface ResolvedBatch {
  batch: BatchRow;
  /** The batch's transfers, as they are after it. */
  transfers: TransferRow[];
}

/**
 * The operator settles a batch after checking with the bank (POST /admin/v1/rails/batches/{batchId}/resolve):
 * its transfers still IN_TRANSIT become `to`. 404 for an unknown batch; 409 BATCH_NOT_RESOLVABLE while its
 * upload is still waiting for an answer, after a refusal (nothing is in transit), or once resolved.
 */
export async function resolveBatch(db: Database, batchKey: string, to: 'COMPLETED' | 'FAILED', now: Date): Promise<ResolvedBatch> {
  const id = canonicalId(idOfRailKey('batch', batchKey));
  if (id === null) throw notFound('batch');
  return db.transaction(async (tx) => {
    const current = await batchStore.findBatchForUpdate(tx, id);
    if (!current) throw notFound('batch');
    const batch = await batchStore.markBatchResolved(tx, current.id, to, now);
    if (!batch) {
      const why = current.resolution !== null ? `was resolved already (${current.resolution})` : `is ${current.status}`;
      throw new ApiError('BATCH_NOT_RESOLVABLE', { message: `Batch ${batchKey} ${why}; only an uploaded or unknown batch not resolved yet can be resolved.` });
    }
    const transfers: TransferRow[] = [];
    for (const row of await store.findTransfersForUpdate(tx, await batchStore.transferIdsOfBatch(tx, batch.id))) {
      if (row.status !== 'IN_TRANSIT') transfers.push(row);
      else if (to === 'COMPLETED') transfers.push(await moveToCompleted(tx, row, null, now));
      else transfers.push(await moveToFailed(tx, row, { failureCode: 'REJECTED_BY_BANK', failureMessage: null, railReference: null }, now));
    }
    return { batch, transfers };
  });
}

/** A refused upload: the batch refused, its transfers FAILED with the bank's message, their funds back. */
async function refuseBatch(tx: Transaction, batchId: number, message: string, now: Date): Promise<BatchRow> {
  const batch = await batchStore.markBatchRefused(tx, batchId, message, now);
  if (!batch) return currentBatch(tx, batchId);
  for (const row of await store.findTransfersForUpdate(tx, await batchStore.transferIdsOfBatch(tx, batchId))) {
    if (row.status === 'IN_TRANSIT') {
      await moveToFailed(tx, row, { failureCode: 'REJECTED_BY_BANK', failureMessage: message.slice(0, 500) || null, railReference: null }, now);
    }
  }
  return batch;
}

async function currentBatch(tx: Transaction, id: number): Promise<BatchRow> {
  const batch = await batchStore.findBatch(tx, id);
  if (!batch) throw new Error(`batch ${id} vanished`);
  return batch;
}

/** A positive bigint id in canonical decimal, or null (a key the bank echoes is not trusted to be one). */
function canonicalId(text: string | null): number | null {
  if (text === null || !/^[1-9][0-9]{0,14}$/.test(text)) return null;
  return Number(text);
}
