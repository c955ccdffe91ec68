-- Calls made in Google's Gemini API format are billed and shown per request
-- like the other formats, under their own format name.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_format_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_format_check CHECK (format IN ('chat', 'messages', 'responses', 'gemini', 'embeddings', 'compaction'));
