-- 028: a merchant's payments, newest first (the console's payments page, docs/console.md): the payments
-- were read only by QR (qr_payments_of_qr) and by movement; a merchant-wide list walks this index.
--
-- Additive: processes of the previous version never read it.

create index qr_payments_by_merchant on qr_payments (business_code, id desc);
