-- 018: the operator's word on a refund a bank rail cannot pay back by itself (docs/rails.md; POST
-- /admin/v1/refunds/{id}/resolve, mps refund resolve). Banco Económico offers no reversal and gives the
-- payer's account masked, so such a refund stays PENDING until the operator records what happened; the
-- note they give is kept on it. Additive: processes of the previous version never write it.
alter table refunds add column resolution_note text
  constraint refunds_resolution_note_length check (resolution_note is null or char_length(resolution_note) between 1 and 500);
