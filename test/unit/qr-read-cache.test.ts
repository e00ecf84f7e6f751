import { afterEach, describe, expect, it, vi } from 'vitest';
import { QrReadCache, TTL_MS } from '../../src/qr/read-cache.ts';
import type { QrWithLastPayment } from '../../src/qr/store.ts';

/** A stand-in row: the cache never looks inside what it stores. */
const state = (label: string) => ({ qr: { id: 'q1', label }, lastPayment: null }) as unknown as QrWithLastPayment;

/** A load that resolves when told to, counting its calls. */
function controlledLoad() {
  const calls: Array<(found: QrWithLastPayment | undefined) => void> = [];
  const load = () => new Promise<QrWithLastPayment | undefined>((resolve) => calls.push(resolve));
  return { load, calls };
}

describe('QrReadCache', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets requests that miss together share one database read', async () => {
    const cache = new QrReadCache();
    const { load, calls } = controlledLoad();
    const reads = [cache.read('q1', load), cache.read('q1', load), cache.read('q1', load)];
    expect(calls).toHaveLength(1);
    calls[0]!(state('v1'));
    expect(await Promise.all(reads)).toEqual([state('v1'), state('v1'), state('v1')]);
    expect(cache.peek('q1')).toEqual(state('v1'));
  });

  it('does not let a request that arrives after a change join a read begun before it', async () => {
    const cache = new QrReadCache();
    const { load, calls } = controlledLoad();
    const early = cache.read('q1', load);
    cache.invalidate('q1'); // the change committed while the first read was in flight
    const late = cache.read('q1', load);
    expect(calls).toHaveLength(2);
    calls[1]!(state('after'));
    calls[0]!(state('before'));
    expect(await early).toEqual(state('before'));
    expect(await late).toEqual(state('after'));
    // Neither read overlapped-and-stored an older state; the next poll reads again or sees the newer one.
    expect(cache.peek('q1')).not.toEqual(state('before'));
  });

  it('forgets a read in flight once it settles, even when another QR was invalidated meanwhile', async () => {
    const cache = new QrReadCache();
    const { load, calls } = controlledLoad();
    const first = cache.read('q1', load);
    cache.invalidate('q2');
    calls[0]!(state('v1'));
    await first;
    expect(cache.peek('q1')).toBeUndefined(); // overlapped an invalidation: not stored…
    const again = cache.read('q1', load); // …and not left in flight either: a new read starts
    expect(calls).toHaveLength(2);
    calls[1]!(state('v2'));
    expect(await again).toEqual(state('v2'));
  });

  it('gives every waiting request the failure of a shared read, and reads again afterwards', async () => {
    const cache = new QrReadCache();
    let attempts = 0;
    const failing = () => {
      attempts++;
      return Promise.reject(new Error('database unreachable'));
    };
    const reads = [cache.read('q1', failing), cache.read('q1', failing)];
    for (const read of reads) await expect(read).rejects.toThrow('database unreachable');
    expect(attempts).toBe(1);
    await expect(cache.read('q1', async () => state('v1'))).resolves.toEqual(state('v1'));
  });

  it('keeps an entry no longer than TTL_MS', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const cache = new QrReadCache();
    await cache.read('q1', async () => state('v1'));
    expect(cache.peek('q1')).toEqual(state('v1'));
    vi.advanceTimersByTime(TTL_MS * 0.75 - 10); // the spread shortens an entry's life by at most a quarter
    expect(cache.peek('q1')).toEqual(state('v1'));
    vi.advanceTimersByTime(TTL_MS * 0.25 + 10);
    expect(cache.peek('q1')).toBeUndefined();
  });

  it('does not hold on to expired entries of QRs nobody reads again (a soak grew 1 MiB a minute)', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const cache = new QrReadCache();
    for (let i = 0; i < 500; i++) await cache.read(`old-${i}`, async () => state(`v${i}`));
    expect(cache.size).toBe(500);
    vi.advanceTimersByTime(TTL_MS + 1);
    // Fresh QRs keep being read; the old ones never again. Their entries are swept, not kept until the cap.
    for (let i = 0; i < 1_500; i++) await cache.read(`new-${i}`, async () => state(`w${i}`));
    expect(cache.size).toBe(1_500); // without the sweep: 2,000
    expect(cache.peek('old-1')).toBeUndefined();
  });
});
