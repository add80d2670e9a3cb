-- 003: bearer tokens of root users, stored by hash (SPEC §6, client API).
BEGIN;

CREATE TABLE tokens (
    hash       text NOT NULL, -- hex SHA-256 of the token, never the token
    user_id    text NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT tokens_pkey PRIMARY KEY (hash)
);

COMMIT;
