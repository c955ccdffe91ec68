-- The latest deployment-health report of each proxy process (issue 26): the
-- cooldowns and circuits live in the proxies (or their Redis), and each proxy
-- sends what it sees every few seconds so the console's model page can show
-- it. `deployments` is the report as sent (`[{id, state, back_in_ms,
-- failures}]`); `reported_at` is when the control plane received it, so a
-- stopped proxy's last word ages out. Rows of proxies gone for a day are
-- removed as new reports arrive.
CREATE TABLE deployment_health_reports (
  proxy_id text PRIMARY KEY,
  reported_at timestamptz NOT NULL,
  deployments jsonb NOT NULL
);
CREATE INDEX deployment_health_reports_reported_at ON deployment_health_reports (reported_at);
