-- A console session is either a token (bootstrap, `tollgate console-token`: exchangeable for a browser
-- session) or a browser session (from an exchange or an SSO login: never exchangeable again). A browser
-- session traded for a token names it as parent: it ends no later than the parent and is revoked with it.
ALTER TABLE console_sessions ADD COLUMN kind text NOT NULL DEFAULT 'token' CHECK (kind IN ('token', 'browser'));
ALTER TABLE console_sessions ADD COLUMN parent_id uuid REFERENCES console_sessions (id) ON DELETE CASCADE;
CREATE INDEX console_sessions_parent_idx ON console_sessions (parent_id) WHERE parent_id IS NOT NULL;
