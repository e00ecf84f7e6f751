// SQL of the movement history (docs/api-reference.md#movements): reads of the movement_history view, where
// a transfer's or refund's movement shows its current status and movements themselves never change.
import type { Queryable } from '../db/database.ts';
import type { Centavos } from '../money.ts';

export type MovementType = 'payment' | 'transfer' | 'refund';
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
}

const MOVEMENT_COLUMNS = 'id, business_code, type, amount_centavos, currency, status, reference, snapshot, created_at';

/** A merchant's movement as it was opened (its type and signed amount), read from the table: no status needed. */
export async function findOpenedMovement(
  tx: Queryable, businessCode: number, movementId: number,
): Promise<Pick<MovementRow, 'id' | 'type' | 'amount_centavos'> | undefined> {
  const { rows } = await tx.query<Pick<MovementRow, 'id' | 'type' | 'amount_centavos'>>(
    'select id, type, amount_centavos from movements where id = $2::bigint and business_code = $1::bigint',
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

/**
 * How many movements match `filter`, without counting the history: the per-merchant counters (kept in
 * each movement's statement) minus, for a pinned `before_id`, the few movements at or above it — an
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

const TYPE_LITERALS: Record<MovementType, string> = { payment: "'payment'", transfer: "'transfer'", refund: "'refund'" };

/**
 * `limit` movements matching `filter`, newest first (date desc, id desc), after skipping `skip` of them
 * counted from the newest end (`fromOldest: false`) or from the oldest end (`fromOldest: true`, rows still
 * returned newest first). Reading a far page from the end it is near keeps the OFFSET short on either
 * side of a history of millions: both directions walk the same index (movements_history or
 * movements_history_by_type), forwards or backwards, and only the page's rows join their transfer or refund.
 */
export async function findMovementsPage(
  tx: Queryable,
  filter: MovementFilter,
  page: { skip: number; limit: number; fromOldest: boolean },
): Promise<MovementRow[]> {
  const direction = page.fromOldest ? 'asc' : 'desc';
  // The type is spelled into the SQL, not left to a `$n is null or …` test, so the planner always sees
  // which of the two history indexes matches.
  const typeCondition = filter.type === null ? '' : `and type = ${TYPE_LITERALS[filter.type]}`;
  // The page's ids are chosen on movements alone, so the OFFSET's skipped rows never join anything.
  const { rows } = await tx.query<MovementRow>(
    `select ${MOVEMENT_COLUMNS} from movement_history
      where id = any(array(
        select id from movements
         where business_code = $1::bigint ${typeCondition}
           and ($4::bigint is null or id < $4::bigint)
         order by created_at ${direction}, id ${direction}
         limit $2::integer offset $3::integer))
      order by created_at ${direction}, id ${direction}`,
    [filter.businessCode, page.limit, page.skip, filter.beforeId],
  );
  return page.fromOldest ? rows.reverse() : rows;
}
