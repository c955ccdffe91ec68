-- Claude Code's gateway sign-in (/login): an OAuth device authorization
-- (RFC 8628) whose access tokens are personal API keys bound to a sign-in
-- session, so the proxy resolves and revokes them exactly as keys.

-- Which team (and with it workspace) and which per-session budget a
-- signed-in developer gets; without a row the org does not offer sign-in.
CREATE TABLE gateway_signin_settings (
  org_id uuid PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
  team_id uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  budget_usd numeric(20, 9),
  updated_at timestamptz NOT NULL
);

-- One pending device authorization. The device code is kept as SHA-256 only;
-- the user code is short and typed by a person, so guesses are counted.
CREATE TABLE gateway_device_grants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  device_code_hash text NOT NULL UNIQUE,
  user_code text NOT NULL UNIQUE,
  client_version text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'used')),
  org_id uuid REFERENCES orgs (id) ON DELETE CASCADE,
  user_id uuid REFERENCES users (id) ON DELETE CASCADE,
  interval_s integer NOT NULL,
  last_polled_at timestamptz,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);

-- A signed-in device: the family of its refresh tokens and access keys.
CREATE TABLE gateway_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  team_id uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  client_version text,
  revoked_at timestamptz,
  revoked_reason text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX gateway_sessions_user_idx ON gateway_sessions (org_id, user_id);

CREATE TABLE gateway_refresh_tokens (
  token_hash text PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES gateway_sessions (id) ON DELETE CASCADE,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX gateway_refresh_tokens_session_idx ON gateway_refresh_tokens (session_id);

-- SET NULL, not CASCADE: a key row is history the ledger names; revocation happens before any delete.
ALTER TABLE api_keys ADD COLUMN gateway_session_id uuid REFERENCES gateway_sessions (id) ON DELETE SET NULL;
CREATE INDEX api_keys_gateway_session_idx ON api_keys (gateway_session_id) WHERE gateway_session_id IS NOT NULL;
