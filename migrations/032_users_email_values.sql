-- SCIM `emails.value eq "…"` and `emails[type eq "work"].value eq "…"` are
-- how some identity providers match users: a GIN index over the lower-cased
-- addresses makes them a lookup instead of unpacking every user's emails.
CREATE FUNCTION user_email_values(emails jsonb) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce(array_agg(lower(e->>'value')), '{}') FROM jsonb_array_elements(emails) AS e $$;
-- fastupdate off: users are written rarely, and a pending list would make
-- every lookup scan the recent inserts until the next vacuum.
CREATE INDEX users_email_values_idx ON users USING gin (user_email_values(emails)) WITH (fastupdate = off);
