-- Every usage query reads the ledger through ledger_entries_usage_time_idx
-- (workspace, time, usage rows only), and nothing reads credits by time, so
-- the plain (workspace_id, created_at) index only cost an index insert per
-- settled request: about 2 µs of the control plane's ~32 µs per request on
-- the embedded store.
DROP INDEX ledger_entries_workspace_idx;
