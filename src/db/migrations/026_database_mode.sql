-- 026: the mode the database belongs to (docs/upgrading.md#the-database-remembers-its-mode). The first
-- process that starts on the database (the service in any ROLE, or the CLI) records its MODE here; from
-- then on a process in the other mode refuses to run against it, in one line, instead of minting sandbox
-- keys for live merchants or serving live money with sandbox helpers (src/db/database-mode.ts).
--
-- No row until that first start: a database migrated from before 026 gets its mode from the first process
-- of the new version that starts on it, in whatever MODE that process has — start it with the right one.
--
-- Additive: processes of the previous version never read or write this table.

create table database_mode (
  -- one row at most: the key can only be true
  singleton boolean primary key default true
    constraint database_mode_singleton check (singleton),
  mode text not null
    constraint database_mode_mode_valid check (mode in ('sandbox', 'live')),
  recorded_at timestamptz not null default now()
);
