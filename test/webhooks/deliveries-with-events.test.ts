// Deliveries are written with their event (migration 012, docs/webhooks.md#how-it-works-and-the-decisions-taken): the
// commit of a change holds its event and one pending delivery per enabled, undeleted endpoint of the
// owner that takes the event's type — before any worker runs. Events are append-only. A database migrated
// from before 012 gets the deliveries its retired fan-out worker had not written yet.
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import * as events from '../../src/events/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds, openEmptyDatabase } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { commitPayment, createEndpoint } from './harness.ts';

async function deliveriesOfEvent(db: Database, eventId: string): Promise<Array<{ endpoint_id: string; status: string; attempts: number }>> {
  const { rows } = await db.query<{ endpoint_id: string; status: string; attempts: number }>(
    'select endpoint_id, status, attempts from webhook_deliveries where event_id = $1::text order by endpoint_id', [eventId]);
  return rows;
}

async function newestEventOf(db: Database, businessCode: number): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    "select id from events where owner_kind = 'merchant' and owner_id = $1::bigint order by sequence desc limit 1", [businessCode]);
  return rows[0]!.id;
}

describe.each(databaseKinds())('deliveries written with their event on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t.close());

  it('commits one pending delivery per enabled endpoint that takes the type, and none for the others, with no worker running', async () => {
    const merchant = await t.createMerchant();
    const other = await t.createMerchant();
    const everything = await createEndpoint(t, merchant.apiKey, { url: 'http://127.0.0.1:9/all' });
    const payments = await createEndpoint(t, merchant.apiKey, { url: 'http://127.0.0.1:9/payments', events: ['simple_qr.payment_received'] });
    await createEndpoint(t, merchant.apiKey, { url: 'http://127.0.0.1:9/transfers', events: ['transfer.created'] });
    const disabled = await createEndpoint(t, merchant.apiKey, { url: 'http://127.0.0.1:9/disabled' });
    expect((await t.request('PATCH', `/api/v2/webhook-endpoints/${disabled.id}`, { apiKey: merchant.apiKey, body: { status: 'disabled' } })).status).toBe(200);
    const deleted = await createEndpoint(t, merchant.apiKey, { url: 'http://127.0.0.1:9/deleted' });
    expect((await t.request('DELETE', `/api/v2/webhook-endpoints/${deleted.id}`, { apiKey: merchant.apiKey })).status).toBe(204);
    await createEndpoint(t, other.apiKey, { url: 'http://127.0.0.1:9/other-merchant' });

    await commitPayment(t, merchant);
    const eventId = await newestEventOf(t.db, merchant.businessCode);
    expect(await deliveriesOfEvent(t.db, eventId)).toEqual(
      [everything.id, payments.id].sort().map((endpointId) => ({ endpoint_id: endpointId, status: 'pending', attempts: 0 })),
    );
  });

  it('writes the deliveries of several events emitted by one statement, each to its own owner', async () => {
    const first = await t.createMerchant();
    const second = await t.createMerchant();
    const firstEndpoint = await createEndpoint(t, first.apiKey, { url: 'http://127.0.0.1:9/first' });
    const secondEndpoint = await createEndpoint(t, second.apiKey, { url: 'http://127.0.0.1:9/second', events: ['transfer.created'] });
    const emitted = await t.db.transaction((tx) => events.emitEach(tx, [
      { owner: { kind: 'merchant', businessCode: first.businessCode }, type: 'transfer.created', data: { n: 1 }, now: t.clock.now() },
      { owner: { kind: 'merchant', businessCode: second.businessCode }, type: 'transfer.created', data: { n: 2 }, now: t.clock.now() },
      { owner: { kind: 'merchant', businessCode: second.businessCode }, type: 'transfer.failed', data: { n: 3 }, now: t.clock.now() },
    ]));
    expect(await deliveriesOfEvent(t.db, emitted[0]!.id)).toEqual([{ endpoint_id: firstEndpoint.id, status: 'pending', attempts: 0 }]);
    expect(await deliveriesOfEvent(t.db, emitted[1]!.id)).toEqual([{ endpoint_id: secondEndpoint.id, status: 'pending', attempts: 0 }]);
    expect(await deliveriesOfEvent(t.db, emitted[2]!.id)).toEqual([]);
  });

  it('writes a partner\'s event to the partner\'s endpoints, not to a merchant whose code equals the partner\'s id', async () => {
    const partner = await t.createPartner();
    const partnerEndpoint = await createEndpoint(t, partner.masterKey, { url: 'http://127.0.0.1:9/partner' });
    // A merchant endpoint whose owner_id is the partner's id: only owner_kind tells them apart.
    await t.db.query(
      `insert into webhook_endpoints (id, owner_kind, owner_id, url, event_types, secret, created_at, updated_at)
       values ('we_0000000000000000same', 'merchant', $1::bigint, 'http://127.0.0.1:9/same-id', array['*'], 'whsec_' || repeat('A', 40), now(), now())`,
      [partner.partnerId]);
    const [event] = await t.db.transaction((tx) => events.emitEach(tx, [
      { owner: { kind: 'partner', partnerId: partner.partnerId }, type: 'onboarding_intent.completed', data: {}, now: t.clock.now() },
    ]));
    expect(await deliveriesOfEvent(t.db, event!.id)).toEqual([{ endpoint_id: partnerEndpoint.id, status: 'pending', attempts: 0 }]);
  });

  it('leaves no delivery behind when the event\'s transaction rolls back', async () => {
    const merchant = await t.createMerchant();
    await createEndpoint(t, merchant.apiKey, { url: 'http://127.0.0.1:9/rolled-back' });
    let eventId = '';
    await expect(t.db.transaction(async (tx) => {
      eventId = (await events.emit(tx, { kind: 'merchant', businessCode: merchant.businessCode }, 'simple_qr.paid', {}, t.clock.now())).id;
      expect((await tx.query('select 1 from webhook_deliveries where event_id = $1::text', [eventId])).rows).toHaveLength(1);
      throw new Error('the change failed after its event was written');
    })).rejects.toThrow('change failed');
    expect(await deliveriesOfEvent(t.db, eventId)).toEqual([]);
  });

  it.each(['update events set type = \'simple_qr.paid\'', 'delete from events'])('refuses to change an event: %s', async (statement) => {
    const merchant = await t.createMerchant();
    await commitPayment(t, merchant);
    const eventId = await newestEventOf(t.db, merchant.businessCode);
    await expect(t.db.query(`${statement} where id = $1::text`, [eventId])).rejects.toMatchObject({ code: '55000' });
    const { rows } = await t.db.query<{ type: string }>('select type from events where id = $1::text', [eventId]);
    expect(rows).toEqual([{ type: 'simple_qr.payment_received' }]);
  });
});

