-- SCIM name.formatted is readWrite (RFC 7643 §4.1.1): what a client sends is
-- kept; NULL means none was sent and the answer derives it from the parts.
ALTER TABLE users ADD COLUMN name_formatted text;
