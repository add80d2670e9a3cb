-- 018: the Mastodon-compatible client API (issue 34). OAuth 2
-- applications, the one-time grants of the authorization page (consents
-- and codes) and access tokens; every secret is kept only as its hex
-- SHA-256 (the client secret in secret_hash, grants and tokens by hash).
CREATE TABLE oauth_apps (
    client_id     TEXT NOT NULL PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    secret_hash   TEXT NOT NULL,
    name          TEXT NOT NULL,
    website       TEXT NOT NULL DEFAULT '',
    redirect_uris TEXT NOT NULL, -- one per line
    scopes        TEXT NOT NULL, -- space-separated
    created_at    INTEGER
) STRICT;

CREATE TABLE oauth_grants (
    hash             TEXT NOT NULL PRIMARY KEY,
    kind             TEXT NOT NULL CHECK (kind IN ('consent', 'code')),
    client_id        TEXT NOT NULL,
    user_id          TEXT NOT NULL,
    avatar_id        TEXT NOT NULL DEFAULT '',
    redirect_uri     TEXT NOT NULL,
    scopes           TEXT NOT NULL,
    challenge        TEXT NOT NULL DEFAULT '',
    challenge_method TEXT NOT NULL DEFAULT '',
    created_at       INTEGER,
    expires_at       INTEGER NOT NULL,
    used_at          INTEGER
) STRICT;
CREATE INDEX oauth_grants_expires ON oauth_grants (expires_at);

CREATE TABLE oauth_tokens (
    hash       TEXT NOT NULL PRIMARY KEY,
    client_id  TEXT NOT NULL,
    user_id    TEXT NOT NULL DEFAULT '',
    avatar_id  TEXT NOT NULL DEFAULT '',
    scopes     TEXT NOT NULL,
    grant_hash TEXT NOT NULL DEFAULT '',
    created_at INTEGER
) STRICT;
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_hash) WHERE grant_hash <> '';

-- Account ids of remote actors: one per actor for good, each id one
-- actor's.
CREATE TABLE account_ids (
    actor_uri TEXT NOT NULL PRIMARY KEY,
    id        TEXT NOT NULL UNIQUE
) STRICT;
