-- Keys over time (docs/keys.md): a budget per UTC calendar period, a
-- rotated-out secret that works until its grace ends, and the org setting
-- that lets members change their own personal keys.
--
-- A key has one budget: budget_period NULL means budget_usd is a lifetime
-- total (spend_usd counts against it); day/week/month means budget_usd is
-- per period and period_spend_usd, the spend of the period starting at
-- period_started_at, counts against it. spend_usd stays the lifetime total.
-- budget_changed_at orders the proxies' budget snapshots across a change of
-- period (proxy/money/snapshot.ts).
ALTER TABLE api_keys
  ADD COLUMN budget_period text CHECK (budget_period IN ('day', 'week', 'month')),
  ADD COLUMN period_started_at timestamptz,
  ADD COLUMN period_spend_usd numeric(32, 15) NOT NULL DEFAULT 0,
  ADD COLUMN budget_changed_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN previous_key_hash text,
  ADD COLUMN previous_expires_at timestamptz,
  ADD CONSTRAINT api_keys_previous_pair CHECK ((previous_key_hash IS NULL) = (previous_expires_at IS NULL));

CREATE UNIQUE INDEX api_keys_previous_hash_idx ON api_keys (previous_key_hash) WHERE previous_key_hash IS NOT NULL;

ALTER TABLE orgs ADD COLUMN members_edit_own_keys boolean NOT NULL DEFAULT false;
