-- Which deployment (`provider/upstream_model`) served a call; `model` stays
-- the alias it was billed as (a fallback alias when one answered). Null on
-- rows written before this migration or by a proxy that does not report it.
ALTER TABLE ledger_entries ADD COLUMN deployment text;
