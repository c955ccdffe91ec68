-- What the usage console shows per request beyond money and tokens: the wire
-- format the client used, the HTTP status it got, and how long the call took
-- (ms, from the proxy receiving it to the answer's end). Null on rows written
-- before this migration or by a proxy that does not report them.
ALTER TABLE ledger_entries
  ADD COLUMN format text CHECK (format IN ('chat', 'messages')),
  ADD COLUMN status integer,
  ADD COLUMN latency_ms integer;

-- The usage console's aggregates read a workspace's usage rows over a time
-- range; carrying the summed columns in the index lets them come from the
-- index alone instead of visiting every ledger row.
CREATE INDEX ledger_entries_usage_time_idx ON ledger_entries (workspace_id, created_at)
  INCLUDE (key_id, model, amount_usd, input_tokens, output_tokens, status)
  WHERE kind = 'usage';
