-- 014: the actors a post mentions (its Mention tags), a row per (post,
-- actor), with the post's published time so that an actor's mentions list
-- newest first from one index. Written with the post, deleted with it.
-- The secondary index (by actor and time) is EnsureIndexes'.
BEGIN;

CREATE TABLE IF NOT EXISTS post_mentions (
    object_uri text        NOT NULL,
    actor_uri  text        NOT NULL,
    published  timestamptz NOT NULL,
    PRIMARY KEY (object_uri, actor_uri)
);

COMMIT;
