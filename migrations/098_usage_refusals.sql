-- Calls Tollgate itself refused (budget, balance, rate limit, model access,
-- key, bad request) are usage rows too, at no cost, so "why did my agent
-- stop" is answered in the usage console. A proxy counts them per key, model,
-- reason, format and status over a short window and reports each group as one
-- row: refused_count calls, the first of them request_id. Rows of served
-- calls leave both null.
ALTER TABLE ledger_entries
  ADD COLUMN refusal_reason text CHECK (refusal_reason IN ('budget', 'balance', 'rate_limit', 'model_access', 'key', 'bad_request')),
  ADD COLUMN refused_count integer CHECK (refused_count > 0),
  ADD CONSTRAINT ledger_entries_refusal_check CHECK ((refusal_reason IS NULL) = (refused_count IS NULL));

-- The usage aggregates count refusals apart: keep them answered from the index alone.
DROP INDEX ledger_entries_usage_time_idx;
CREATE INDEX ledger_entries_usage_time_idx ON ledger_entries (workspace_id, created_at)
  INCLUDE (key_id, model, amount_usd, input_tokens, output_tokens, status, cache_read_tokens, cache_write_tokens, cache_saved_usd, refusal_reason, refused_count)
  WHERE kind = 'usage';
