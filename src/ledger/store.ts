// SQL of balances and the journal. Every change of money is one statement, postEntries: it moves the
// balance heads, writes the movement a change opens, the journal entry and its postings, the statement
// bucket and the movement's day count — so none of them can exist without the others (docs/journal.md).
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';
import { ACCOUNTS, ENTRY_SHAPES, legAmount, type EntryKind } from './entries.ts';
import type { MovementRow, MovementType } from './history-store.ts';

export interface BalanceRow {
  business_code: number;
  currency: string;
  available_centavos: Centavos;
  pending_out_centavos: Centavos;
  updated_at: Date;
}

const BALANCE_COLUMNS = 'business_code, currency, available_centavos, pending_out_centavos, updated_at';

export async function insertBalance(tx: Queryable, businessCode: number, now: Date): Promise<void> {
  await tx.query(
    'insert into balances (business_code, updated_at) values ($1::bigint, $2::timestamptz) on conflict (business_code) do nothing',
    [businessCode, now],
  );
}

export async function findBalance(tx: Queryable, businessCode: number): Promise<BalanceRow | undefined> {
  const { rows } = await tx.query<BalanceRow>(`select ${BALANCE_COLUMNS} from balances where business_code = $1::bigint`, [businessCode]);
  return rows[0];
}

/** The balance, locked until the caller's transaction ends (a read that decides a debit: docs/architecture.md, rule 4). */
export async function findBalanceForUpdate(tx: Queryable, businessCode: number): Promise<BalanceRow | undefined> {
  const { rows } = await tx.query<BalanceRow>(`select ${BALANCE_COLUMNS} from balances where business_code = $1::bigint for update`, [businessCode]);
  return rows[0];
}

/** What a change that opens a movement shows in the history: its reference and masked details. */
export interface NewMovement {
  reference: string | null;
  snapshot: Record<string, unknown>;
}

/** One journal entry to post. */
export interface EntryRequest {
  businessCode: number;
  kind: EntryKind;
  /** Positive; the entry's shape (entries.ts) says which accounts it debits and credits. */
  amountCentavos: Centavos;
  /**
   * For an entry that opens a payment or transfer: the fee charged on it (docs/fees.md), posted as a `fee`
   * entry opening its own movement right after it, taken or refused with it. For an entry whose kind has a
   * fee part (a transfer's return): the fee it gives back. Absent or 0: none.
   */
  feeCentavos?: Centavos;
  /** The movement this entry opens (kinds that open one) or belongs to (kinds that settle one). */
  movement: NewMovement | { id: number };
  now: Date;
}

/** What became of one entry: posted (with its movement when it opened one), or why not. */
export type PostedEntry =
  | { outcome: 'posted'; entryId: number; movementId: number; movement: MovementRow | null }
  | { outcome: 'insufficient_funds' }
  | { outcome: 'no_balance' };

/**
 * One row of the statement: an entry as asked, or the `fee` entry an opening's fee adds after it
 * (`bound`: taken exactly when the entry before it is, whose guard counted the fee in).
 */
interface EntryRow {
  request: number;
  businessCode: number;
  kind: EntryKind;
  movementId: number | null;
  opens: NewMovement | null;
  amountCentavos: Centavos;
  /** The fee part of a closing entry (its shape's feeLegs). */
  feeCentavos: number;
  /** An opening's fee, stored on its movement. */
  movementFee: number;
  /** The change of `available` the guard checks: the entry's own, with the fee of an opening that charges one. */
  guardAvailable: number;
  bound: boolean;
  now: Date;
}

