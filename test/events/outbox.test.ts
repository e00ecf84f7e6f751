// The event outbox (docs/api-reference.md#event-types, docs/architecture.md, rules 2 and 9): emit writes in the caller's transaction, a
// rollback leaves nothing, and listeners are woken only after a commit, and only by events someone takes.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../src/db/database.ts';
import * as events from '../../src/events/service.ts';
import { EVENTS_CHANNEL, type EventOwner, type EventRow } from '../../src/events/service.ts';
import { createMerchant } from '../../src/merchants/service.ts';
import { createTestDatabase, databaseKinds, describeOnPostgres, type TestDatabase } from '../helpers/databases.ts';
import { eventsOfOwner } from '../helpers/events.ts';
import { toEventPayload } from '../../src/events/views.ts';
import { newEndpointId } from '../../src/webhooks/service.ts';
import { newWebhookSecret } from '../../src/webhooks/signing.ts';
import * as webhookStore from '../../src/webhooks/store.ts';

const T0 = new Date('2026-11-22T16:00:00.000Z');
const BARRIER_CHANNEL = 'mps_test_outbox_barrier';
const WAIT_MS = 10_000;

/**
 * Counts notifications on EVENTS_CHANNEL. `barrier()` sends a unique notification on another channel and
 * waits for PostgreSQL to deliver it: this process's listeners hear every notification twice, at once and
 * then through the database, and the database delivers in commit order, so once the barrier's second
 * arrival is here, every notification sent before it has arrived too. That proves "not woken" without
 * sleeping for a guessed time.
 */
async function watchEvents(db: Database) {
  let eventsNotifications = 0;
  const eventWaiters: Array<() => void> = [];
  /** Per barrier token: how many arrivals it still waits for, and what to call at the last. */
  const barrierWaiters = new Map<string, { left: number; arrived: () => void }>();
  const stopEvents = await db.listen(EVENTS_CHANNEL, () => {
    eventsNotifications++;
    for (const wake of eventWaiters.splice(0)) wake();
  });
  const stopBarrier = await db.listen(BARRIER_CHANNEL, (payload) => {
    const waiter = barrierWaiters.get(payload);
    if (waiter && --waiter.left === 0) waiter.arrived();
  });
  return {
    get count() {
      return eventsNotifications;
    },
    async barrier(): Promise<void> {
      const token = randomUUID();
      const arrived = new Promise<void>((resolve) => barrierWaiters.set(token, { left: 2, arrived: resolve }));
      db.notify(BARRIER_CHANNEL, token);
      await bounded(arrived, 'the barrier notification');
      barrierWaiters.delete(token);
    },
    /** Resolves at the next notification on EVENTS_CHANNEL (or at once if `since` is already passed). */
    async nextEventsNotification(since: number): Promise<void> {
      if (eventsNotifications > since) return;
      await bounded(new Promise<void>((resolve) => eventWaiters.push(resolve)), `a notification on ${EVENTS_CHANNEL}`);
    },
    async stop() {
      await stopEvents();
      await stopBarrier();
    },
  };
}

async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function eventById(db: Queryable, id: string): Promise<EventRow | undefined> {
  const { rows } = await db.query<EventRow>(
    'select id, sequence, owner_kind, owner_id, type, data, created_at from events where id = $1::text',
    [id],
  );
  return rows[0];
}

/** A webhook endpoint of the merchant taking `eventTypes`: the subscriber that makes its events wake consumers. */
async function subscribe(db: Database, businessCode: number, eventTypes: string[], status: 'enabled' | 'disabled' = 'enabled'): Promise<void> {
  await db.transaction(async (tx) => {
    const endpoint = await webhookStore.insertEndpoint(tx, {
      id: newEndpointId(), ownerKind: 'merchant', ownerId: businessCode, url: 'http://127.0.0.1:9/hook', description: null, eventTypes, secret: newWebhookSecret(),
    }, T0);
    if (status === 'disabled') await tx.query("update webhook_endpoints set status = 'disabled' where id = $1::text", [endpoint.id]);
  });
}

/** The first page of an owner's events, as the events API reads them. */
const FIRST_PAGE = { page: 1, perPage: 100 };

