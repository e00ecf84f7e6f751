-- 022: each merchant's price plan (docs/fees.md; contract §15.1). The service writes a new merchant's plan
-- from FEE_QR and FEE_TRANSFER; the defaults here (all zero) are the plan of every merchant created before
-- this migration, which charges nothing, as before.
--
-- Additive: processes of the previous version never read these columns.
alter table merchants
  -- qr_percent in hundredths of a percent (150 = 1.50 %): a whole number, never a binary fraction
  add column fee_qr_basis_points integer not null default 0
    constraint merchants_fee_qr_basis_points_range check (fee_qr_basis_points between 0 and 1000),
  add column fee_qr_fixed_centavos bigint not null default 0
    constraint merchants_fee_qr_fixed_range check (fee_qr_fixed_centavos between 0 and 10000),
  add column fee_transfer_fixed_centavos bigint not null default 0
    constraint merchants_fee_transfer_fixed_range check (fee_transfer_fixed_centavos between 0 and 10000);
