// Group commit: writes that arrive while earlier ones are being written go to the database together, in
// one transaction of a few multi-row statements, instead of one transaction each. Under load most of a
// small transaction's cost is per statement and per commit (round trips, parsing, the WAL flush), so
// sharing them is what lets the database keep up; when the service is idle a write goes alone at once —
// no timer ever holds one back.
//
// Items with the same key (one merchant's balance) share a batch in arrival order — the statement
// applies them one after another under one lock (ledger.debitEach) — but never run in two batches at
// once: a key's items that arrive while its batch is being written wait for the next one, so a hot
// balance takes its waiting items together rather than one transaction each. An item whose exclusive
// key (its Idempotency-Key) is already queued or being written is refused at once: it must not wait for
// the first and be answered after it. When a whole batch fails, each key's items are retried as a batch
// of their own, keys side by side, and a key's batch that fails again item by item in arrival order (see
// writeBatch), so one bad item — or one balance another transaction holds — costs the others a retry,
// never their answer.

import { isDatabaseUnavailable } from './database.ts';

export interface GroupCommitOptions<Item, Result> {
  /** Items of one key go in arrival order, in one batch at a time. */
  keyOf: (item: Item) => string | number;
  /** At most one item of an exclusive key is queued or being written; another is refused with `duplicate()`. */
  exclusiveKeyOf: (item: Item) => string;
  duplicate: () => Error;
  /** Writes a batch in one transaction; one result (or the error of that item alone) per item, in order. */
  write: (items: Item[]) => Promise<Array<Result | Error>>;
  /** Most items in one batch. */
  maxBatch: number;
  /** Most batches being written at once (each holds a database connection). */
  maxInFlight: number;
}

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<Item, Result> {
  private queue: Array<Waiting<Item, Result>> = [];
  private busyKeys = new Set<string | number>();
  private exclusiveKeys = new Set<string>();
  private inFlight = 0;

  constructor(private readonly options: GroupCommitOptions<Item, Result>) {}

  /** Resolves with the item's result once its batch has committed; rejects with its error. */
  submit(item: Item): Promise<Result> {
    const exclusiveKey = this.options.exclusiveKeyOf(item);
    if (this.exclusiveKeys.has(exclusiveKey)) return Promise.reject(this.options.duplicate());
    this.exclusiveKeys.add(exclusiveKey);
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.startBatches();
    }).finally(() => this.exclusiveKeys.delete(exclusiveKey));
  }

  private startBatches(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.takeBatch();
      if (batch.length === 0) return; // everything waiting belongs to keys being written
      for (const waiting of batch) this.busyKeys.add(this.options.keyOf(waiting.item));
      this.inFlight++;
      void this.writeBatch(batch).finally(() => {
        this.inFlight--;
        this.startBatches();
      });
    }
  }

  /**
   * The oldest waiting items whose keys no batch in flight holds, up to maxBatch, in arrival order; the
   * rest keep their place (so a key's items are always written in the order they arrived).
   */
  private takeBatch(): Array<Waiting<Item, Result>> {
    const batch: Array<Waiting<Item, Result>> = [];
    const rest: Array<Waiting<Item, Result>> = [];
    for (const waiting of this.queue) {
      if (batch.length < this.options.maxBatch && !this.busyKeys.has(this.options.keyOf(waiting.item))) batch.push(waiting);
      else rest.push(waiting);
    }
    this.queue = rest;
    return batch;
  }

  /**
   * Writes a batch; if it fails as a whole, each key's items are written again as a batch of their own,
   * keys side by side (one balance another transaction holds then delays only its own merchant, whose
   * batch waits for the lock); a key's batch that fails again is written item by item in arrival order, so
   * the one bad item alone gets the error. A key is free again as soon as its own items are answered, not
   * when the slowest key's retry ends: its next items may then go in a batch of their own.
   */
  private async writeBatch(batch: Array<Waiting<Item, Result>>, retry = false): Promise<void> {
    let retriedPerKey = false;
    try {
      settle(batch, await this.options.write(batch.map((waiting) => waiting.item)));
    } catch (error) {
      // A retry that finds the database unreachable answers its items now: a further retry would only
      // wait for another timeout (so an outage costs two, the batch's and its retries' side by side).
      if (retry && isDatabaseUnavailable(error)) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      const byKey = this.byKey(batch);
      retriedPerKey = byKey.length > 1;
      if (retriedPerKey) await Promise.all(byKey.map((ofKey) => this.writeBatch(ofKey, true)));
      else await this.writeOneByOne(batch, error);
    } finally {
      if (!retriedPerKey) this.free(batch); // else each key's retry freed its own key
    }
  }

  /** The batch's keys are no longer being written: their waiting items may start a batch. */
  private free(batch: Array<Waiting<Item, Result>>): void {
    for (const waiting of batch) this.busyKeys.delete(this.options.keyOf(waiting.item));
    this.startBatches();
  }

  private async writeOneByOne(batch: Array<Waiting<Item, Result>>, batchError: unknown): Promise<void> {
    if (batch.length === 1) {
      batch[0]!.reject(batchError);
      return;
    }
    for (const [i, waiting] of batch.entries()) {
      try {
        settle([waiting], await this.options.write([waiting.item]));
      } catch (error) {
        waiting.reject(error);
        // An unreachable database fails the rest the same way: answer them now, not one timeout each.
        if (isDatabaseUnavailable(error)) {
          for (const rest of batch.slice(i + 1)) rest.reject(error);
          return;
        }
      }
    }
  }

  /** The batch's items grouped by key, each group in arrival order. */
  private byKey(batch: Array<Waiting<Item, Result>>): Array<Array<Waiting<Item, Result>>> {
    const groups = new Map<string | number, Array<Waiting<Item, Result>>>();
    for (const waiting of batch) {
      const key = this.options.keyOf(waiting.item);
      const group = groups.get(key);
      if (group) group.push(waiting);
      else groups.set(key, [waiting]);
    }
    return [...groups.values()];
  }
}

function settle<Item, Result>(batch: Array<Waiting<Item, Result>>, results: Array<Result | Error>): void {
  batch.forEach((waiting, i) => {
    const result = results[i];
    if (result instanceof Error) waiting.reject(result);
    else if (result === undefined) waiting.reject(new Error('group commit: the batch returned no result for an item'));
    else waiting.resolve(result);
  });
}
