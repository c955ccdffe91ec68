-- Pending SSO logins (OIDC authorization requests), one row per redirect to
-- the identity provider. Looked up by the SHA-256 of `state` and deleted on
-- first use, so a replayed callback finds nothing. The nonce and PKCE
-- verifier are sealed under a key derived from a random value that only the
-- browser's cookie holds: the row alone cannot complete a login, and a
-- callback from another browser (login CSRF) cannot open it.
CREATE TABLE sso_login_states (
  state_hash text PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  sealed_checks text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX sso_login_states_expires_idx ON sso_login_states (expires_at);
