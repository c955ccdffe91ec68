-- Versions that order the money snapshots proxies hold: a proxy keeps the
-- newest (balance, version) it has seen, so a stale cached balance never
-- replaces a newer one in the shared hold store. Bumped by trigger so every
-- writer (credits, usage, key edits) moves them without knowing about it.
ALTER TABLE workspaces ADD COLUMN balance_version bigint NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION tollgate_bump_balance_version() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.balance_usd IS DISTINCT FROM OLD.balance_usd THEN NEW.balance_version := OLD.balance_version + 1; END IF; RETURN NEW; END $$;
CREATE TRIGGER workspaces_balance_version BEFORE UPDATE ON workspaces FOR EACH ROW EXECUTE FUNCTION tollgate_bump_balance_version();

CREATE FUNCTION tollgate_bump_key_version() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.version := OLD.version + 1; RETURN NEW; END $$;
CREATE TRIGGER api_keys_version BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION tollgate_bump_key_version();
