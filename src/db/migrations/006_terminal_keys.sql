-- Terminal keys: merchant keys a POS terminal or kiosk holds, limited to QRs and their payments (they cannot
-- move money out). `scope` says what a key may do; only a merchant's key can be a terminal key.
alter table api_keys add column scope text not null default 'full'
  constraint api_keys_scope_valid check (scope in ('full', 'terminal'));
alter table api_keys add constraint api_keys_terminal_keys_are_merchant_keys check (scope = 'full' or owner_kind = 'merchant');
