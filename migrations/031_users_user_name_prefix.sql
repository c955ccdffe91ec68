-- SCIM `userName sw "…"` is a prefix LIKE on lower(user_name); under a
-- non-C collation the unique index cannot serve it, this one can.
CREATE INDEX users_org_user_name_prefix_idx ON users (org_id, lower(user_name) text_pattern_ops);
