-- 016: which rail a QR and a payment came through, and the bank's own id of each (docs/rails.md). A bank's
-- payment reaches the service three ways — its callback, the status poll, the daily list — and is recorded
-- once: the unique index on (rail, rail_reference) refuses a second payment with the same bank
-- transaction id, in the transaction that would credit it, however the three race.
--
-- Additive, like 012, 014 and 015: processes of the previous version write neither column, and the
-- defaults describe what they write (the sandbox rail, no bank id).
alter table simple_qrs
  add column rail text not null default 'sandbox' constraint simple_qrs_rail_valid check (rail in ('sandbox', 'baneco')),
  add column rail_reference text constraint simple_qrs_rail_reference_length check (rail_reference is null or char_length(rail_reference) between 1 and 100);
create unique index simple_qrs_rail_reference_unique on simple_qrs (rail, rail_reference) where rail_reference is not null;

alter table qr_payments
  add column rail text not null default 'sandbox' constraint qr_payments_rail_valid check (rail in ('sandbox', 'baneco')),
  add column rail_reference text constraint qr_payments_rail_reference_length check (rail_reference is null or char_length(rail_reference) between 1 and 100);
create unique index qr_payments_rail_reference_unique on qr_payments (rail, rail_reference) where rail_reference is not null;
