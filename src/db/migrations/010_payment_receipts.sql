-- Receipts of multi-use QRs (docs/qr.md#receipts). A multi-use QR takes many payers' payments; its hosted
-- receipt shows a payer only the payment their own browser made. The pay page's form gives that browser a
-- random receipt key in a cookie and keeps only its SHA-256 (hex) here, so neither a database reader nor another
-- payer can produce the cookie. Payments made in a bank's app have none (the bank's app is their receipt).
alter table qr_payments add column receipt_key_hash text
  constraint qr_payments_receipt_key_hash_is_sha256 check (receipt_key_hash ~ '^[0-9a-f]{64}$');

create unique index qr_payments_by_receipt_key on qr_payments (receipt_key_hash) where receipt_key_hash is not null;