describe.each(databaseKinds())('migration 012 on %s', (kind) => {
  it('writes the deliveries of the events the retired fan-out had not published, and only those', async () => {
    const database = await openEmptyDatabase(kind);
    try {
      await migrate(database.db, loadMigrations().filter((migration) => migration.version < 12));
      const { db } = database;
      const merchant = (await db.query<{ business_code: number }>("insert into merchants (name) values ('Old Shop') returning business_code")).rows[0]!.business_code;
      const endpoint = async (id: string, types: string[], state: { status?: string; deletedAt?: string } = {}) => db.query(
        `insert into webhook_endpoints (id, owner_kind, owner_id, url, event_types, secret, status, created_at, updated_at, deleted_at)
         values ($1::text, 'merchant', $2::bigint, 'https://example.com/hook', $3::text[], 'whsec_' || repeat('A', 40), $4::text, now(), now(), $5::timestamptz)`,
        [id, merchant, types, state.status ?? 'enabled', state.deletedAt ?? null]);
      await endpoint('we_00000000000000000001', ['*']);
      await endpoint('we_00000000000000000002', ['transfer.created']);
      await endpoint('we_00000000000000000003', ['*'], { status: 'disabled' });
      await endpoint('we_00000000000000000004', ['*'], { deletedAt: '2026-11-21T10:00:00Z' });
      const event = async (id: string, type: string, publishedAt: string | null) => db.query(
        `insert into events (id, owner_kind, owner_id, type, data, created_at, published_at)
         values ($1::text, 'merchant', $2::bigint, $3::text, '{}'::jsonb, now(), $4::timestamptz)`,
        [id, merchant, type, publishedAt]);
      await event('evt_0000000000000000000000published', 'simple_qr.paid', '2026-11-20T10:00:00Z');
      await event('evt_000000000000000000000000waiting', 'simple_qr.paid', null);
      await event('evt_00000000000000000000000transfer', 'transfer.created', null);

      await migrate(db);
      const { rows } = await db.query<{ event_id: string; endpoint_id: string; status: string }>(
        'select event_id, endpoint_id, status from webhook_deliveries order by event_id, endpoint_id');
      expect(rows).toEqual([
        { event_id: 'evt_000000000000000000000000waiting', endpoint_id: 'we_00000000000000000001', status: 'pending' },
        { event_id: 'evt_00000000000000000000000transfer', endpoint_id: 'we_00000000000000000001', status: 'pending' },
        { event_id: 'evt_00000000000000000000000transfer', endpoint_id: 'we_00000000000000000002', status: 'pending' },
      ]);
      // Every event is published for processes of the previous version still running (their fan-out finds
      // nothing), and so is every event written from now on.
      await db.query(`insert into events (id, owner_kind, owner_id, type, data, created_at)
                      values ('evt_0000000000000000000000000after', 'merchant', $1::bigint, 'simple_qr.paid', '{}'::jsonb, now())`, [merchant]);
      expect((await db.query('select id from events where published_at is null')).rows).toEqual([]);
    } finally {
      await database.drop();
    }
  });
});
