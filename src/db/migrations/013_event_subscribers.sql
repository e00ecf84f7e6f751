-- 013: one definition of who takes an event — the enabled, undeleted webhook endpoints of its owner whose
-- filter names its type or '*' — used by the trigger that writes an event's deliveries (012) and by the
-- emit, which wakes the webhook dispatcher only when one of its events has a subscriber. Before this, every
-- emit's commit woke the dispatcher, and a claim that found nothing ran about once per batch of transfers,
-- for merchants without any endpoint too (BENCHMARKS.md, "A wake only for events someone takes").
--
-- Language sql and stable, so the planner inlines it where it is used: still a probe of
-- webhook_endpoints_by_owner per event.
create function event_subscribers(owner_kind text, owner_id bigint, event_type text) returns setof text
language sql stable as $$
  select w.id
    from webhook_endpoints w
   where w.owner_kind = $1 and w.owner_id = $2 and w.status = 'enabled' and w.deleted_at is null
     and (w.event_types @> array['*']::text[] or w.event_types @> array[$3]::text[])
$$;

create or replace function webhook_deliveries_of_new_events() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at, updated_at)
  select e.id, s.endpoint_id, e.created_at, e.created_at, e.created_at
    from new_events e
   cross join lateral event_subscribers(e.owner_kind, e.owner_id, e.type) as s(endpoint_id);
  return null;
end $$;
