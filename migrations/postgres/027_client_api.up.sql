-- 027: the Mastodon-compatible client API (issue 34). OAuth 2
-- applications, the one-time grants of the authorization page (consents
-- and codes) and access tokens; every secret is kept only as its hex
-- SHA-256 (the client secret in secret_hash, grants and tokens by hash).
BEGIN;

CREATE TABLE IF NOT EXISTS oauth_apps (
    client_id     text        NOT NULL,
    id            text        NOT NULL,
    secret_hash   text        NOT NULL,
    name          text        NOT NULL,
    website       text        NOT NULL DEFAULT '',
    redirect_uris text[]      NOT NULL,
    scopes        text        NOT NULL, -- space-separated
    created_at    timestamptz NOT NULL,
    CONSTRAINT oauth_apps_pkey PRIMARY KEY (client_id),
    CONSTRAINT oauth_apps_id_key UNIQUE (id)
);

CREATE TABLE IF NOT EXISTS oauth_grants (
    hash             text        NOT NULL,
    kind             text        NOT NULL CHECK (kind IN ('consent', 'code')),
    client_id        text        NOT NULL,
    user_id          text        NOT NULL,
    avatar_id        text        NOT NULL DEFAULT '',
    redirect_uri     text        NOT NULL,
    scopes           text        NOT NULL,
    challenge        text        NOT NULL DEFAULT '',
    challenge_method text        NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    used_at          timestamptz,
    CONSTRAINT oauth_grants_pkey PRIMARY KEY (hash)
);
CREATE INDEX IF NOT EXISTS oauth_grants_expires ON oauth_grants (expires_at);

CREATE TABLE IF NOT EXISTS oauth_tokens (
    hash       text        NOT NULL,
    client_id  text        NOT NULL,
    user_id    text        NOT NULL DEFAULT '',
    avatar_id  text        NOT NULL DEFAULT '',
    scopes     text        NOT NULL,
    grant_hash text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    CONSTRAINT oauth_tokens_pkey PRIMARY KEY (hash)
);
CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens (grant_hash) WHERE grant_hash <> '';

-- Account ids of remote actors: one per actor for good, each id one
-- actor's.
CREATE TABLE IF NOT EXISTS account_ids (
    actor_uri text NOT NULL,
    id        text NOT NULL,
    CONSTRAINT account_ids_pkey PRIMARY KEY (actor_uri),
    CONSTRAINT account_ids_id_key UNIQUE (id)
);

COMMIT;
