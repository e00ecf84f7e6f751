// The batching rules of GroupCommit, with a scripted writer (the database side is proven through HTTP in
// test/transfers/group-commit.test.ts).
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/db/group-commit.ts';

interface Item { key: string; value: number; id?: string }

/** A writer whose batches stay open until the test releases them. */
function scriptedWriter() {
  const batches: Array<{ items: Item[]; release: (results?: Array<number | Error>) => void; fail: (error: Error) => void }> = [];
  const write = (items: Item[]) => new Promise<Array<number | Error>>((resolve, reject) => {
    batches.push({ items, release: (results) => resolve(results ?? items.map((item) => item.value * 10)), fail: reject });
  });
  return { batches, write };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

function groupOf(write: (items: Item[]) => Promise<Array<number | Error>>, maxBatch: number, maxInFlight: number) {
  return new GroupCommit<Item, number>({
    keyOf: (item) => item.key,
    exclusiveKeyOf: (item) => item.id ?? `${item.key}:${item.value}`,
    duplicate: () => new Error('duplicate'),
    write, maxBatch, maxInFlight,
  });
}

describe('GroupCommit', () => {
  it('writes an item alone at once when nothing is in flight, and the items that arrive meanwhile together next', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 1);
    const first = group.submit({ key: 'a', value: 1 });
    await tick();
    expect(writer.batches.map((b) => b.items.map((i) => i.value))).toEqual([[1]]);
    const later = [2, 3, 4].map((value) => group.submit({ key: `k${value}`, value }));
    await tick();
    expect(writer.batches).toHaveLength(1);
    writer.batches[0]!.release();
    expect(await first).toBe(10);
    await tick();
    expect(writer.batches[1]!.items.map((i) => i.value)).toEqual([2, 3, 4]);
    writer.batches[1]!.release();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  it('writes the items of one key that waited together, in arrival order, and never in two batches at once', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 3);
    const first = group.submit({ key: 'same', value: 1 });
    await tick();
    const results = [2, 3].map((value) => group.submit({ key: 'same', value }));
    const other = group.submit({ key: 'other', value: 4 });
    await tick();
    // 'same' 1 runs; 2 and 3 wait for it (though two more batches could start); 'other' goes meanwhile.
    expect(writer.batches.map((b) => b.items.map((i) => i.value))).toEqual([[1], [4]]);
    writer.batches[0]!.release();
    await tick();
    expect(writer.batches.map((b) => b.items.map((i) => i.value))).toEqual([[1], [4], [2, 3]]);
    writer.batches[2]!.release();
    writer.batches[1]!.release();
    expect(await Promise.all([first, ...results, other])).toEqual([10, 20, 30, 40]);
  });

  it('caps a batch at maxBatch, oldest first', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 2, 1);
    const all = [1, 2, 3, 4, 5].map((value) => group.submit({ key: `k${value}`, value }));
    await tick();
    writer.batches[0]!.release();
    await tick();
    writer.batches[1]!.release();
    await tick();
    writer.batches[2]!.release();
    await Promise.all(all);
    expect(writer.batches.map((b) => b.items.map((i) => i.value))).toEqual([[1], [2, 3], [4, 5]]);
  });

  it('rejects only the item whose result is an error', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 1);
    const blocker = group.submit({ key: 'x', value: 0 });
    const a = group.submit({ key: 'a', value: 1 });
    const b = group.submit({ key: 'b', value: 2 }).catch((error: Error) => error.message);
    await tick();
    writer.batches[0]!.release();
    await blocker;
    await tick();
    writer.batches[1]!.release([10, new Error('refused')]);
    expect(await a).toBe(10);
    expect(await b).toBe('refused');
  });

  it('retries the items of a failed batch alone, side by side, so only the failing one gets an error', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 1);
    const blocker = group.submit({ key: 'x', value: 0 });
    const pending = [1, 2, 3].map((value) => group.submit({ key: `k${value}`, value }));
    const outcomes = pending.map((promise) => promise.then((value) => ({ value }), (error: Error) => ({ error: error.message })));
    await tick();
    writer.batches[0]!.release();
    await blocker;
    await tick();
    writer.batches[1]!.fail(new Error('batch failed'));
    await tick();
    // All three retries are under way at once.
    const alone = writer.batches.slice(2);
    expect(alone.map((b) => b.items.map((i) => i.value))).toEqual([[1], [2], [3]]);
    alone[1]!.fail(new Error('item 2 failed'));
    alone[0]!.release();
    alone[2]!.release();
    expect(await Promise.all(outcomes)).toEqual([{ value: 10 }, { error: 'item 2 failed' }, { value: 30 }]);
  });

  it('retries a failed batch per key, keys side by side; a key whose batch fails again goes item by item, in arrival order', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 1);
    const blocker = group.submit({ key: 'x', value: 0 });
    await tick();
    const pending = [{ key: 'a', value: 1 }, { key: 'b', value: 2 }, { key: 'a', value: 3 }, { key: 'a', value: 4 }].map((item) => group.submit(item));
    const outcomes = pending.map((promise) => promise.then((value) => ({ value }), (error: Error) => ({ error: error.message })));
    writer.batches[0]!.release();
    await blocker;
    await tick();
    expect(writer.batches[1]!.items.map((i) => i.value)).toEqual([1, 2, 3, 4]);
    writer.batches[1]!.fail(new Error('lock not available'));
    await tick();
    // Each key's items as a batch of their own, both under way at once.
    expect(writer.batches.slice(2).map((b) => b.items.map((i) => i.value))).toEqual([[1, 3, 4], [2]]);
    writer.batches[3]!.release();
    writer.batches[2]!.fail(new Error('item 3 failed'));
    await tick();
    // Then one by one: 3 is not written before 1 has its answer.
    expect(writer.batches.slice(4).map((b) => b.items.map((i) => i.value))).toEqual([[1]]);
    writer.batches[4]!.release();
    await tick();
    expect(writer.batches.slice(5).map((b) => b.items.map((i) => i.value))).toEqual([[3]]);
    writer.batches[5]!.fail(new Error('item 3 failed'));
    await tick();
    writer.batches[6]!.release();
    expect(await Promise.all(outcomes)).toEqual([{ value: 10 }, { value: 20 }, { error: 'item 3 failed' }, { value: 40 }]);
  });

  it('frees a key as soon as its own retry is answered, while another key\'s retry is still under way', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 2);
    const blockers = [group.submit({ key: 'x', value: 0 }), group.submit({ key: 'y', value: 0 })];
    await tick();
    const pending = [{ key: 'a', value: 1 }, { key: 'b', value: 2 }].map((item) => group.submit(item));
    writer.batches[1]!.release();
    await tick();
    expect(writer.batches[2]!.items.map((i) => i.value)).toEqual([1, 2]);
    writer.batches[0]!.release();
    await Promise.all(blockers);
    writer.batches[2]!.fail(new Error('lock not available'));
    await tick();
    expect(writer.batches.slice(3).map((b) => b.items.map((i) => i.value))).toEqual([[1], [2]]);
    const next = group.submit({ key: 'a', value: 3 }); // waits: a's retry is being written
    await tick();
    expect(writer.batches).toHaveLength(5);
    writer.batches[3]!.release();
    expect(await pending[0]).toBe(10);
    await tick();
    // b's retry is still open; a's next item does not wait for it.
    expect(writer.batches.slice(5).map((b) => b.items.map((i) => i.value))).toEqual([[3]]);
    const after = [{ key: 'a', value: 4 }, { key: 'b', value: 5 }].map((item) => group.submit(item));
    await tick();
    expect(writer.batches).toHaveLength(6); // a is being written again, b is still being retried
    writer.batches[4]!.release();
    expect(await pending[1]).toBe(20);
    await tick();
    // The failed batch ending frees b alone: a's batch of 3 is still open, so 4 keeps waiting.
    expect(writer.batches.slice(6).map((b) => b.items.map((i) => i.value))).toEqual([[5]]);
    writer.batches[5]!.release();
    expect(await next).toBe(30);
    await tick();
    expect(writer.batches.slice(7).map((b) => b.items.map((i) => i.value))).toEqual([[4]]);
    writer.batches[6]!.release();
    writer.batches[7]!.release();
    expect(await Promise.all(after)).toEqual([40, 50]);
  });

  it('answers the rest of a key at once when an item-by-item retry finds the database unreachable', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 1);
    const blocker = group.submit({ key: 'x', value: 0 });
    await tick();
    const pending = [1, 2, 3].map((value) => group.submit({ key: 'a', value }));
    const outcomes = pending.map((promise) => promise.then((value) => ({ value }), (error: Error) => ({ error: error.message })));
    writer.batches[0]!.release();
    await blocker;
    await tick();
    writer.batches[1]!.fail(new Error('Connection terminated unexpectedly'));
    await tick();
    expect(writer.batches[2]!.items.map((i) => i.value)).toEqual([1]);
    writer.batches[2]!.fail(new Error('Connection terminated unexpectedly'));
    expect(await Promise.all(outcomes)).toEqual([1, 2, 3].map(() => ({ error: 'Connection terminated unexpectedly' })));
    expect(writer.batches).toHaveLength(3);
  });

  it('answers a merchant at once when its retry finds the database unreachable: two timeouts in all, not one per item', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 1);
    const blocker = group.submit({ key: 'x', value: 0 });
    await tick();
    const pending = [{ key: 'a', value: 1 }, { key: 'b', value: 2 }, { key: 'a', value: 3 }].map((item) => group.submit(item));
    const outcomes = pending.map((promise) => promise.then((value) => ({ value }), (error: Error) => ({ error: error.message })));
    writer.batches[0]!.release();
    await blocker;
    await tick();
    writer.batches[1]!.fail(new Error('Query read timeout'));
    await tick();
    expect(writer.batches.slice(2).map((b) => b.items.map((i) => i.value))).toEqual([[1, 3], [2]]);
    writer.batches[2]!.fail(new Error('Query read timeout'));
    writer.batches[3]!.fail(new Error('Query read timeout'));
    expect(await Promise.all(outcomes)).toEqual([1, 2, 3].map(() => ({ error: 'Query read timeout' })));
    expect(writer.batches).toHaveLength(4);
  });

  it('refuses at once an item whose exclusive key is queued or being written, and accepts it again afterwards', async () => {
    const writer = scriptedWriter();
    const group = groupOf(writer.write, 10, 1);
    const first = group.submit({ key: 'a', value: 1, id: 'key-1' });
    await expect(group.submit({ key: 'a', value: 1, id: 'key-1' })).rejects.toThrow('duplicate');
    await expect(group.submit({ key: 'b', value: 2, id: 'key-1' })).rejects.toThrow('duplicate');
    await tick();
    writer.batches[0]!.release();
    expect(await first).toBe(10);
    const again = group.submit({ key: 'a', value: 1, id: 'key-1' });
    await tick();
    writer.batches[1]!.release();
    expect(await again).toBe(10);
  });
});
