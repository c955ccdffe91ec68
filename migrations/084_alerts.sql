-- Money alerts. The admin of a workspace names webhook URLs and a balance
-- threshold; settlement records each crossing (a key's spend passing 50, 80
-- or 100 % of its budget, the balance falling below the threshold) in the
-- transaction that moved the money, with one delivery row per endpoint: the
-- durable outbox a separate loop sends from until the receiver answers 2xx.
ALTER TABLE workspaces ADD COLUMN alert_balance_below_usd numeric(32, 15);

CREATE TABLE alert_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  url text NOT NULL,
  -- The signing secret, sealed under SECRETS_KEY: it must be read back to sign.
  secret_sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_endpoints_workspace_idx ON alert_endpoints (workspace_id);

-- One row per crossing; its id is the event id every delivery of it carries.
CREATE TABLE alert_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('key.budget_crossed', 'workspace.balance_below')),
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX alert_events_workspace_idx ON alert_events (workspace_id, created_at);

CREATE TABLE alert_deliveries (
  event_id uuid NOT NULL REFERENCES alert_events (id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES alert_endpoints (id) ON DELETE CASCADE,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  delivered_at timestamptz,
  last_status integer,
  last_error text,
  PRIMARY KEY (event_id, endpoint_id)
);
CREATE INDEX alert_deliveries_due_idx ON alert_deliveries (next_attempt_at) WHERE delivered_at IS NULL;
