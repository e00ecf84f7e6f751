-- 009: QR orders (docs/api-reference.md#create-a-qr): the merchant's own order id (external_reference),
-- bounds on what a payer may enter for an editable amount, and a cap on the payments of a multi-use QR,
-- after which it is PAID. Each rule is a CHECK, so no code path can store a QR that breaks it.
alter table simple_qrs add column external_reference text
  constraint simple_qrs_external_reference_format check (external_reference ~ '^[A-Za-z0-9_.:-]{1,64}$');
alter table simple_qrs add column min_amount_centavos bigint;
alter table simple_qrs add column max_amount_centavos bigint;
alter table simple_qrs add column max_payments integer
  constraint simple_qrs_max_payments_range check (max_payments between 1 and 1000000);

alter table simple_qrs add constraint simple_qrs_amount_bounds check (
  (min_amount_centavos is null and max_amount_centavos is null) or (
    modify_amount
    and coalesce(min_amount_centavos, 10) between 10 and 10000000
    and coalesce(max_amount_centavos, 10000000) between 10 and 10000000
    and coalesce(min_amount_centavos, 10) <= coalesce(max_amount_centavos, 10000000)
    and (amount_centavos is null or amount_centavos between coalesce(min_amount_centavos, 10) and coalesce(max_amount_centavos, 10000000))));
alter table simple_qrs add constraint simple_qrs_max_payments_multi_use check (max_payments is null or is_multi_use);
alter table simple_qrs add constraint simple_qrs_within_max_payments check (max_payments is null or payments_count <= max_payments);

-- A multi-use QR is PAID once it has taken max_payments payments.
alter table simple_qrs drop constraint simple_qrs_paid_once;
alter table simple_qrs add constraint simple_qrs_paid_once check (
  status <> 'PAID' or (paid_at is not null and (
    (not is_multi_use and payments_count = 1) or (is_multi_use and payments_count = max_payments))));

create index simple_qrs_by_external_reference on simple_qrs (business_code, external_reference, created_at desc, id desc)
  where external_reference is not null;
