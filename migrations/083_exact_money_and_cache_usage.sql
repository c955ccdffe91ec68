-- Money to the femtodollar (fifteen decimals): a price of up to six decimals
-- per million tokens, times the cache multipliers, costs a whole number of
-- femtodollars per token, so every call is billed exactly. Seventeen digits
-- stay before the point.
ALTER TABLE ledger_entries ALTER COLUMN amount_usd TYPE numeric(32, 15);
ALTER TABLE workspaces ALTER COLUMN balance_usd TYPE numeric(32, 15);
ALTER TABLE api_keys ALTER COLUMN spend_usd TYPE numeric(32, 15), ALTER COLUMN budget_usd TYPE numeric(32, 15);

-- The split of a call's prompt the way providers price it: cache reads, cache
-- writes (all of them; the 1-hour ones again on their own), server-side web
-- searches, and what caching saved against the full input price (negative
-- when a call wrote more than it read). Rows written before read as zero.
ALTER TABLE ledger_entries
  ADD COLUMN cache_read_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN cache_write_1h_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN web_search_requests integer NOT NULL DEFAULT 0,
  ADD COLUMN cache_saved_usd numeric(32, 15) NOT NULL DEFAULT 0;

-- The usage aggregates sum the new columns too; keep them answered from the index alone.
DROP INDEX ledger_entries_usage_time_idx;
CREATE INDEX ledger_entries_usage_time_idx ON ledger_entries (workspace_id, created_at)
  INCLUDE (key_id, model, amount_usd, input_tokens, output_tokens, status, cache_read_tokens, cache_write_tokens, cache_saved_usd)
  WHERE kind = 'usage';
