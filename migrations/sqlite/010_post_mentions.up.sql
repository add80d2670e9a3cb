-- 010 (PostgreSQL's 014): the actors a post mentions (its Mention tags), a
-- row per (post, actor), with the post's published time (Unix nanoseconds)
-- so that an actor's mentions list newest first from one index. Written
-- with the post, deleted with it. The secondary index (by actor and time)
-- is EnsureIndexes'.
CREATE TABLE post_mentions (
    object_uri TEXT    NOT NULL,
    actor_uri  TEXT    NOT NULL,
    published  INTEGER NOT NULL,
    PRIMARY KEY (object_uri, actor_uri)
) WITHOUT ROWID;
