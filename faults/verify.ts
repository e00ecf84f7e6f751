// Verification on the scratch database after the faults: acknowledged writes exist exactly once, every change has its movement and event, and every event reached the receiver.
import pg from 'pg';
import type { Acks } from './api.ts';
import type { Receiver } from './receiver.ts';
import type { Report } from './report.ts';
import { sleep, type Scope } from './scope.ts';
import { summarize } from './stats.ts';

/** Reads of the scratch database by the harness (never writes). */
export class ScratchDb {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<ScratchDb> {
    const client = new pg.Client({ connectionString: url, application_name: 'faults-harness' });
    client.on('error', () => {}); // a connection cut by a planned outage is reopened by the scenario
    await client.connect();
    return new ScratchDb(client);
  }

  async rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.client.query(sql, params)).rows as T[];
  }

  async one<T>(sql: string, params: unknown[] = []): Promise<T> {
    const rows = await this.rows<T>(sql, params);
    return rows[0]!;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

const list = (items: unknown[], max = 5) => `${items.slice(0, max).map((i) => JSON.stringify(i)).join(', ')}${items.length > max ? `, … (${items.length} in all)` : ''}`;

/** Every 201 the clients received exists exactly once; no Idempotency-Key produced two QRs or transfers. */
export async function checkAcknowledged(db: ScratchDb, acks: Acks, codes: number[], report: Report, scenario: string): Promise<void> {
  report.check(scenario, 'every request got an answer within its bound', acks.unanswered.length === 0, acks.unanswered.length ? list(acks.unanswered, 3) : '');
  report.check(scenario, 'no answer contradicted the contract', acks.problems.length === 0, acks.problems.length ? list(acks.problems, 5) : '');

  const qrIds = [...acks.qrs.values()].map((q) => q.id);
  const qrRows = await db.rows<{ id: string }>('select id from simple_qrs where id = any($1::uuid[])', [qrIds]);
  const qrTotal = await db.one<{ n: number }>('select count(*)::int n from simple_qrs where business_code = any($1::bigint[])', [codes]);
  report.check(scenario, 'every acknowledged QR exists, and no other QR was created', qrRows.length === new Set(qrIds).size && new Set(qrIds).size === qrIds.length && qrTotal.n === qrIds.length,
    `${qrIds.length} acknowledged, ${qrRows.length} found, ${qrTotal.n} in the database`);

  const payments = [...acks.payments.entries()].map(([qrId, p]) => ({ qrId, ...p }));
  const paymentRows = await db.rows<{ id: number; qr_id: string }>('select id::int, qr_id from qr_payments where business_code = any($1::bigint[])', [codes]);
  const byId = new Map(paymentRows.map((r) => [r.id, r.qr_id]));
  const wrong = payments.filter((p) => byId.get(p.paymentId) !== p.qrId);
  const perQr = new Map<string, number>();
  for (const r of paymentRows) perQr.set(r.qr_id, (perQr.get(r.qr_id) ?? 0) + 1);
  const paidTwice = [...perQr.entries()].filter(([, n]) => n > 1);
  const byRead = payments.filter((p) => p.how === 'read').length;
  report.check(scenario, 'every acknowledged payment exists once, and no other payment was made', wrong.length === 0 && paidTwice.length === 0 && paymentRows.length === payments.length,
    `${payments.length} acknowledged (${byRead} learnt by reading the QR after a lost answer), ${paymentRows.length} in the database${wrong.length ? `; missing or on another QR: ${list(wrong)}` : ''}${paidTwice.length ? `; QRs paid twice: ${list(paidTwice)}` : ''}`);

  const transfers = [...acks.transfers.entries()].map(([key, t]) => ({ key, ...t }));
  const transferRows = await db.rows<{ id: number; business_code: number; amount_centavos: number }>(
    'select id::int, business_code::int, amount_centavos::int from transfers where business_code = any($1::bigint[])', [codes]);
  const transferById = new Map(transferRows.map((r) => [r.id, r]));
  const mismatched = transfers.filter((t) => {
    const row = transferById.get(t.id);
    return !row || row.business_code !== t.businessCode || row.amount_centavos !== t.amountCentavos;
  });
  report.check(scenario, 'every acknowledged transfer exists with its amount, and no other transfer was made', mismatched.length === 0 && transferRows.length === transfers.length,
    `${transfers.length} acknowledged (+${acks.insufficient.size} INSUFFICIENT_FUNDS), ${transferRows.length} in the database${mismatched.length ? `; missing or different: ${list(mismatched)}` : ''}`);

  // The stored outcomes: one per key (primary key), and no transfer named by two keys.
  const stored = await db.rows<{ key: string; id: number | null; status_code: number }>(
    `select idempotency_key::text as key, (response_body->>'id')::int as id, status_code from idempotency_keys where route = 'POST /api/v2/transfers'`);
  const storedByKey = new Map(stored.map((s) => [s.key, s]));
  const keyMismatch = transfers.filter((t) => storedByKey.get(t.key)?.id !== t.id);
  const idCount = new Map<number, number>();
  for (const s of stored) if (s.id !== null) idCount.set(s.id, (idCount.get(s.id) ?? 0) + 1);
  const sharedIds = [...idCount.entries()].filter(([, n]) => n > 1);
  const createdIds = new Set(stored.filter((s) => s.status_code === 201).map((s) => s.id));
  const unkeyed = transferRows.filter((r) => !createdIds.has(r.id));
  report.check(scenario, 'no Idempotency-Key produced two transfers (stored outcomes ↔ transfers one to one)', keyMismatch.length === 0 && sharedIds.length === 0 && unkeyed.length === 0,
    `${stored.length} stored outcomes${keyMismatch.length ? `; keys whose stored id differs from the 201: ${list(keyMismatch)}` : ''}${sharedIds.length ? `; ids under two keys: ${list(sharedIds)}` : ''}${unkeyed.length ? `; transfers with no stored key: ${list(unkeyed)}` : ''}`);
}

/** Waits until no transfer of these merchants is PENDING or IN_TRANSIT (the sandbox rail settles them). */
export async function waitSettled(db: ScratchDb, codes: number[], boundMs: number, scope: Scope): Promise<{ open: number; ms: number }> {
  const started = Date.now();
  for (;;) {
    const { n } = await db.one<{ n: number }>(`select count(*)::int n from transfers where business_code = any($1::bigint[]) and status in ('PENDING', 'IN_TRANSIT')`, [codes]);
    if (n === 0 || Date.now() - started > boundMs) return { open: n, ms: Date.now() - started };
    await scope.sleep(250);
  }
}

/** Every committed payment and transfer change has its movement and exactly its events; nothing else has any. */
export async function checkMovementsAndEvents(db: ScratchDb, codes: number[], report: Report, scenario: string): Promise<void> {
  // One pass over the events, grouped by the id they name (a correlated subquery per row would scan the
  // events once per payment: minutes on a soak's tens of thousands of rows).
  const badPayments = await db.rows<{ id: number; problem: string }>(`
    with received as (
      select data->'payment'->>'id' as payment_id, count(*) as n from events
      where owner_kind = 'merchant' and owner_id = any($1::bigint[]) and type = 'simple_qr.payment_received' group by 1),
    paid as (
      select data->>'id' as qr_id, count(*) as n from events
      where owner_kind = 'merchant' and owner_id = any($1::bigint[]) and type = 'simple_qr.paid' group by 1)
    select p.id::int, case
      when m.id is null then 'no movement'
      when m.type <> 'payment' or m.amount_centavos <> p.amount_centavos or m.status <> 'COMPLETED' or m.business_code <> p.business_code then 'movement differs'
      when coalesce(r.n, 0) <> 1 then 'not exactly one simple_qr.payment_received'
      when p.single_use and coalesce(pd.n, 0) <> 1 then 'not exactly one simple_qr.paid'
      end as problem
    from qr_payments p
      left join movement_history m on m.id = p.movement_id
      left join received r on r.payment_id = p.id::text
      left join paid pd on pd.qr_id = p.qr_id::text
    where p.business_code = any($1::bigint[])`, [codes]);
  const paymentProblems = badPayments.filter((p) => p.problem !== null);
  report.check(scenario, 'every payment has its movement and its events', paymentProblems.length === 0,
    `${badPayments.length} payments${paymentProblems.length ? `; ${list(paymentProblems)}` : ''}`);

  const transferEvents = await db.rows<{ id: number; status: string; problem: string | null }>(`
    with ev as (
      select data->>'id' as transfer_id, array_agg(type order by sequence) as types from events
      where owner_kind = 'merchant' and owner_id = any($1::bigint[]) and type like 'transfer.%' group by 1),
    t as (
      select t.id, t.status, t.amount_centavos, m.id as movement, m.type as mtype, m.amount_centavos as mamount, m.status as mstatus, ev.types
      from transfers t left join movement_history m on m.id = t.movement_id left join ev on ev.transfer_id = t.id::text
      where t.business_code = any($1::bigint[]))
    select id::int, status, case
      when movement is null then 'no movement'
      when mtype <> 'transfer' or mamount <> -amount_centavos or mstatus <> status then 'movement differs: ' || mtype || ' ' || mamount || ' ' || mstatus
      when types is distinct from (case status
          when 'PENDING' then array['transfer.created']
          when 'IN_TRANSIT' then array['transfer.created', 'transfer.in_transit']
          when 'COMPLETED' then array['transfer.created', 'transfer.in_transit', 'transfer.completed']
          when 'CANCELED' then array['transfer.created', 'transfer.canceled']
          when 'FAILED' then (case when 'transfer.in_transit' = any(types) then array['transfer.created', 'transfer.in_transit', 'transfer.failed']
                                   else array['transfer.created', 'transfer.failed'] end)
        end) then 'events ' || coalesce(array_to_string(types, ','), 'none')
      end as problem
    from t`, [codes]);
  const transferProblems = transferEvents.filter((t) => t.problem !== null);
  const byStatus: Record<string, number> = {};
  for (const t of transferEvents) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
  report.check(scenario, 'every transfer change has its movement (same status) and exactly its events', transferProblems.length === 0,
    `${transferEvents.length} transfers ${JSON.stringify(byStatus)}${transferProblems.length ? `; ${list(transferProblems)}` : ''}`);

  const orphans = await db.one<{ movements: number; events: number }>(`
    select
      (select count(*)::int from movements m
         left join qr_payments p on p.movement_id = m.id
         left join transfers t on t.movement_id = m.id
       where m.business_code = any($1::bigint[]) and p.id is null and t.id is null) as movements,
      (select count(*)::int from events e
         left join transfers t on e.type like 'transfer.%' and t.id::text = e.data->>'id'
         left join qr_payments p on e.type = 'simple_qr.payment_received' and p.id::text = e.data->'payment'->>'id'
       where e.owner_kind = 'merchant' and e.owner_id = any($1::bigint[])
         and ((e.type like 'transfer.%' and t.id is null) or (e.type = 'simple_qr.payment_received' and p.id is null))) as events`, [codes]);
  report.check(scenario, 'no movement or event without its payment or transfer', orphans.movements === 0 && orphans.events === 0,
    `${orphans.movements} orphan movements, ${orphans.events} orphan events`);
}

/**
 * Waits until every event of these merchants has been accepted by the receiver at least once (deduplicated
 * by webhook-id), up to `boundMs`; checks it, and the signatures, and prints the delivery delays.
 */
export async function checkEventsDelivered(db: ScratchDb, receiver: Receiver, codes: number[], boundMs: number, report: Report, scenario: string, scope: Scope, since = Date.now(), label = ''): Promise<void> {
  const started = since;
  let events: Array<{ id: string; created_ms: number }> = [];
  let missing: string[] = [];
  for (;;) {
    events = await db.rows<{ id: string; created_ms: number }>(
      `select id, (extract(epoch from created_at) * 1000)::float8 as created_ms from events where owner_kind = 'merchant' and owner_id = any($1::bigint[])`, [codes]);
    missing = receiver.missing(events.map((e) => e.id));
    if (missing.length === 0 || Date.now() - started > boundMs) break;
    await sleep(250, scope.signal);
  }
  const waited = Date.now() - started;
  const delays = events.flatMap((e) => {
    const got = receiver.delivered.get(e.id);
    return got ? [got.firstAtMs - e.created_ms] : [];
  });
  const d = summarize(delays);
  report.figure(scenario, `webhook delay event→receiver (ms)${label}`, `p50 ${d.p50.toFixed(0)}, p99 ${d.p99.toFixed(0)}, max ${d.max.toFixed(0)} over ${delays.length} events; ${receiver.duplicates} duplicate deliveries`);
  let detail = `${events.length - missing.length}/${events.length} events delivered, ${(waited / 1000).toFixed(1)} s after the load ended (bound ${boundMs / 1000} s)`;
  if (missing.length) {
    const states = await db.rows<{ status: string; n: number; attempts: number }>(
      `select d.status, count(*)::int n, max(d.attempts)::int attempts from events e left join webhook_deliveries d on d.event_id = e.id
       where e.id = any($1::text[]) group by d.status`, [missing]);
    detail += `; missing ${list(missing, 3)}; their deliveries: ${JSON.stringify(states)}`;
  }
  report.check(scenario, `every event reached the receiver (deduplicated by webhook-id) within the bound${label}`, missing.length === 0, detail);
  report.check(scenario, `every accepted delivery had a valid signature${label}`, receiver.badSignatures.length === 0, list(receiver.badSignatures, 3));
}
