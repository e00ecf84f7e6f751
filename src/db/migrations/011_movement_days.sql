-- 011: movement counts per merchant, type and UTC day, in place of one counter per merchant and type.
-- A history page's `total` stays a sum of a few rows (at most 366 a year per type), and a page anywhere in
-- the history, the middle of a million movements too, is found from these counts: the day it starts in
-- is the newest day whose newer days hold no more movements than the page skips, and the OFFSET walks that
-- day's movements only, never every movement newer (or older) than the page.
--
-- Days are those of the movement's created_at, the history's order (date desc, id desc), not of when the
-- row was inserted: every movement of a newer day comes before every movement of an older one on the
-- page, so the counts of the newer days say exactly how many movements a page skips before its day,
-- whatever order the movements were written in.
create table movement_days (
  business_code bigint not null references merchants (business_code),
  type text not null constraint movement_days_type_valid check (type in ('payment', 'transfer', 'refund')),
  -- The start of the movement's UTC day: date_bin('1 day', created_at, timestamptz '2000-01-01 00:00:00+00').
  -- date_bin counts a day as 24 hours in any session time zone, so the day ends at day + interval '24 hours'
  -- (not '1 day', which is 23 or 25 hours across a daylight-saving change in the session's zone).
  day timestamptz not null
    constraint movement_days_day_aligned check (day = date_bin('1 day', day, timestamptz '2000-01-01 00:00:00+00')),
  -- A row is written with the day's first movement and only grows (movements are immutable): a day
  -- without movements has no row, and the ledger check compares the rows with the movements one to one.
  movement_count bigint not null constraint movement_days_count_positive check (movement_count > 0),
  constraint movement_days_pkey primary key (business_code, type, day)
);

-- Backfill: the counts of every movement recorded so far. The per-merchant counters they replace said
-- the same totals; they go.
insert into movement_days (business_code, type, day, movement_count)
select business_code, type, date_bin('1 day', created_at, timestamptz '2000-01-01 00:00:00+00'), count(*)
  from movements
 group by 1, 2, 3;

drop table movement_counters;
