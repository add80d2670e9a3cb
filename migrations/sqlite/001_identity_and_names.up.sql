-- 001: local and remote actors, posts, follows, and the single username
-- space (SPEC §1, §3), on a new database.
--
-- SQLite is a new store: no old server ever wrote to it, so unlike
-- PostgreSQL's and Mongo's 001 there are no duplicates to remove and no
-- legacy tables to adopt; the unique keys are created with the tables.
-- golang-migrate runs the file in one transaction.
--
-- Conventions of every table: STRICT (a value of the wrong type is refused,
-- never coerced); times are INTEGER Unix nanoseconds, NULL for "none";
-- text compares in byte order (SQLite's BINARY collation, as Go compares
-- strings). The unique keys have stable names: EnsureIndexes declares the
-- same ones, and the stores' ON CONFLICT clauses need them.

CREATE TABLE root_users (
    id            TEXT NOT NULL PRIMARY KEY,
    user_name     TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    INTEGER
) STRICT;
CREATE UNIQUE INDEX root_users_user_name_key ON root_users (user_name);

-- root_user_id is NULL for the instance actor.
CREATE TABLE avatars (
    id              TEXT NOT NULL PRIMARY KEY,
    root_user_id    TEXT,
    name            TEXT NOT NULL,
    display_name    TEXT NOT NULL DEFAULT '',
    public_key_pem  TEXT NOT NULL DEFAULT '',
    private_key_pem TEXT NOT NULL DEFAULT '',
    created_at      INTEGER
) STRICT;
CREATE UNIQUE INDEX avatars_name_key ON avatars (name);
CREATE UNIQUE INDEX avatars_root_to_avatar_key ON avatars (root_user_id, id);

CREATE TABLE groups (
    id              TEXT NOT NULL PRIMARY KEY,
    owner_id        TEXT NOT NULL,
    name            TEXT NOT NULL,
    display_name    TEXT NOT NULL DEFAULT '',
    public_key_pem  TEXT NOT NULL DEFAULT '',
    private_key_pem TEXT NOT NULL DEFAULT '',
    created_at      INTEGER
) STRICT;
CREATE UNIQUE INDEX groups_name_key ON groups (name);

CREATE TABLE foreign_avatars (
    actor_uri          TEXT NOT NULL,
    public_key_id      TEXT NOT NULL DEFAULT '',
    public_key_pem     TEXT NOT NULL DEFAULT '',
    inbox              TEXT NOT NULL DEFAULT '',
    shared_inbox       TEXT NOT NULL DEFAULT '',
    preferred_username TEXT NOT NULL DEFAULT '',
    host               TEXT NOT NULL DEFAULT '',
    fetched_at         INTEGER
) STRICT;
CREATE UNIQUE INDEX foreign_avatars_actor_uri_key ON foreign_avatars (actor_uri);

CREATE TABLE posts (
    id          TEXT NOT NULL PRIMARY KEY,
    object_uri  TEXT NOT NULL,
    author_uri  TEXT NOT NULL,
    group_uri   TEXT NOT NULL DEFAULT '',
    content     TEXT NOT NULL,
    visibility  TEXT NOT NULL,
    in_reply_to TEXT NOT NULL DEFAULT '',
    published   INTEGER NOT NULL,
    local       INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE UNIQUE INDEX posts_object_uri_key ON posts (object_uri);

-- participants: the JSON array of participant URIs.
CREATE TABLE dm_posts (
    id               TEXT NOT NULL PRIMARY KEY,
    object_uri       TEXT NOT NULL,
    author_uri       TEXT NOT NULL,
    participants     TEXT NOT NULL DEFAULT '[]',
    participants_key TEXT NOT NULL,
    content          TEXT NOT NULL,
    published        INTEGER NOT NULL,
    local            INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE UNIQUE INDEX dm_posts_object_uri_key ON dm_posts (object_uri);

CREATE TABLE followers (
    follower_uri TEXT NOT NULL,
    followed_uri TEXT NOT NULL,
    state        TEXT NOT NULL,
    activity_id  TEXT NOT NULL DEFAULT '',
    created_at   INTEGER,
    updated_at   INTEGER
) STRICT;
CREATE UNIQUE INDEX followers_pair_key ON followers (follower_uri, followed_uri);

-- The single username space of personas, groups, the instance actor and
-- system names (SPEC §3). Its primary key is what arbitrates two sign-ups.
CREATE TABLE reserved_names (
    name       TEXT NOT NULL PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('persona', 'group', 'instance', 'system')),
    owner_id   TEXT NOT NULL DEFAULT '', -- '' for system names
    created_at INTEGER
) STRICT;

-- A copy of domain.FixedReservedNames() (SPEC §3) without "no-reply", which
-- is not a valid name and so needs no row; a test compares the two lists.
-- Names an operator configures, and the instance actor's own name, are
-- reserved by the application at start-up, not here.
INSERT INTO reserved_names (name, kind, owner_id, created_at)
SELECT value, 'system', '', unixepoch() * 1000000000
FROM json_each('["admin", "administrator", "root", "support", "abuse", "postmaster",
    "hostmaster", "webmaster", "security", "noreply", "info", "mod",
    "moderator", "staff", "help", "system", "instance", "api", "www"]');
