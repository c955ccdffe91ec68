-- The ledger is the money trail: like the audit log, it outlives what it
-- describes, so it holds no foreign key (and no cascade) to workspaces.
-- Usage rows take their workspace from the key row in the same statement,
-- and credits from a workspace just read, so the key was only ever a check
-- run per inserted row; on the embedded store that check cost about as much
-- as the insert itself, on every settled request.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_workspace_id_fkey;
