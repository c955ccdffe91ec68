-- The proxy's third wire format, the OpenAI Responses API, is a format the
-- usage console shows per request like the other two.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_format_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_format_check CHECK (format IN ('chat', 'messages', 'responses'));
