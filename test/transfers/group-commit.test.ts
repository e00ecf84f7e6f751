// Transfers created at the same moment are written together (src/db/group-commit.ts): these tests prove
// that batches really form — across merchants and for one merchant's balance — that every caller still
// gets its own answer, and that one creation failing inside a batch costs the others nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ledger from '../../src/ledger/service.ts';
import { CREATE_TRANSFER_ROUTE, toCreateTransferRequest, writeTransferCreations } from '../../src/transfers/service.ts';
import type { CreateTransferBody } from '../../src/transfers/schemas.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { databaseKinds } from '../helpers/databases.ts';
import { fixtureRoutes } from '../helpers/fixture-routes.ts';
import { balanceOf, fundedMerchant, postTransfer, transferBody, type Merchant } from './helpers.ts';
import { eventsOfOwner } from '../helpers/events.ts';

describe.each(databaseKinds())('transfers written together on %s', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ kind, plugins: [fixtureRoutes] });
  });
  afterAll(() => t.close());

  it('a burst from many merchants shares transactions, and each caller gets exactly its own transfer or refusal', async () => {
    const merchants: Merchant[] = [];
    for (let i = 0; i < 12; i++) merchants.push(await fundedMerchant(t, i === 0 ? '15.00' : '100.00'));
    // Three creations per merchant at once; the first merchant can afford only one of its three.
    const sent = merchants.flatMap((merchant, m) => [0, 1, 2].map((n) => ({
      merchant, key: randomUUID(), body: transferBody(merchant.businessCode, { amount: '10.00', reference: `m${m} n${n}` }),
    })));
    const responses = await Promise.all(sent.map(({ merchant, body, key }) => postTransfer(t, merchant, body, key)));

    const created = responses.filter((response) => response.status === 201);
    expect(created).toHaveLength(34);
    const refused = responses.filter((response) => response.status === 400);
    expect(refused).toHaveLength(2);
    for (const response of refused) expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
    for (const [i, response] of responses.entries()) {
      if (response.status !== 201) {
        expect(sent[i]!.merchant).toBe(merchants[0]);
        continue;
      }
      // The answer is this request's transfer, as stored.
      expect(response.body.reference).toBe(sent[i]!.body.reference);
      expect(response.body.business_code).toBe(sent[i]!.merchant.businessCode);
      const read = await t.request('GET', `/api/v2/transfers/${response.body.id}`, { apiKey: sent[i]!.merchant.apiKey });
      expect(read.body).toEqual(response.body);
    }
    expect(new Set(created.map((response) => response.body.id)).size).toBe(34);

    // Rows written by one transaction share its xmin: fewer transactions than transfers means batches
    // formed. Not on PGlite: it runs one statement at a time, so each request's own reads (its API key)
    // wait behind the batch in flight and arrive one by one.
    const { rows } = await t.db.query<{ transactions: number; transfers: number }>(
      'select count(distinct xmin::text)::int8 as transactions, count(*)::int8 as transfers from transfers where business_code = any($1::bigint[])',
      [merchants.map((merchant) => merchant.businessCode)],
    );
    expect(rows[0]!.transfers).toBe(34);
    if (kind === 'postgres') expect(rows[0]!.transactions).toBeLessThan(34);

    expect(await balanceOf(t, merchants[0]!)).toEqual({ available: 5, pending_out: 10 });
    for (const merchant of merchants.slice(1)) expect(await balanceOf(t, merchant)).toEqual({ available: 70, pending_out: 30 });
    for (const merchant of merchants) {
      const emitted = await eventsOfOwner(t.db, { kind: 'merchant', businessCode: merchant.businessCode });
      expect(emitted.filter((event) => event.type === 'transfer.created')).toHaveLength(merchant === merchants[0] ? 1 : 3);
    }
    const report = await ledger.checkLedger(t.db);
    expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });

    // Every stored outcome replays as it was answered, the refusals included.
    const replays = await Promise.all(sent.map(({ merchant, body, key }) => postTransfer(t, merchant, body, key)));
    for (const [i, replay] of replays.entries()) {
      expect(replay.status).toBe(responses[i]!.status);
      expect(replay.body).toEqual(responses[i]!.body);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
    }
  });

  it('a burst from one merchant shares transactions too, and its transfers are taken while the funds last', async () => {
    const merchant = await fundedMerchant(t, '150.00');
    const sent = Array.from({ length: 24 }, (_, n) => ({
      key: randomUUID(), body: transferBody(merchant.businessCode, { amount: '10.00', reference: `hot ${n}` }),
    }));
    const responses = await Promise.all(sent.map(({ body, key }) => postTransfer(t, merchant, body, key)));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(15);
    const refused = responses.filter((response) => response.status === 400);
    expect(refused).toHaveLength(9);
    for (const response of refused) expect(response.body.code).toBe('INSUFFICIENT_FUNDS');
    for (const [i, response] of responses.entries()) {
      if (response.status === 201) expect(response.body.reference).toBe(sent[i]!.body.reference);
    }
    expect(await balanceOf(t, merchant)).toEqual({ available: 0, pending_out: 150 });

    // One balance row, yet fewer transactions than transfers: a batch took several of its creations.
    const { rows } = await t.db.query<{ transactions: number }>(
      'select count(distinct xmin::text)::int8 as transactions from transfers where business_code = $1::bigint', [merchant.businessCode]);
    if (kind === 'postgres') expect(rows[0]!.transactions).toBeLessThan(15);
    const report = await ledger.checkLedger(t.db);
    expect({ violations: report.violations, problems: report.problems }).toEqual({ violations: [], problems: [] });
    const replays = await Promise.all(sent.map(({ body, key }) => postTransfer(t, merchant, body, key)));
    for (const [i, replay] of replays.entries()) expect({ status: replay.status, body: replay.body }).toEqual({ status: responses[i]!.status, body: responses[i]!.body });
  });

  it('a creation that fails inside a batch is retried alone: the others are created, it alone gets the error and nothing is stored for it', async () => {
    const merchants: Merchant[] = [];
    for (let i = 0; i < 8; i++) merchants.push(await fundedMerchant(t, '100.00'));
    // A trigger stands in for an unexpected database failure of one row.
    await t.db.query(`create function refuse_poison() returns trigger language plpgsql as $$
      begin
        if new.reference = 'poison' then raise exception 'poisoned row'; end if;
        return new;
      end $$`);
    await t.db.query('create trigger refuse_poison before insert on transfers for each row execute function refuse_poison()');
    const poisonKey = randomUUID();
    const poisonBody = transferBody(merchants[3]!.businessCode, { amount: '10.00', reference: 'poison' });
    // Merchant 3 sends the poisoned creation between two good ones, so its batch holds all three.
    const sent = merchants.flatMap((merchant, i) => (i === 3
      ? [
        { merchant, body: transferBody(merchant.businessCode, { amount: '10.00', reference: 'before poison' }), key: randomUUID() },
        { merchant, body: poisonBody, key: poisonKey },
        { merchant, body: transferBody(merchant.businessCode, { amount: '10.00', reference: 'after poison' }), key: randomUUID() },
      ]
      : [{ merchant, body: transferBody(merchant.businessCode, { amount: '10.00', reference: `ok ${i}` }), key: randomUUID() }]));
    let responses;
    try {
      responses = await Promise.all(sent.map(({ merchant, body, key }) => postTransfer(t, merchant, body, key)));
    } finally {
      await t.db.query('drop trigger refuse_poison on transfers');
      await t.db.query('drop function refuse_poison()');
    }
    responses.forEach((response, i) => expect(response.status).toBe(sent[i]!.key === poisonKey ? 500 : 201));
    const poisoned = responses[sent.findIndex(({ key }) => key === poisonKey)]!;
    expect(JSON.stringify(poisoned.body)).not.toContain('poisoned');
    expect(await balanceOf(t, merchants[3]!)).toEqual({ available: 80, pending_out: 20 });
    for (const merchant of merchants.filter((_, i) => i !== 3)) expect(await balanceOf(t, merchant)).toEqual({ available: 90, pending_out: 10 });

    // Nothing was stored for the failed key, so the same request now executes.
    const retry = await postTransfer(t, merchants[3]!, poisonBody, poisonKey);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await balanceOf(t, merchants[3]!)).toEqual({ available: 70, pending_out: 30 });
  });

  it('an event that fails to be written fails its creation alone: no debit, transfer or stored outcome for it, and the database\'s own error is what is reported', async () => {
    const merchants: Merchant[] = [];
    for (let i = 0; i < 4; i++) merchants.push(await fundedMerchant(t, '100.00'));
    // The events go unawaited, with the stored outcomes (Transaction.awaitBeforeCommit): a trigger stands in
    // for a failure of that write alone.
    await t.db.query(`create function refuse_poisoned_event() returns trigger language plpgsql as $$
      begin
        if new.data->>'reference' = 'poison' then raise exception 'poisoned event'; end if;
        return new;
      end $$`);
    await t.db.query('create trigger refuse_poisoned_event before insert on events for each row execute function refuse_poisoned_event()');
    const poisonKey = randomUUID();
    const poisonBody = transferBody(merchants[1]!.businessCode, { amount: '10.00', reference: 'poison' });
    let responses;
    let direct: unknown;
    try {
      responses = await Promise.all(merchants.map((merchant, i) => (i === 1
        ? postTransfer(t, merchant, poisonBody, poisonKey)
        : postTransfer(t, merchant, transferBody(merchant.businessCode, { amount: '10.00', reference: `ok ${i}` }), randomUUID()))));
      // The same failure below the HTTP layer: the error is the trigger's, not the "transaction is aborted"
      // of the outcome insert that was waiting behind it.
      direct = await writeTransferCreations(t.db, [{
        scope: { caller: `merchant:${merchants[2]!.businessCode}`, route: CREATE_TRANSFER_ROUTE, key: randomUUID() },
        request: toCreateTransferRequest(transferBody(merchants[2]!.businessCode, { amount: '10.00', reference: 'poison' }) as CreateTransferBody),
        origin: 'api',
        now: t.clock.now(),
      }]).then(() => 'resolved', (error: unknown) => error);
    } finally {
      await t.db.query('drop trigger refuse_poisoned_event on events');
      await t.db.query('drop function refuse_poisoned_event()');
    }
    responses.forEach((response, i) => expect(response.status).toBe(i === 1 ? 500 : 201));
    expect(JSON.stringify(responses[1]!.body)).not.toContain('poisoned');
    expect((direct as Error).message).toContain('poisoned event');
    expect(await balanceOf(t, merchants[1]!)).toEqual({ available: 100, pending_out: 0 });
    expect(await balanceOf(t, merchants[2]!)).toEqual({ available: 90, pending_out: 10 }); // its HTTP transfer only
    const { rows } = await t.db.query<{ transfers: number; outcomes: number }>(
      `select (select count(*) from transfers where business_code = $1::bigint)::int8 as transfers,
              (select count(*) from idempotency_keys where idempotency_key = $2::uuid)::int8 as outcomes`,
      [merchants[1]!.businessCode, poisonKey]);
    expect(rows[0]).toEqual({ transfers: 0, outcomes: 0 });

    // Nothing was stored for the failed key, so the same request now executes.
    const retry = await postTransfer(t, merchants[1]!, poisonBody, poisonKey);
    expect(retry.status).toBe(201);
    expect(await balanceOf(t, merchants[1]!)).toEqual({ available: 90, pending_out: 10 });
  });
});
