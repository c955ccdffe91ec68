-- When the proxy received each call (for a row of refused calls, the first
-- of them): the request log shows it, where created_at is when the control
-- plane recorded the call, after the answer ended (and, while the control
-- plane was unreachable, maybe much later). Null on rows written before, and
-- by a proxy that does not send it; the log then shows created_at.
ALTER TABLE ledger_entries ADD COLUMN started_at timestamptz;