describe.each(databaseKinds())('event outbox on %s', (kind) => {
  let database: TestDatabase;
  let watcher: Awaited<ReturnType<typeof watchEvents>> | null = null;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterEach(async () => {
    await watcher?.stop();
    watcher = null;
  });
  afterAll(() => database.drop());
  const listed = async (owner: EventOwner) => (await events.listEventPage(database.db, owner, null, FIRST_PAGE)).items;

  async function newMerchant(): Promise<number> {
    return (await createMerchant(database.db, { name: 'Outbox Shop' }, 'sandbox', T0)).merchant.business_code;
  }

  it('emit writes an evt_ event with its owner, type, data and time in the caller\'s transaction', async () => {
    const businessCode = await newMerchant();
    const data = { movement_id: 42, amount: 100.25, payer: { name: 'Ana' }, tags: ['a', 'b'] };
    const emitted = await database.db.transaction((tx) =>
      events.emit(tx, { kind: 'merchant', businessCode }, 'simple_qr.payment_received', data, T0));

    expect(emitted).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Za-z]{24}$/),
      sequence: expect.any(Number),
      owner_kind: 'merchant',
      owner_id: businessCode,
      type: 'simple_qr.payment_received',
      data,
      created_at: T0,
    });
    expect(await eventById(database.db, emitted.id)).toEqual(emitted);
    expect(toEventPayload(emitted)).toEqual({ id: emitted.id, type: 'simple_qr.payment_received', created_at: '2026-11-22T16:00:00.000Z', data });
  });

  it('every event gets its own id', async () => {
    const businessCode = await newMerchant();
    const emitted = await database.db.transaction(async (tx) => {
      const rows: EventRow[] = [];
      for (let i = 0; i < 20; i++) rows.push(await events.emit(tx, { kind: 'merchant', businessCode }, 'transfer.created', { i }, T0));
      return rows;
    });
    expect(new Set(emitted.map((e) => e.id)).size).toBe(20);
  });

  it('an event emitted in a rolled-back transaction is never written, and wakes no listener', async () => {
    const businessCode = await newMerchant();
    await subscribe(database.db, businessCode, ['*']);
    watcher = await watchEvents(database.db);
    await watcher.barrier(); // notifications of earlier tests are in
    const before = watcher.count;

    let emittedId = '';
    const boom = new Error('the change failed after its event was emitted');
    await expect(database.db.transaction(async (tx) => {
      emittedId = (await events.emit(tx, { kind: 'merchant', businessCode }, 'transfer.created', { n: 1 }, T0)).id;
      expect(await eventById(tx, emittedId)).toBeDefined(); // visible inside its transaction
      throw boom;
    })).rejects.toBe(boom);

    expect(emittedId).toMatch(/^evt_/);
    expect(await eventById(database.db, emittedId)).toBeUndefined();
    expect(await eventsOfOwner(database.db, { kind: 'merchant', businessCode })).toEqual([]);
    await database.db.flushNotifications();
    await watcher.barrier();
    expect(watcher.count).toBe(before);
  });

  it('a committed event someone takes is written and wakes a listener on EVENTS_CHANNEL', async () => {
    const businessCode = await newMerchant();
    await subscribe(database.db, businessCode, ['transfer.created']);
    watcher = await watchEvents(database.db);
    await watcher.barrier();
    const before = watcher.count;

    const emitted = await database.db.transaction((tx) =>
      events.emit(tx, { kind: 'merchant', businessCode }, 'transfer.created', { n: 2 }, T0));
    await watcher.nextEventsNotification(before);

    expect(watcher.count).toBeGreaterThan(before);
    expect(await eventById(database.db, emitted.id)).toEqual(emitted);
  });

  it('a committed event no endpoint takes wakes no listener: no endpoint, a disabled one, one filtering other types', async () => {
    const alone = await newMerchant();
    const withDisabled = await newMerchant();
    await subscribe(database.db, withDisabled, ['*'], 'disabled');
    const filtering = await newMerchant();
    await subscribe(database.db, filtering, ['transfer.failed']);
    // Another owner's endpoint that takes everything: a merchant's event is not its.
    const other = await newMerchant();
    await subscribe(database.db, other, ['*']);
    watcher = await watchEvents(database.db);
    await watcher.barrier();
    const before = watcher.count;

    await database.db.transaction((tx) => events.emitEach(tx, [alone, withDisabled, filtering].map((businessCode) => ({
      owner: { kind: 'merchant', businessCode } as const, type: 'transfer.created' as const, data: {}, now: T0,
    }))));
    await database.db.flushNotifications();
    await watcher.barrier();
    expect(watcher.count).toBe(before);

    // The same statement with one event its owner's endpoint takes wakes once more.
    await database.db.transaction((tx) => events.emitEach(tx, [
      { owner: { kind: 'merchant', businessCode: alone }, type: 'transfer.created', data: {}, now: T0 },
      { owner: { kind: 'merchant', businessCode: filtering }, type: 'transfer.failed', data: {}, now: T0 },
    ]));
    await watcher.nextEventsNotification(before);
    expect(watcher.count).toBeGreaterThan(before);
  });

  it('listEventPage lists only that owner\'s events: a merchant and a partner with the same number are different owners', async () => {
    const businessCode = await newMerchant();
    const otherBusinessCode = await newMerchant();
    const merchant: EventOwner = { kind: 'merchant', businessCode };
    const partnerWithSameNumber: EventOwner = { kind: 'partner', partnerId: businessCode };
    const otherMerchant: EventOwner = { kind: 'merchant', businessCode: otherBusinessCode };

    const [ofMerchant, ofPartner, ofOther] = await database.db.transaction(async (tx) => [
      await events.emit(tx, merchant, 'transfer.created', { who: 'merchant' }, T0),
      await events.emit(tx, partnerWithSameNumber, 'onboarding_intent.completed', { who: 'partner' }, T0),
      await events.emit(tx, otherMerchant, 'transfer.created', { who: 'other' }, T0),
    ]);

    expect((await listed(merchant)).map((e) => e.id)).toEqual([ofMerchant!.id]);
    expect((await listed(partnerWithSameNumber)).map((e) => e.id)).toEqual([ofPartner!.id]);
    expect((await listed(otherMerchant)).map((e) => e.id)).toEqual([ofOther!.id]);
    expect(await listed({ kind: 'partner', partnerId: otherBusinessCode })).toEqual([]);
    expect((await listed(partnerWithSameNumber))[0]).toMatchObject({ owner_kind: 'partner', owner_id: businessCode });
  });

  it('listEventPage lists newest first, and events of the same instant in the order they were written, newest first', async () => {
    const businessCode = await newMerchant();
    const owner: EventOwner = { kind: 'merchant', businessCode };
    const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
    const emitAt = (when: Date, label: string) =>
      database.db.transaction((tx) => events.emit(tx, owner, 'transfer.created', { label }, when));

    const first = await emitAt(at(0), 'first');
    const second = await emitAt(at(60), 'second');
    const third = await emitAt(at(60), 'third'); // same instant as `second`, written after it
    const backdated = await emitAt(at(-60), 'backdated'); // written last, but the oldest

    const page = await listed(owner);
    expect(page.map((e) => e.data.label)).toEqual(['third', 'second', 'first', 'backdated']);
    expect(page.map((e) => e.id)).toEqual([third.id, second.id, first.id, backdated.id]);
  });
});

// On PGlite the notifier cannot send while a transaction holds the one connection, so "not before the
// commit" can only be observed on PostgreSQL.
describeOnPostgres('event outbox wake-ups on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });
  afterAll(() => database.drop());

  it('listeners are not woken while the emitting transaction is still open, only after it commits', async () => {
    const businessCode = (await createMerchant(database.db, { name: 'Outbox Shop' }, 'sandbox', T0)).merchant.business_code;
    await subscribe(database.db, businessCode, ['*']);
    const watcher = await watchEvents(database.db);
    try {
      await watcher.barrier();
      const before = watcher.count;
      let countWhileOpen = -1;
      await database.db.transaction(async (tx) => {
        await events.emit(tx, { kind: 'merchant', businessCode }, 'transfer.created', { n: 3 }, T0);
        await watcher.barrier(); // sent on another connection while this transaction is open
        countWhileOpen = watcher.count;
      });
      expect(countWhileOpen).toBe(before);
      await watcher.nextEventsNotification(before);
      expect(watcher.count).toBeGreaterThan(before);
    } finally {
      await watcher.stop();
    }
  });
});
