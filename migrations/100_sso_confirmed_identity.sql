-- Security round two, finding 3 (docs/security.md): the SSO identity an
-- account itself confirmed. An owner or admin is signed in by SSO only when
-- the identity provider's identifier equals this value; anything else that
-- set or changed `external_id` (SCIM, an import, an older release) leaves it
-- unconfirmed until a console session of that account opens the SSO link.
-- Backfilled for accounts SSO created: their external id came from their own
-- first login. SCIM-provisioned owners and admins confirm once.
ALTER TABLE users ADD COLUMN sso_confirmed_external_id text;
UPDATE users SET sso_confirmed_external_id = external_id WHERE source = 'sso' AND external_id IS NOT NULL;
