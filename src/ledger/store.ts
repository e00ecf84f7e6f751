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
 * Posts entries for several merchants (one entry per merchant) in one statement; results in request order.
 *
 * The balances are locked in business_code order first, so two statements posting to overlapping sets
 * can never deadlock. The UPDATE's row lock serializes a merchant's changes and READ COMMITTED re-checks
 * the guard — no merchant account below zero — on the newest version after the lock, so N concurrent
 * debits can never overdraw; the CHECKs on balances stand behind it. An entry the guard refuses writes
 * nothing. Postings carry each account's balance after them, read from the heads this statement set; the
 * posting time is never earlier than the merchant's previous one (`greatest` with the head's updated_at),
 * so an account's postings are in time order even when two instances' clocks differ by a little, and is
 * kept to the millisecond (a CHECK says so) so that JavaScript holds it exactly.
 *
 * Without `waitForLocks`, a balance another transaction holds fails the statement at once (SQLSTATE
 * 55P03) instead of keeping every other merchant of the call waiting behind it.
 */
export async function postEntries(
  tx: Queryable,
  entries: readonly EntryRequest[],
  { waitForLocks }: { waitForLocks: boolean },
): Promise<PostedEntry[]> {
  const opened = entries.map((e) => ('id' in e.movement ? null : e.movement));
  const { rows } = await tx.query<{
    has_balance: boolean; entry_id: number | null; movement_id: number | null;
    new_movement_id: number | null; type: MovementType; amount_centavos: Centavos; currency: string;
    reference: string | null; snapshot: Record<string, unknown>; created_at: Date;
  }>(
    `with request as (
       select * from unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::jsonb[],
                            $8::timestamptz[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[])
         with ordinality as r(business_code, kind, movement_id, movement_type, movement_amount, reference, snapshot,
                              at, d_available, d_pending_out, d_qr_clearing, d_ach_clearing, statement_column, ord)
     ), locked as (
       select business_code from balances where business_code in (select business_code from request)
        order by business_code for no key update${waitForLocks ? '' : ' nowait'}
     ), updated as (
       update balances b
          set available_centavos = b.available_centavos + r.d_available,
              pending_out_centavos = b.pending_out_centavos + r.d_pending_out,
              qr_clearing_centavos = b.qr_clearing_centavos + r.d_qr_clearing,
              ach_clearing_centavos = b.ach_clearing_centavos + r.d_ach_clearing,
              updated_at = date_trunc('milliseconds', greatest(b.updated_at, r.at))
         from request r
        where b.business_code = r.business_code and b.business_code in (select business_code from locked)
          and b.available_centavos + r.d_available >= 0 and b.pending_out_centavos + r.d_pending_out >= 0
       returning b.business_code, b.available_centavos, b.pending_out_centavos, b.qr_clearing_centavos,
                 b.ach_clearing_centavos, b.updated_at as posted_at
     ), moved as (
       insert into movements (business_code, type, amount_centavos, reference, snapshot, created_at)
       select r.business_code, r.movement_type, r.movement_amount, r.reference, r.snapshot, r.at
         from request r join updated u on u.business_code = r.business_code
        where r.movement_type is not null
        order by r.ord
       returning id, business_code, type, amount_centavos, currency, reference, snapshot, created_at
     ), entered as (
       insert into journal_entries (business_code, kind, movement_id, posted_at)
       select r.business_code, r.kind, coalesce(r.movement_id, m.id), u.posted_at
         from request r join updated u on u.business_code = r.business_code
         left join moved m on m.business_code = r.business_code
        order by r.ord
       returning id, business_code, movement_id
     ), posted as (
       insert into journal_postings (entry_id, business_code, account, amount_centavos, balance_after_centavos, posted_at)
       select e.id, e.business_code, leg.account, leg.amount, leg.balance_after, u.posted_at
         from entered e
         join request r on r.business_code = e.business_code
         join updated u on u.business_code = e.business_code
        cross join lateral (values
          ('available', r.d_available, u.available_centavos),
          ('pending_out', r.d_pending_out, u.pending_out_centavos),
          ('qr_clearing', r.d_qr_clearing, u.qr_clearing_centavos),
          ('ach_clearing', r.d_ach_clearing, u.ach_clearing_centavos)) as leg(account, amount, balance_after)
        where leg.amount <> 0
     ), bucketed as (
       insert into ledger_buckets (business_code, bucket_start, payments_count, payments_centavos, refunds_count,
                                   refunds_centavos, transfers_count, transfers_centavos, returns_count, returns_centavos,
                                   fees_count, fees_centavos, closing_centavos)
       select r.business_code, date_bin('15 minutes', u.posted_at, timestamptz '2000-01-01 00:00:00+00'),
              (r.statement_column = 'payments')::int, case when r.statement_column = 'payments' then r.d_available else 0 end,
              (r.statement_column = 'refunds')::int, case when r.statement_column = 'refunds' then r.d_available else 0 end,
              (r.statement_column = 'transfers')::int, case when r.statement_column = 'transfers' then r.d_available else 0 end,
              (r.statement_column = 'returns')::int, case when r.statement_column = 'returns' then r.d_available else 0 end,
              (r.statement_column = 'fees')::int, case when r.statement_column = 'fees' then r.d_available else 0 end,
              u.available_centavos
         from request r join updated u on u.business_code = r.business_code
        where r.statement_column is not null
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
         closing_centavos = excluded.closing_centavos
     ), counted as (
       -- The day of the movement's created_at (migration 011), the day the history shows it in. The service
       -- posts to a merchant at most once per call (post() in service.ts), so this is one row per merchant
       -- and no two rows of the INSERT meet on one (business_code, type, day), which ON CONFLICT could not
       -- update twice; grouping keeps the count right even if that ever changed.
       insert into movement_days (business_code, type, day, movement_count)
       select business_code, type, date_bin('1 day', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*)
         from moved group by 1, 2, 3
       on conflict (business_code, type, day) do update set movement_count = movement_days.movement_count + excluded.movement_count
     )
     select l.business_code is not null as has_balance, e.id as entry_id, e.movement_id,
            m.id as new_movement_id, m.type, m.amount_centavos, m.currency, m.reference, m.snapshot, m.created_at
       from request r
       left join locked l on l.business_code = r.business_code
       left join entered e on e.business_code = r.business_code
       left join moved m on m.business_code = r.business_code
      order by r.ord`,
    [
      entries.map((e) => e.businessCode),
      entries.map((e) => e.kind),
      entries.map((e) => ('id' in e.movement ? e.movement.id : null)),
      entries.map((e) => ENTRY_SHAPES[e.kind].opens),
      entries.map((e) => movementAmount(e)),
      opened.map((m) => m?.reference ?? null),
      opened.map((m) => (m ? JSON.stringify(m.snapshot) : null)),
      entries.map((e) => e.now.toISOString()),
      ...ACCOUNTS.map((account) => entries.map((e) => legAmount(e.kind, account, e.amountCentavos))),
      entries.map((e) => ENTRY_SHAPES[e.kind].statementColumn),
    ],
  );
  return rows.map((row, i): PostedEntry => {
    if (row.entry_id === null) return row.has_balance ? { outcome: 'insufficient_funds' } : { outcome: 'no_balance' };
    const movement: MovementRow | null = row.new_movement_id === null ? null : {
      id: row.new_movement_id,
      business_code: entries[i]!.businessCode,
      type: row.type,
      amount_centavos: row.amount_centavos,
      currency: row.currency,
      // A new movement's status: a payment is complete; a transfer or refund starts PENDING.
      status: row.type === 'payment' ? 'COMPLETED' : 'PENDING',
      reference: row.reference,
      snapshot: row.snapshot,
      created_at: row.created_at,
    };
    return { outcome: 'posted', entryId: row.entry_id, movementId: row.movement_id!, movement };
  });
}

/** The signed amount of the movement an entry opens (a payment in, a transfer or refund out); null otherwise. */
function movementAmount(entry: EntryRequest): number | null {
  const opens = ENTRY_SHAPES[entry.kind].opens;
  if (opens === null) return null;
  return opens === 'payment' ? entry.amountCentavos : -entry.amountCentavos;
}
