-- Embeddings calls are billed and shown in the usage console per request like
-- model calls, with their own format. The list also names the Responses
-- format, so the constraint is right whichever of the two changes ran last.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_format_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_format_check CHECK (format IN ('chat', 'messages', 'responses', 'embeddings'));
