-- 012: a webhook delivery is written with its event, in the transaction of the change the event reports,
-- instead of by a fan-out worker afterwards. That worker updated every event once more (published_at) in
-- a transaction of its own, about one per batch of transfers (BENCHMARKS.md); now events are never
-- changed once written, like the journal, and a payment's receipt is one hop nearer.
--
-- The deliveries of a statement's events are inserted by one statement-level trigger: each event and
-- every enabled, undeleted endpoint of its owner that takes its type (the fan-out's query, over the
-- statement's own rows). The index webhook_endpoints_by_owner makes it a probe per owner. Whoever writes
-- an event — any capability, through events.emit — gets its deliveries without knowing webhooks exist.
create function webhook_deliveries_of_new_events() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at, updated_at)
  select e.id, w.id, e.created_at, e.created_at, e.created_at
    from new_events e
    join webhook_endpoints w on w.owner_kind = e.owner_kind and w.owner_id = e.owner_id
   where w.status = 'enabled' and w.deleted_at is null
     and (w.event_types @> array['*']::text[] or w.event_types @> array[e.type]::text[]);
  return null;
end $$;

create trigger events_deliveries after insert on events
  referencing new table as new_events
  for each statement execute function webhook_deliveries_of_new_events();

-- Events the retired worker had not fanned out yet get their deliveries now, as it would have given them.
insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at, updated_at)
select e.id, w.id, now(), now(), now()
  from events e
  join webhook_endpoints w on w.owner_kind = e.owner_kind and w.owner_id = e.owner_id
 where e.published_at is null and w.status = 'enabled' and w.deleted_at is null
   and (w.event_types @> array['*']::text[] or w.event_types @> array[e.type]::text[])
on conflict on constraint webhook_deliveries_event_endpoint_unique do nothing;

-- published_at stays for one release, for processes of the version before this migration that are still
-- running during a rolling deploy: their emits read it back, and their fan-out looks for events without
-- it. Every event now has it from the start, so that fan-out finds nothing to do, and the deliveries of
-- their events come from the trigger. A later migration drops the column and events_unpublished.
update events set published_at = now() where published_at is null;
alter table events alter column published_at set default now();

-- Events are never changed once written. Row-level, so the old fan-out's UPDATE, which now matches no
-- row, is not refused while old processes drain.
create function events_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception 'events are append-only: % on % is refused', tg_op, tg_table_name using errcode = '55000';
end $$;

create trigger events_append_only before update or delete on events
  for each row execute function events_refuse_change();
create trigger events_no_truncate before truncate on events
  for each statement execute function events_refuse_change();
