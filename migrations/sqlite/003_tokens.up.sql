-- 003: bearer tokens of root users, stored by hash (SPEC §6, client API).
CREATE TABLE tokens (
    hash       TEXT NOT NULL PRIMARY KEY, -- hex SHA-256 of the token, never the token
    user_id    TEXT NOT NULL,
    created_at INTEGER
) STRICT;
