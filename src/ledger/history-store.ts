// SQL of the movement history (docs/api-reference.md#movements): reads of the movement_history view, where
// a transfer's or refund's movement shows its current status and movements themselves never change.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';

export type MovementType = 'payment' | 'transfer' | 'refund' | 'fee';
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
  /** The fee charged on a payment or transfer movement (0 when none). */
  fee_centavos: Centavos;
  /** A fee movement's: what it was charged on, and that payment's or transfer's id; null for other types. */
  charged_on: 'payment' | 'transfer' | null;
  charged_on_id: number | null;
}

const MOVEMENT_COLUMNS = 'id, business_code, type, amount_centavos, currency, status, reference, snapshot, created_at, fee_centavos, charged_on, charged_on_id';

/** A merchant's movement as it was opened (its type and signed amount), read from the table: no status needed. */
export async function findOpenedMovement(
  tx: Queryable, businessCode: number, movementId: number,
): Promise<Pick<MovementRow, 'id' | 'type' | 'amount_centavos' | 'fee_centavos'> | undefined> {
  const { rows } = await tx.query<Pick<MovementRow, 'id' | 'type' | 'amount_centavos' | 'fee_centavos'>>(
    'select id, type, amount_centavos, fee_centavos from movements where id = $2::bigint and business_code = $1::bigint',
    [businessCode, movementId],
  );
  return rows[0];
}

/** Which movements a history page counts and shows (docs/api-reference.md#movements). */
export interface MovementFilter {
  businessCode: number;
  /** null: every type. */
  type: MovementType | null;
  /** Only movements with `id < beforeId` (a pinned, stable history); null: all. */
  beforeId: number | null;
}

/** The start of a movement's UTC day, as movement_days keys it (migration 011); a day ends 24 hours later. */
const DAY_OF = (column: string) => `date_bin('1 day', ${column}, timestamptz '2000-01-01 00:00:00+00')`;

const TYPE_LITERALS: Record<MovementType, string> = { payment: "'payment'", transfer: "'transfer'", refund: "'refund'", fee: "'fee'" };

/** A page of the history and how many movements match its filter, read in one snapshot. */
export interface MovementsPage {
  rows: MovementRow[];
  /** The sum of the matching per-day counts (less a pinned `before_id`'s newer movements), not a count. */
  total: number;
}

/**
 * `limit` movements matching `filter`, newest first (date desc, id desc), after skipping the `skip`
 * newest, and the filter's `total`. One statement, so one snapshot (on a replica too) and one round trip:
 *
 * 1. The merchant's per-day counts (movement_days, kept in each movement's statement; at most 366 rows a
 *    year per type), summed over types without a type filter, less the movements at or above a pinned
 *    `before_id` (an index range on movements_by_merchant_and_id), grouped by their day, give `total` —
 *    without counting the history.
 * 2. Page 1 (`skip` 0), the page a dashboard or a POS polls, is read straight down the history index
 *    (movements_history or movements_history_by_type): nothing to skip, nothing to plan.
 * 3. A deeper page sums the counts newest day first, which gives each day's position in the history:
 *    `newer` movements come before its first. Days are those of created_at, the page order's first key,
 *    so every movement of a newer day comes before an older day's, whatever order the rows were inserted
 *    in. They give the day the page's first movement (position `skip`) is in, and the day its last one is
 *    in. The page's ids are read from the history index from whichever end is nearer: downwards from the
 *    end of the first movement's day, skipping the movements of that day newer than the page, or upwards
 *    from the start of the last movement's day, skipping those of that day older than the page. The
 *    OFFSET walks at most half a day of one merchant's movements, wherever the page is — the middle of a
 *    million movements, the last page — and a page that spans days goes on into the next one in the
 *    same index walk. `skip` at or past the end finds no day: an empty page.
 * 4. Only the page's rows are read through movement_history for their transfer's or refund's status.
 */
export async function findMovementsPage(
  tx: Queryable,
  filter: MovementFilter,
  page: { skip: number; limit: number },
): Promise<MovementsPage> {
  // The type, whether the history is pinned and whether the page is the first are spelled into the SQL,
  // not left to `$n is null or …` tests: each variant is its own prepared statement, so the generic plan
  // PostgreSQL settles on after a few runs is made for its case.
  const typeCondition = filter.type === null ? '' : `and type = ${TYPE_LITERALS[filter.type]}`;
  const pinned = filter.beforeId !== null;
  const belowPin = pinned ? 'and id < $4::bigint' : '';
  const pageIds = page.skip === 0
    ? `select id from movements
        where business_code = $1::bigint ${typeCondition} ${belowPin}
        order by created_at desc, id desc
        limit $2::integer`
    // `plan` is one row (none past the end). The index walks read it through scalar subqueries, computed
    // once before the walk: the day's bound is then an index condition, and the walk not taken is gated
    // off (a one-time filter) and never runs.
    : `(select id from movements
          where business_code = $1::bigint ${typeCondition}
            and (select newer_in_day <= older_in_day from plan)
            and created_at < (select first_day_end from plan)
            ${belowPin}
          order by created_at desc, id desc
          limit (select movements from plan) offset (select newer_in_day from plan))
        union all
        (select id from movements
          where business_code = $1::bigint ${typeCondition}
            and (select newer_in_day > older_in_day from plan)
            and created_at >= (select last_day_start from plan)
            ${belowPin}
          order by created_at, id
          limit (select movements from plan) offset (select older_in_day from plan))`;
  const { rows } = await tx.query<MovementRow & { total: string }>(
    `with days as (
       select day, sum(movement_count)::bigint as movements
         from movement_days
        where business_code = $1::bigint ${typeCondition}
        group by day
     ), pinned as (${pinned ? `
       select ${DAY_OF('created_at')} as day, count(*) as movements
         from movements
        -- the ids through movements_by_merchant_and_id, whose range they are: a generic plan, guessing few
        -- movements per merchant, would otherwise walk all of a merchant's history in movements_history
        where id in (select id from movements where business_code = $1::bigint and id >= $4::bigint) ${typeCondition}
        group by 1` : `
       select null::timestamptz as day, 0::bigint as movements where false`}
     ), positioned as (
       select day, movements, (sum(movements) over (order by day desc) - movements)::bigint as newer,
              (sum(movements) over ())::bigint as total
         from (select d.day, d.movements - coalesce(p.movements, 0) as movements
                 from days d left join pinned p on p.day = d.day) counted
     ), wanted as (
       -- positions, newest first, of the page's first and last movement
       select $3::bigint as first, least($3::bigint + $2::integer, max(total)) - 1 as last from positioned
     ), plan as (
       select f.day + interval '24 hours' as first_day_end, w.first - f.newer as newer_in_day,
              l.day as last_day_start, l.newer + l.movements - 1 - w.last as older_in_day,
              w.last - w.first + 1 as movements
         from wanted w
         join positioned f on f.newer <= w.first and w.first < f.newer + f.movements
         join positioned l on l.newer <= w.last and w.last < l.newer + l.movements
     ), page as (
       select ${MOVEMENT_COLUMNS} from movement_history where id = any(array(${pageIds}))
     )
     -- the total on every row, and on a row of its own when the page is empty
     select (select coalesce(max(total), 0) from positioned) as total, page.*
       from (select) one left join page on true
      order by page.created_at desc, page.id desc`,
    pinned ? [filter.businessCode, page.limit, page.skip, filter.beforeId] : [filter.businessCode, page.limit, page.skip],
  );
  const total = Number(rows[0]!.total);
  return { rows: rows[0]!.id === null ? [] : rows.map(({ total: _total, ...row }) => row), total };
}
