-- A compaction a proxy performed for a Responses client (Codex shrinking a
-- long conversation) is billed like any call and shown in usage as its own
-- operation, so a team sees what its summaries cost apart from its turns.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_format_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_format_check CHECK (format IN ('chat', 'messages', 'responses', 'embeddings', 'compaction'));
