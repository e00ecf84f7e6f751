// SQL of balances, movements and movement counters. Every balance change is one guarded UPDATE.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';

export type MovementType = 'payment' | 'transfer';
export type MovementStatus = 'PENDING' | 'IN_TRANSIT' | 'COMPLETED' | 'FAILED' | 'CANCELED';

export interface MovementRow {
  id: number;
  business_code: number;
  type: MovementType;
  amount_centavos: Centavos;
  currency: string;
  status: MovementStatus;
  reference: string | null;
  snapshot: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface BalanceRow {
  business_code: number;
  currency: string;
  available_centavos: Centavos;
  pending_out_centavos: Centavos;
  updated_at: Date;
}

const MOVEMENT_COLUMNS = 'id, business_code, type, amount_centavos, currency, status, reference, snapshot, created_at, updated_at';
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

/** Adds to `available` (a payment, or funds returned by a failed or canceled transfer leaving `pending_out`). */
export async function addToAvailable(
  tx: Queryable,
  businessCode: number,
  amounts: { availableCentavos: Centavos; pendingOutCentavos: Centavos },
  now: Date,
): Promise<BalanceRow | undefined> {
  const { rows } = await tx.query<BalanceRow>(
    `update balances
        set available_centavos = available_centavos + $2::bigint,
            pending_out_centavos = pending_out_centavos + $3::bigint,
            updated_at = $4::timestamptz
      where business_code = $1::bigint
      returning ${BALANCE_COLUMNS}`,
    [businessCode, amounts.availableCentavos, amounts.pendingOutCentavos, now],
  );
  return rows[0];
}

/** One debit of `debitAndRecordTransfers`. */
export interface TransferDebit {
  businessCode: number;
  amountCentavos: Centavos;
  reference: string | null;
  snapshot: Record<string, unknown>;
  now: Date;
}

/** What became of one debit: its PENDING movement, or why there is none. */
export type TransferDebitRow =
  | { outcome: 'debited'; movement: MovementRow }
  | { outcome: 'insufficient_funds' }
  | { outcome: 'no_balance' };

/**
 * Debits several balances (one per merchant) in one statement: for each, moves `amount` from `available`
 * to `pending_out` only if `available` covers it, writes its PENDING `transfer` movement (negative amount)
 * and counts it. Results come back in request order.
 *
 * The balances are locked in business_code order first, so two statements debiting overlapping sets can
 * never deadlock. The UPDATE's row lock serializes concurrent debits of one balance and READ COMMITTED
 * re-evaluates `available >= amount` on the newest version after the lock, so N concurrent debits can
 * never overdraw; the CHECK `balances_available_nonnegative` stands behind it. A refused debit writes
 * nothing. One UPDATE changes a row once, hence one debit per merchant per call (the caller's rule).
 *
 * Without `waitForLocks`, a balance another transaction holds fails the statement at once (SQLSTATE
 * 55P03) instead of keeping every other merchant of the call waiting behind it.
 */
export async function debitAndRecordTransfers(
  tx: Queryable,
  debits: readonly TransferDebit[],
  { waitForLocks }: { waitForLocks: boolean },
): Promise<TransferDebitRow[]> {
  const { rows } = await tx.query<MovementRow & { has_balance: boolean; debited: boolean }>(
    `with request as (
       select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::jsonb[], $5::timestamptz[]) with ordinality
         as r(business_code, amount_centavos, reference, snapshot, at, ord)
     ), locked as (
       select business_code from balances where business_code in (select business_code from request)
        order by business_code for no key update${waitForLocks ? '' : ' nowait'}
     ), debited as (
       update balances b
          set available_centavos = b.available_centavos - r.amount_centavos,
              pending_out_centavos = b.pending_out_centavos + r.amount_centavos,
              updated_at = r.at
         from request r
        where b.business_code = r.business_code and b.business_code in (select business_code from locked)
          and b.available_centavos >= r.amount_centavos
       returning b.business_code
     ), moved as (
       insert into movements (business_code, type, amount_centavos, status, reference, snapshot, created_at, updated_at)
       select r.business_code, 'transfer', -r.amount_centavos, 'PENDING', r.reference, r.snapshot, r.at, r.at
         from request r join debited d on d.business_code = r.business_code
        order by r.ord
       returning ${MOVEMENT_COLUMNS}
     ), counted as (
       insert into movement_counters (business_code, type, movement_count)
       select business_code, 'transfer', 1 from moved
       on conflict (business_code, type) do update set movement_count = movement_counters.movement_count + 1
     )
     select l.business_code is not null as has_balance, m.id is not null as debited,
            m.id, r.business_code, m.type, m.amount_centavos, m.currency, m.status, m.reference, m.snapshot, m.created_at, m.updated_at
       from request r
       left join locked l on l.business_code = r.business_code
       left join moved m on m.business_code = r.business_code
      order by r.ord`,
    [
      debits.map((d) => d.businessCode),
      debits.map((d) => d.amountCentavos),
      debits.map((d) => d.reference),
      debits.map((d) => JSON.stringify(d.snapshot)),
      debits.map((d) => d.now.toISOString()),
    ],
  );
  return rows.map(({ has_balance: hasBalance, debited, ...movement }) => {
    if (debited) return { outcome: 'debited', movement };
    return hasBalance ? { outcome: 'insufficient_funds' } : { outcome: 'no_balance' };
  });
}

export async function insertMovement(
  tx: Queryable,
  movement: {
    businessCode: number;
    type: MovementType;
    amountCentavos: Centavos;
    status: MovementStatus;
    reference: string | null;
    snapshot: Record<string, unknown>;
  },
  now: Date,
): Promise<MovementRow> {
  const { rows } = await tx.query<MovementRow>(
    `insert into movements (business_code, type, amount_centavos, status, reference, snapshot, created_at, updated_at)
     values ($1::bigint, $2::text, $3::bigint, $4::text, $5::text, $6::jsonb, $7::timestamptz, $7::timestamptz)
     returning ${MOVEMENT_COLUMNS}`,
    [movement.businessCode, movement.type, movement.amountCentavos, movement.status, movement.reference,
      JSON.stringify(movement.snapshot), now],
  );
  return rows[0]!;
}

export async function incrementMovementCounter(tx: Queryable, businessCode: number, type: MovementType): Promise<void> {
  await tx.query(
    `insert into movement_counters (business_code, type, movement_count) values ($1::bigint, $2::text, 1)
     on conflict (business_code, type) do update set movement_count = movement_counters.movement_count + 1`,
    [businessCode, type],
  );
}

/** Moves a movement from one of `fromStatuses` to `status`; undefined when it is not in one of them. */
export async function updateMovementStatus(
  tx: Queryable,
  businessCode: number,
  movementId: number,
  fromStatuses: readonly MovementStatus[],
  status: MovementStatus,
  now: Date,
): Promise<MovementRow | undefined> {
  const { rows } = await tx.query<MovementRow>(
    `update movements set status = $4::text, updated_at = $5::timestamptz
      where id = $2::bigint and business_code = $1::bigint and status = any($3::text[])
      returning ${MOVEMENT_COLUMNS}`,
    [businessCode, movementId, fromStatuses, status, now],
  );
  return rows[0];
}

export async function findMovement(tx: Queryable, businessCode: number, movementId: number): Promise<MovementRow | undefined> {
  const { rows } = await tx.query<MovementRow>(
    `select ${MOVEMENT_COLUMNS} from movements where id = $2::bigint and business_code = $1::bigint`,
    [businessCode, movementId],
  );
  return rows[0];
}

export interface InvariantRow {
  business_code: number;
  available_centavos: Centavos;
  pending_out_centavos: Centavos;
  expected_available_centavos: Centavos;
  expected_pending_out_centavos: Centavos;
}

/**
 * the invariant of docs/api-reference.md#balance-invariant for every merchant: available = sum of movements not FAILED or CANCELED, and
 * pending_out = the transfers still PENDING or IN_TRANSIT. Returns only the balances that disagree.
 */
export async function findInvariantViolations(tx: Queryable): Promise<InvariantRow[]> {
  const { rows } = await tx.query<InvariantRow>(
    `with expected as (
       select business_code,
              coalesce(sum(amount_centavos) filter (where status not in ('FAILED', 'CANCELED')), 0)::bigint as available,
              coalesce(-sum(amount_centavos) filter (where type = 'transfer' and status in ('PENDING', 'IN_TRANSIT')), 0)::bigint as pending_out
         from movements group by business_code)
     select b.business_code, b.available_centavos, b.pending_out_centavos,
            coalesce(e.available, 0)::bigint as expected_available_centavos,
            coalesce(e.pending_out, 0)::bigint as expected_pending_out_centavos
       from balances b left join expected e using (business_code)
      where b.available_centavos <> coalesce(e.available, 0)
         or b.pending_out_centavos <> coalesce(e.pending_out, 0)
         or b.available_centavos < 0
      order by b.business_code`,
  );
  return rows;
}

export async function countBalances(tx: Queryable): Promise<number> {
  const { rows } = await tx.query<{ total: number }>('select count(*) as total from balances');
  return rows[0]!.total;
}

/** Which movements a history page counts and shows (docs/api-reference.md#movements). */
export interface MovementFilter {
  businessCode: number;
  /** null: both types. */
  type: MovementType | null;
  /** Only movements with `id < beforeId` (a pinned, stable history); null: all. */
  beforeId: number | null;
}

/**
 * How many movements match `filter`, without counting the history: the per-merchant counters (kept in
 * each movement's transaction) minus, for a pinned `before_id`, the few movements at or above it — an
 * index range on movements_by_merchant_and_id.
 */
export async function countMovements(tx: Queryable, filter: MovementFilter): Promise<number> {
  const { rows } = await tx.query<{ total: number }>(
    `select (select coalesce(sum(movement_count), 0)
               from movement_counters
              where business_code = $1::bigint and ($2::text is null or type = $2::text))
          - (case when $3::bigint is null then 0 else
              (select count(*) from movements
                where business_code = $1::bigint and id >= $3::bigint and ($2::text is null or type = $2::text))
             end) as total`,
    [filter.businessCode, filter.type, filter.beforeId],
  );
  return Number(rows[0]!.total);
}

/**
 * `limit` movements matching `filter`, newest first (date desc, id desc), after skipping `skip` of them
 * counted from the newest end (`fromOldest: false`) or from the oldest end (`fromOldest: true`, rows still
 * returned newest first). Reading a far page from the end it is near keeps the OFFSET short on either
 * side of a history of millions: both directions walk the same index (movements_history or
 * movements_history_by_type), forwards or backwards.
 */
export async function findMovementsPage(
  tx: Queryable,
  filter: MovementFilter,
  page: { skip: number; limit: number; fromOldest: boolean },
): Promise<MovementRow[]> {
  const direction = page.fromOldest ? 'asc' : 'desc';
  // The type is spelled into the SQL, not left to a `$n is null or …` test, so the planner always sees
  // which of the two history indexes matches.
  const typeCondition = filter.type === null ? '' : `and type = '${filter.type === 'payment' ? 'payment' : 'transfer'}'`;
  const { rows } = await tx.query<MovementRow>(
    `select ${MOVEMENT_COLUMNS} from movements
      where business_code = $1::bigint ${typeCondition}
        and ($4::bigint is null or id < $4::bigint)
      order by created_at ${direction}, id ${direction}
      limit $2::integer offset $3::integer`,
    [filter.businessCode, page.limit, page.skip, filter.beforeId],
  );
  return page.fromOldest ? rows.reverse() : rows;
}