/** The statement's rows of `entries`: each entry, and after an opening that charges a fee, its fee entry. */
function entryRows(entries: readonly EntryRequest[]): EntryRow[] {
  return entries.flatMap((entry, request): EntryRow[] => {
    const fee = entry.feeCentavos ?? 0;
    const shape = ENTRY_SHAPES[entry.kind];
    const opens = 'id' in entry.movement ? null : entry.movement;
    const charges = opens !== null && fee > 0;
    const own = legAmount(entry.kind, 'available', entry.amountCentavos, charges ? 0 : fee);
    const row: EntryRow = {
      request,
      businessCode: entry.businessCode,
      kind: entry.kind,
      movementId: opens ? null : (entry.movement as { id: number }).id,
      opens,
      amountCentavos: entry.amountCentavos,
      feeCentavos: charges ? 0 : fee,
      movementFee: charges ? fee : 0,
      guardAvailable: own + (charges ? legAmount('fee', 'available', fee) : 0),
      bound: false,
      now: entry.now,
    };
    if (!charges) {
      if (fee > 0 && !shape.feeLegs) throw new Error(`a ${entry.kind} entry has no fee part`);
      return [row];
    }
    const feeRow: EntryRow = {
      request,
      businessCode: entry.businessCode,
      kind: 'fee',
      movementId: null,
      // The fee's details ({of, payment_id | transfer_id}) are read through what it was charged on
      // (movement_history); its snapshot keeps only the QR it came through, for the journal export.
      opens: { reference: opens.reference, snapshot: chargedQrOf(opens.snapshot) },
      amountCentavos: entry.feeCentavos!,
      feeCentavos: 0,
      movementFee: 0,
      guardAvailable: legAmount('fee', 'available', fee),
      bound: true,
      now: entry.now,
    };
    return [row, feeRow];
  });
}

/**
 * Posts entries in one statement, any number per merchant; results in request order.
 *
 * The balances are locked in business_code order first, so two statements posting to overlapping sets
 * can never deadlock; under READ COMMITTED, SELECT … FOR NO KEY UPDATE returns the newest committed version
 * of each row, once it holds the lock. From that head, each merchant's entries are walked in request order
 * (a recursive step per entry): an entry is taken when no merchant account goes below zero after it, and a
 * refused entry writes nothing and leaves the running balances as they were — what a queue of single
 * debits would have given, so N concurrent debits can never overdraw; the CHECKs on balances stand behind
 * it. The head becomes the walk's last running balances, and each taken entry's postings carry its
 * accounts' running balances. The posting time is never earlier than the merchant's previous one
 * (`greatest` with the head's updated_at, then with the entry before it), so an account's postings are in
 * time order even when two instances' clocks differ by a little, and is kept to the millisecond (a CHECK
 * says so) so that JavaScript holds it exactly.
 *
 * Journal entry and movement ids are drawn from their sequences in one go and handed out in request
 * order, so a merchant's entries are numbered in the order their balances were computed (the ledger
 * check's running sums follow entry ids). The statement buckets and per-day movement counts are summed per
 * row they land in, since ON CONFLICT cannot update one row twice in a statement.
 *
 * Without `waitForLocks`, a balance another transaction holds fails the statement at once (SQLSTATE
 * 55P03) instead of keeping every other merchant of the call waiting behind it.
 */
export async function postEntries(
  tx: Queryable,
  entries: readonly EntryRequest[],
  { waitForLocks }: { waitForLocks: boolean },
): Promise<PostedEntry[]> {
  const requestRows = entryRows(entries);
  const { rows } = await tx.query<{
    has_balance: boolean; unwritten: boolean; entry_id: number | null; movement_id: number | null;
    new_movement_id: number | null; type: MovementType; amount_centavos: Centavos; currency: string;
    reference: string | null; snapshot: Record<string, unknown>; created_at: Date; fee_centavos: Centavos;
  }>(
    `with recursive request as (
       select r.*, row_number() over (partition by r.business_code order by r.ord) as seq
         from unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::jsonb[],
                     $8::timestamptz[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[],
                     $15::bigint[], $16::boolean[], $17::bigint[])
           with ordinality as r(business_code, kind, movement_id, movement_type, movement_amount, reference, snapshot,
                                at, d_available, d_pending_out, d_qr_clearing, d_ach_clearing, d_revenue, statement_column,
                                guard_available, bound, movement_fee, ord)
     ), locked as (
       select business_code, available_centavos, pending_out_centavos, qr_clearing_centavos, ach_clearing_centavos,
              revenue_centavos, updated_at
         from balances where business_code in (select business_code from request)
        order by business_code for no key update${waitForLocks ? '' : ' nowait'}
     ), walk as (
       -- Running balances after each entry of a merchant: from its locked head (step 0), each entry in
       -- request order from the step before it. "taken" is the guard: no merchant account below zero, an
       -- opening's fee counted in; the fee entry after it ("bound") is taken exactly when it is.
       select l.business_code, 0::bigint as seq, null::bigint as ord, null::boolean as taken,
              l.available_centavos as available, l.pending_out_centavos as pending_out,
              l.qr_clearing_centavos as qr_clearing, l.ach_clearing_centavos as ach_clearing,
              l.revenue_centavos as revenue, l.updated_at as posted_at
         from locked l
       union all
       select r.business_code, r.seq, r.ord, guard.taken,
              case when guard.taken then w.available + r.d_available else w.available end,
              case when guard.taken then w.pending_out + r.d_pending_out else w.pending_out end,
              case when guard.taken then w.qr_clearing + r.d_qr_clearing else w.qr_clearing end,
              case when guard.taken then w.ach_clearing + r.d_ach_clearing else w.ach_clearing end,
              case when guard.taken then w.revenue + r.d_revenue else w.revenue end,
              case when guard.taken then date_trunc('milliseconds', greatest(w.posted_at, r.at)) else w.posted_at end
         from walk w join request r on r.business_code = w.business_code and r.seq = w.seq + 1
        cross join lateral (select case when r.bound then coalesce(w.taken, false)
                                        else w.available + r.guard_available >= 0 and w.pending_out + r.d_pending_out >= 0 end as taken) guard
     ), taken as (
       select w.available, w.pending_out, w.qr_clearing, w.ach_clearing, w.revenue, w.posted_at, r.*,
              row_number() over (order by r.ord) as entry_n,
              row_number() over (partition by r.movement_type is null order by r.ord) as opening_n
         from walk w join request r on r.ord = w.ord
        where w.taken
     ), entry_ids as (
       select row_number() over (order by id) as n, id
         from (select nextval('journal_entries_id_seq'::regclass) as id from taken) drawn
     ), movement_ids as (
       select row_number() over (order by id) as n, id
         from (select nextval('movements_id_seq'::regclass) as id from taken where movement_type is not null) drawn
     ), numbered as (
       -- A fee entry's movement is charged on the movement of the entry just before it, taken with it.
       select t.*, e.id as entry_id, m.id as new_movement_id, coalesce(t.movement_id, m.id) as entry_movement_id,
              case when t.bound then lag(coalesce(t.movement_id, m.id)) over (order by t.ord) end as fee_of
         from taken t join entry_ids e on e.n = t.entry_n
         left join movement_ids m on t.movement_type is not null and m.n = t.opening_n
     ), heads as (
       -- Each merchant's running balances after its last taken entry: its new head.
       select distinct on (business_code) business_code, available, pending_out, qr_clearing, ach_clearing, revenue, posted_at
         from taken order by business_code, ord desc
     ), updated as (
       -- Set, not added, and no guard in the WHERE. Both would read this statement's snapshot, older than
       -- the locked version when a payment committed while the lock was awaited: a guard there refuses
       -- what fits, and "available + change" is checked against the balances' CHECKs on the old version
       -- before PostgreSQL moves to the new one (test/ledger/ledger.test.ts, "debits that waited behind a
       -- credit", fails both ways). The walk started from the locked version, which is the newest.
       update balances b
          set available_centavos = h.available,
              pending_out_centavos = h.pending_out,
              qr_clearing_centavos = h.qr_clearing,
              ach_clearing_centavos = h.ach_clearing,
              revenue_centavos = h.revenue,
              updated_at = h.posted_at
         from heads h
        where b.business_code = h.business_code
       returning b.business_code
     ), written as (
       select n.* from numbered n join updated u on u.business_code = n.business_code
     ), moved as (
       insert into movements (id, business_code, type, amount_centavos, reference, snapshot, created_at, fee_of, fee_centavos) overriding system value
       select new_movement_id, business_code, movement_type, movement_amount, reference, snapshot, at, fee_of, movement_fee
         from written where new_movement_id is not null
       returning id, business_code, type, amount_centavos, currency, reference, snapshot, created_at, fee_centavos
     ), entered as (
       insert into journal_entries (id, business_code, kind, movement_id, posted_at) overriding system value
       select entry_id, business_code, kind, entry_movement_id, posted_at from written
       returning id, movement_id
     ), posted as (
       insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
       select w.entry_id, w.business_code, leg.account, leg.amount, leg.balance_after, w.posted_at
         from written w
        cross join lateral (values
          ('available', w.d_available, w.available),
          ('pending_out', w.d_pending_out, w.pending_out),
          ('qr_clearing', w.d_qr_clearing, w.qr_clearing),
          ('ach_clearing', w.d_ach_clearing, w.ach_clearing),
          ('revenue', w.d_revenue, w.revenue)) as leg(account, amount, balance_after)
        where leg.amount <> 0
     ), bucketed as (
       insert into ledger_buckets (business_code, bucket_start, payments_count, payments_centavos, refunds_count,
                                   refunds_centavos, transfers_count, transfers_centavos, returns_count, returns_centavos,
                                   fees_count, fees_centavos, revenue_count, revenue_centavos, closing_centavos)
       select business_code, date_bin('15 minutes', posted_at, timestamptz '2000-01-01 00:00:00+00'),
              count(*) filter (where statement_column = 'payments'), coalesce(sum(d_available) filter (where statement_column = 'payments'), 0),
              count(*) filter (where statement_column = 'refunds'), coalesce(sum(d_available) filter (where statement_column = 'refunds'), 0),
              count(*) filter (where statement_column = 'transfers'), coalesce(sum(d_available) filter (where statement_column = 'transfers'), 0),
              count(*) filter (where statement_column = 'returns'), coalesce(sum(d_available) filter (where statement_column = 'returns'), 0),
              count(*) filter (where statement_column = 'fees'), coalesce(sum(d_available) filter (where statement_column = 'fees'), 0),
              -- fees charged count one each, a transfer's fee given back takes one away
              count(*) filter (where d_revenue > 0) - count(*) filter (where d_revenue < 0), sum(d_revenue),
              -- available after the bucket's last posting in this statement
              (array_agg(available order by ord desc))[1]
         from written
        where statement_column is not null
        group by 1, 2
       on conflict (business_code, bucket_start) do update set
         payments_count = ledger_buckets.payments_count + excluded.payments_count,
         payments_centavos = ledger_buckets.payments_centavos + excluded.payments_centavos,
         refunds_count = ledger_buckets.refunds_count + excluded.refunds_count,
         refunds_centavos = ledger_buckets.refunds_centavos + excluded.refunds_centavos,
         transfers_count = ledger_buckets.transfers_count + excluded.transfers_count,
         transfers_centavos = ledger_buckets.transfers_centavos + excluded.transfers_centavos,
         returns_count = ledger_buckets.returns_count + excluded.returns_count,
         returns_centavos = ledger_buckets.returns_centavos + excluded.returns_centavos,
         fees_count = ledger_buckets.fees_count + excluded.fees_count,
         fees_centavos = ledger_buckets.fees_centavos + excluded.fees_centavos,
         revenue_count = ledger_buckets.revenue_count + excluded.revenue_count,
         revenue_centavos = ledger_buckets.revenue_centavos + excluded.revenue_centavos,
         closing_centavos = excluded.closing_centavos
     ), counted as (
       -- The day of the movement's created_at (migration 011), the day the history shows it in.
       insert into movement_days (business_code, type, day, movement_count)
       select business_code, type, date_bin('1 day', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*)
         from moved group by 1, 2, 3
       on conflict (business_code, type, day) do update set movement_count = movement_days.movement_count + excluded.movement_count
     )
     select l.business_code is not null as has_balance, n.entry_id is not null and e.id is null as unwritten, e.id as entry_id, e.movement_id,
            m.id as new_movement_id, m.type, m.amount_centavos, m.currency, m.reference, m.snapshot, m.created_at, m.fee_centavos
       from request r
       left join locked l on l.business_code = r.business_code
       left join numbered n on n.ord = r.ord
       left join entered e on e.id = n.entry_id
       left join moved m on m.id = n.new_movement_id
      order by r.ord`,
    [
      requestRows.map((r) => r.businessCode),
      requestRows.map((r) => r.kind),
      requestRows.map((r) => r.movementId),
      requestRows.map((r) => ENTRY_SHAPES[r.kind].opens),
      requestRows.map((r) => movementAmount(r)),
      requestRows.map((r) => r.opens?.reference ?? null),
      requestRows.map((r) => (r.opens ? JSON.stringify(r.opens.snapshot) : null)),
      requestRows.map((r) => r.now.toISOString()),
      ...ACCOUNTS.map((account) => requestRows.map((r) => legAmount(r.kind, account, r.amountCentavos, r.feeCentavos))),
      requestRows.map((r) => ENTRY_SHAPES[r.kind].statementColumn),
      requestRows.map((r) => r.guardAvailable),
      requestRows.map((r) => r.bound),
      requestRows.map((r) => r.movementFee),
    ],
  );
  // One result per request: its own row's (a fee row is taken or refused with the row before it).
  return requestRows.flatMap((requestRow, i): PostedEntry[] => {
    if (requestRow.bound) return [];
    const row = rows[i]!;
    // The walk took it but its balance was not updated: impossible while the lock holds, and never to be
    // answered as a refusal (a stored INSUFFICIENT_FUNDS would be replayed for a day).
    if (row.unwritten) throw new Error(`an entry of merchant ${requestRow.businessCode} was taken but its balance did not move`);
    if (row.entry_id === null) return [row.has_balance ? { outcome: 'insufficient_funds' } : { outcome: 'no_balance' }];
    const movement: MovementRow | null = row.new_movement_id === null ? null : {
      id: row.new_movement_id,
      business_code: requestRow.businessCode,
      type: row.type,
      amount_centavos: row.amount_centavos,
      currency: row.currency,
      // A new movement's status: a payment is complete; a transfer or refund starts PENDING.
      status: row.type === 'payment' ? 'COMPLETED' : 'PENDING',
      reference: row.reference,
      snapshot: row.snapshot,
      created_at: row.created_at,
      fee_centavos: row.fee_centavos,
      charged_on: null,
      charged_on_id: null,
    };
    return [{ outcome: 'posted', entryId: row.entry_id, movementId: row.movement_id!, movement }];
  });
}

/** The QR (and its external reference) of a movement's snapshot, the part its fee's snapshot repeats. */
function chargedQrOf(snapshot: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(snapshot).filter(([key]) => key === 'qr_id' || key === 'external_reference'));
}

/** The signed amount of the movement an entry opens (a payment in; a transfer, refund or fee out); null otherwise. */
function movementAmount(row: EntryRow): number | null {
  const opens = ENTRY_SHAPES[row.kind].opens;
  if (opens === null) return null;
  return opens === 'payment' ? row.amountCentavos : -row.amountCentavos;
}
